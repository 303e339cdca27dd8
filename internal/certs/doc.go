// Package certs owns tollgate's serving certificates: a self-signed CA and
// serving certificate kept in a directory (selfsigned.go), and a source that
// serves a certificate and key pair from files and reloads them when they
// change on disk (source.go).
package certs
