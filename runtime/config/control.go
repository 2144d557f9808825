package config

import (
	"fmt"
	"net"
)

// Control holds the control endpoint settings (rest.*).
type Control struct {
	// Address is host:port, "127.0.0.1:0" by default: port 0 listens on an ephemeral
	// port, recorded with the job's lease.
	Address string
	// TokenFile (rest.token-file) holds the job's token: the runner serves with it instead
	// of a fresh one, and the CLI sends it. "": the runner writes a fresh token per run.
	TokenFile string
	// OpenReads (rest.open-reads) serves GET requests without the token; nil: on a
	// loopback address only (see ReadsOpen).
	OpenReads *bool
	// AllowedHosts (rest.allowed-hosts) are further names requests may give as Host.
	AllowedHosts []string
	// CertFile and KeyFile (rest.ssl.certificate, rest.ssl.key) make the endpoint serve
	// HTTPS; TrustFile (rest.ssl.trust-certificate) is what the CLI trusts, CertFile when "".
	CertFile, KeyFile, TrustFile string
	// AcceptPlaintextRisk (rest.accept-plaintext-risk) lets a non-loopback address serve
	// plain HTTP.
	AcceptPlaintextRisk bool
	// AllowAnySavepointTarget (rest.savepoint.allow-any-target) lets a savepoint request
	// name any absolute target, not only one under the savepoint directory or a local
	// directory its sender proves it can write to.
	AllowAnySavepointTarget bool
}

// Pinned reports whether Address names a port (rest.port set, and not 0): the endpoint
// listens there or not at all, and savepoint and stop can reach it without the lease.
func (c Control) Pinned() bool {
	_, port, err := net.SplitHostPort(c.Address)
	return err == nil && port != "0"
}

// Loopback reports whether Address is a loopback address (127.0.0.0/8, ::1, localhost),
// which only this machine reaches. Any other name counts as reachable from the network.
func (c Control) Loopback() bool {
	host, _, err := net.SplitHostPort(c.Address)
	if err != nil {
		return false
	}
	ip := net.ParseIP(host)
	return host == "localhost" || (ip != nil && ip.IsLoopback())
}

// TLS reports whether the endpoint serves HTTPS, and so whether the CLI talks HTTPS to it:
// a certificate, or a certificate to trust, is configured.
func (c Control) TLS() bool { return c.CertFile != "" || c.TrustFile != "" }

// ReadsOpen reports whether GET requests are served without the token: rest.open-reads,
// by default true on a loopback address and false on any other.
func (c Control) ReadsOpen() bool {
	if c.OpenReads != nil {
		return *c.OpenReads
	}
	return c.Loopback()
}

// Access says how the endpoint is protected from the network: "tls", "loopback",
// "plaintext-risk-accepted", or "refused" when run refuses to serve it (CheckExposure).
func (c Control) Access() string {
	switch {
	case c.CertFile != "":
		return "tls"
	case c.Loopback():
		return "loopback"
	case c.AcceptPlaintextRisk:
		return "plaintext-risk-accepted"
	}
	return "refused"
}

// CheckExposure refuses an endpoint that would serve plain HTTP beyond this machine
// without rest.accept-plaintext-risk; run checks it before anything starts.
func (c Control) CheckExposure() error {
	if c.Access() != "refused" {
		return nil
	}
	return fmt.Errorf("%s: %w: the control endpoint on %s would serve plain HTTP beyond this machine: set %s and %s to serve HTTPS, or %s: true to accept the risk (or bind a loopback address)",
		KeyRestAddress, ErrBadValue, c.Address, KeyRestSSLCert, KeyRestSSLKey, KeyRestPlaintextRisk)
}

// Exposure says who can reach the endpoint and how it is protected, for config explain.
func (c Control) Exposure() string {
	reads := "GET requests (web page, /metrics, /jobs) need the token too"
	if c.ReadsOpen() {
		reads = "GET requests (web page, /metrics, /jobs) are served without it (rest.open-reads)"
	}
	token := "a fresh token per run, written for the CLI in the runner's token directory"
	if c.TokenFile != "" {
		token = "the token in " + c.TokenFile + " (rest.token-file)"
	}
	var how string
	switch c.Access() {
	case "tls":
		how = fmt.Sprintf("%s serves HTTPS with %s (rest.ssl.certificate)", c.Address, c.CertFile)
	case "loopback":
		how = fmt.Sprintf("%s is loopback: only this machine reaches it; plain HTTP", c.Address)
	case "refused":
		return c.CheckExposure().Error() + "; run refuses to start"
	default:
		how = fmt.Sprintf("%s is reachable from the network and serves plain HTTP: the risk is accepted by rest.accept-plaintext-risk, the token and all answers cross the network readable", c.Address)
	}
	return fmt.Sprintf("%s; every POST (savepoint, stop) needs %s; %s; requests of a foreign Host or Origin are refused", how, token, reads)
}

// checkControl refuses half a certificate.
func (p *parser) checkControl() {
	c := p.c.Control
	if (c.CertFile == "") != (c.KeyFile == "") {
		key := KeyRestSSLCert // the one set, at its line
		if c.KeyFile != "" {
			key = KeyRestSSLKey
		}
		p.errs.addAt(p.c.File, p.spellingOf(key), fmt.Errorf("%w: %s and %s go together: set both to serve HTTPS (the other is missing)",
			ErrBadValue, KeyRestSSLCert, KeyRestSSLKey))
	}
}
