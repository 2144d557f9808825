package control

import (
	"crypto/subtle"
	"fmt"
	"mime"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
)

// guard checks every request before it reaches a handler, as local servers that must
// resist browsers do (Jupyter's Host, Origin and token checks): a request whose Host is not
// one of the endpoint's own names is refused (DNS rebinding), as is one whose Origin is not
// the endpoint's own origin (a page of another site or port in the operator's browser); a
// POST must carry a JSON body, which no HTML form or simple cross-origin request can send;
// every request but a read, when reads are open, needs the job's token.
type guard struct {
	next      http.Handler
	tls       bool
	token     []byte
	tokenHelp string // where the CLI finds the token, for refusals
	openReads bool
	hosts     map[string]bool // allowed Host names besides IP literals, lower case
}

// newGuard returns the guard for an endpoint serving next with tok. o.AllowedHosts are
// further names the endpoint is reached by.
func newGuard(next http.Handler, o Options, tok jobToken) *guard {
	g := &guard{next: next, tls: o.CertFile != "", token: []byte(tok.value), tokenHelp: tok.help,
		openReads: o.OpenReads, hosts: map[string]bool{"localhost": true}}
	if h, err := os.Hostname(); err == nil && h != "" {
		g.hosts[strings.ToLower(h)] = true
	}
	for _, h := range o.AllowedHosts {
		g.hosts[strings.ToLower(h)] = true
	}
	return g
}

func (g *guard) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !g.hostAllowed(r.Host) {
		refuse(w, http.StatusForbidden, fmt.Sprintf(
			"refused: Host %q is not a name of this control endpoint (its IP addresses, localhost, this machine's host name, or rest.allowed-hosts)", r.Host))
		return
	}
	if o := r.Header.Get("Origin"); o != "" && !g.sameOrigin(o, r.Host) {
		refuse(w, http.StatusForbidden, fmt.Sprintf("refused: a request from origin %q: this control endpoint serves requests of its own origin only", o))
		return
	}
	read := r.Method == http.MethodGet || r.Method == http.MethodHead
	if r.Method == http.MethodPost {
		if mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err != nil || mt != "application/json" {
			refuse(w, http.StatusUnsupportedMediaType, fmt.Sprintf("refused: a POST must have Content-Type application/json, not %q", r.Header.Get("Content-Type")))
			return
		}
	}
	if read && g.openReads {
		g.next.ServeHTTP(w, r)
		return
	}
	given, ok := requestToken(r)
	switch {
	case !ok:
		w.Header().Add("WWW-Authenticate", `Basic realm="flowstate job: any user name, the token as password"`)
		w.Header().Add("WWW-Authenticate", `Bearer realm="flowstate"`)
		refuse(w, http.StatusUnauthorized, "refused: this request needs the job's token (Authorization: Bearer TOKEN); "+g.tokenHelp)
	case subtle.ConstantTimeCompare([]byte(given), g.token) != 1:
		refuse(w, http.StatusForbidden, "refused: the token is not this job's; "+g.tokenHelp)
	default:
		g.next.ServeHTTP(w, r)
	}
}

// requestToken returns the token a request carries: Authorization: Bearer TOKEN, or Basic
// with the token as password (any user name), which a browser asks for.
func requestToken(r *http.Request) (string, bool) {
	if _, pass, ok := r.BasicAuth(); ok {
		return pass, true
	}
	scheme, tok, ok := strings.Cut(r.Header.Get("Authorization"), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return "", false
	}
	return strings.TrimSpace(tok), true
}

// hostAllowed reports whether host (a Host header) names this endpoint: an IP literal (no
// DNS answer can make a page of another site send one), localhost, this machine's host
// name, or a configured name. A rebinding attacker's page sends its own DNS name.
func (g *guard) hostAllowed(host string) bool {
	name := host
	if h, _, err := net.SplitHostPort(host); err == nil {
		name = h
	}
	name = strings.TrimSuffix(strings.Trim(name, "[]"), ".")
	if name == "" {
		return false
	}
	return net.ParseIP(name) != nil || g.hosts[strings.ToLower(name)]
}

// sameOrigin reports whether origin is this endpoint's own: its scheme and the request's
// (already checked) Host.
func (g *guard) sameOrigin(origin, host string) bool {
	u, err := url.Parse(origin)
	if err != nil {
		return false
	}
	scheme := "http"
	if g.tls {
		scheme = "https"
	}
	return u.Scheme == scheme && strings.EqualFold(u.Host, host)
}

func refuse(w http.ResponseWriter, code int, msg string) {
	writeJSON(w, code, SavepointResponse{Error: msg})
}
