// Package testcert writes certificates and their keys for tests of TLS: a self-signed one
// (Write), or a CA and a server certificate it signed (WriteCA), as a server whose clients
// are given a CA file has. It imports only the standard library, nothing of this
// repository.
package testcert

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// Write writes a self-signed certificate for localhost, 127.0.0.1 and ::1, valid for a
// day, and its private key as PEM files in a temporary directory of t, and returns their
// paths.
func Write(t *testing.T) (certFile, keyFile string) {
	t.Helper()
	dir := t.TempDir()
	key := newKey(t)
	tmpl := serverTemplate(1, "flowstate test")
	tmpl.KeyUsage |= x509.KeyUsageCertSign
	tmpl.IsCA = true
	certFile, keyFile = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	writeCert(t, certFile, tmpl, tmpl, key, key)
	writeKey(t, keyFile, key)
	return certFile, keyFile
}

// WriteCA writes, as PEM files in dir, a CA certificate (ca.pem) and a server certificate
// for localhost, 127.0.0.1 and ::1 that the CA signed (server.pem), with the server's
// private key (server-key.pem), all valid for a day, and returns their paths. A client
// that trusts caFile alone accepts the server.
func WriteCA(t testing.TB, dir string) (caFile, certFile, keyFile string) {
	t.Helper()
	caKey, key := newKey(t), newKey(t)
	ca := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "flowstate test CA"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(24 * time.Hour),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageCRLSign,
		IsCA:                  true,
		BasicConstraintsValid: true,
	}
	caFile = filepath.Join(dir, "ca.pem")
	certFile, keyFile = filepath.Join(dir, "server.pem"), filepath.Join(dir, "server-key.pem")
	writeCert(t, caFile, ca, ca, caKey, caKey)
	writeCert(t, certFile, serverTemplate(2, "flowstate test server"), ca, key, caKey)
	writeKey(t, keyFile, key)
	return caFile, certFile, keyFile
}

// serverTemplate is a server certificate for localhost, 127.0.0.1 and ::1, valid for a day.
func serverTemplate(serial int64, name string) *x509.Certificate {
	return &x509.Certificate{
		SerialNumber:          big.NewInt(serial),
		Subject:               pkix.Name{CommonName: name},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(24 * time.Hour),
		KeyUsage:              x509.KeyUsageDigitalSignature,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		DNSNames:              []string{"localhost"},
		IPAddresses:           []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback},
		BasicConstraintsValid: true,
	}
}

func newKey(t testing.TB) *ecdsa.PrivateKey {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return key
}

// writeCert signs tmpl (for key's public half) with parent's key and writes it to path.
func writeCert(t testing.TB, path string, tmpl, parent *x509.Certificate, key, parentKey *ecdsa.PrivateKey) {
	t.Helper()
	der, err := x509.CreateCertificate(rand.Reader, tmpl, parent, &key.PublicKey, parentKey)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o644); err != nil {
		t.Fatal(err)
	}
}

// writeKey writes key to path, readable by its owner only.
func writeKey(t testing.TB, path string, key *ecdsa.PrivateKey) {
	t.Helper()
	der, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
}
