// Package certs owns tollgate's certificates:
//
//   - a self-signed CA and serving certificate kept in a directory, renewed
//     when due;
//   - the serving certificate a server presents, swapped atomically, and a
//     pair of files reloaded when they change on disk;
//   - a self-managed authority: what its Secret holds as the certificates
//     age and the CA rotates (pure), and the Secret itself, which every
//     replica serves from and only the leader changes;
//   - a CA and a client certificate it signed, as an apiserver presents to
//     a webhook that authenticates it;
//   - PEM encoding and decoding.
package certs
