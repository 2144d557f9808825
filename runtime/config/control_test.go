package config

import (
	"errors"
	"testing"
)

// TestControlAccess: Control.Access says how the control endpoint is protected: loopback
// (the default), TLS, plain HTTP beyond this machine with the risk accepted, or refused;
// the refusal names the keys that lift it, and reads are open by default on loopback only.
func TestControlAccess(t *testing.T) {
	cases := []struct {
		yaml, access string
		readsOpen    bool
	}{
		{"", "loopback", true},
		{"rest.address: localhost\n", "loopback", true},
		{"rest.address: ::1\nrest.open-reads: false\n", "loopback", false},
		{"rest.address: 0.0.0.0\n", "refused", false},
		{"rest.address: flow.example\n", "refused", false},
		{"rest.address: 0.0.0.0\nrest.accept-plaintext-risk: true\n", "plaintext-risk-accepted", false},
		{"rest.address: 10.1.2.3\nrest.ssl.certificate: /etc/c.pem\nrest.ssl.key: /etc/k.pem\nrest.open-reads: true\n", "tls", true},
	}
	for _, tc := range cases {
		c := mustParse(t, tc.yaml)
		if c.Control.Access() != tc.access || c.Control.ReadsOpen() != tc.readsOpen {
			t.Errorf("%q: access %s, reads open %v; want %s, %v", tc.yaml, c.Control.Access(), c.Control.ReadsOpen(), tc.access, tc.readsOpen)
		}
		err := c.Control.CheckExposure()
		if (tc.access == "refused") != (err != nil) {
			t.Errorf("%q: CheckExposure = %v", tc.yaml, err)
		}
		if err != nil {
			wantContains(t, err.Error(), KeyRestAddress, KeyRestSSLCert, KeyRestSSLKey, KeyRestPlaintextRisk)
			if !errors.Is(err, ErrBadValue) {
				t.Errorf("%q: CheckExposure = %v; want ErrBadValue", tc.yaml, err)
			}
		}
	}
}

// TestHalfACertificateIsRefused: a certificate without its key, or a key without its
// certificate, is an error that names the key set and the one missing.
func TestHalfACertificateIsRefused(t *testing.T) {
	wantContains(t, parseErr(t, "rest.ssl.certificate: /etc/c.pem\n"), "rest.ssl.certificate:", "rest.ssl.key", "go together")
	wantContains(t, parseErr(t, "rest.ssl.key: /etc/k.pem\n"), "rest.ssl.key:", "rest.ssl.certificate")
}
