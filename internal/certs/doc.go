// Package certs owns tollgate's certificates:
//
//   - a self-signed CA and serving certificate kept in a directory, renewed
//     when due (selfsigned.go);
//   - the serving certificate a server presents, swapped atomically, and a
//     source that serves a certificate and key pair from files and reloads
//     them when they change on disk (source.go);
//   - a self-managed authority: what its Secret should hold as the CA and
//     serving certificate age and the CA rotates (authority.go, pure), and
//     the Secret it is kept in, which every replica serves from and only the
//     leader changes (secretstore.go);
//   - a CA and a client certificate it signed, as an apiserver presents to a
//     webhook that authenticates it (client.go);
//   - PEM encoding and decoding (pem.go).
package certs
