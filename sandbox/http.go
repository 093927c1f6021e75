package sandbox

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"syscall"
	"time"

	"github.com/adkhost/adkhost/abi"
)

// errDenied marks an HTTP destination the grant does not allow.
var errDenied = errors.New("destination not allowed")

// newHTTPClient returns the client of one pool: no proxy from the
// environment, every redirect checked against the grant, and every dialled
// address checked, so a name that resolves to a private address is refused
// unless the grant allows private addresses.
func newHTTPClient(g HTTPGrant) (*http.Client, int) {
	dialer := &net.Dialer{
		Timeout: 10 * time.Second,
		Control: func(network, address string, _ syscall.RawConn) error {
			ap, err := netip.ParseAddrPort(address)
			if err != nil {
				return fmt.Errorf("%w: %s", errDenied, address)
			}
			if !g.AllowPrivate && !publicAddr(ap.Addr()) {
				return fmt.Errorf("%w: %s is not a public address", errDenied, ap.Addr())
			}
			return nil
		},
	}
	client := &http.Client{
		Transport: &http.Transport{
			Proxy:                  nil,
			DialContext:            dialer.DialContext,
			ForceAttemptHTTP2:      true,
			TLSHandshakeTimeout:    10 * time.Second,
			MaxResponseHeaderBytes: 64 << 10,
			MaxIdleConnsPerHost:    4,
			IdleConnTimeout:        30 * time.Second,
		},
		CheckRedirect: func(req *http.Request, via []*http.Request) error {
			if len(via) >= 10 {
				return fmt.Errorf("%w: more than 10 redirects", errDenied)
			}
			if !hostAllowed(g.Hosts, req.URL) {
				return fmt.Errorf("%w: redirect to %s", errDenied, req.URL.Host)
			}
			return nil
		},
	}
	maxBody := g.MaxResponseBytes
	if maxBody <= 0 {
		maxBody = DefaultHTTPResponseBytes
	}
	return client, maxBody
}

// publicAddr reports whether a is a global unicast address outside the
// private, shared (100.64/10), benchmarking and reserved ranges, and not an
// IPv6 address that embeds an IPv4 one a relay or translator may reach
// (NAT64, 6to4, Teredo, IPv4-compatible).
func publicAddr(a netip.Addr) bool {
	a = a.Unmap()
	if !a.IsGlobalUnicast() || a.IsPrivate() {
		return false
	}
	for _, p := range nonPublic {
		if p.Contains(a) {
			return false
		}
	}
	return true
}

var nonPublic = []netip.Prefix{
	netip.MustParsePrefix("0.0.0.0/8"),
	netip.MustParsePrefix("100.64.0.0/10"),
	netip.MustParsePrefix("192.0.0.0/24"),
	netip.MustParsePrefix("198.18.0.0/15"),
	netip.MustParsePrefix("240.0.0.0/4"),
	netip.MustParsePrefix("::/96"), // IPv4-compatible ::a.b.c.d
	netip.MustParsePrefix("64:ff9b::/96"),
	netip.MustParsePrefix("64:ff9b:1::/48"), // local-use NAT64
	netip.MustParsePrefix("100::/64"),       // discard-only
	netip.MustParsePrefix("2001::/32"),      // Teredo
	netip.MustParsePrefix("2001:db8::/32"),
	netip.MustParsePrefix("2002::/16"), // 6to4
}

// hostAllowed matches u against the grant's entries: "host", "*.domain"
// (any subdomain, not the domain itself) or "host:port".
func hostAllowed(hosts []string, u *url.URL) bool {
	if u.Scheme != "http" && u.Scheme != "https" {
		return false
	}
	host := strings.ToLower(u.Hostname())
	port := u.Port()
	if port == "" {
		port = "80"
		if u.Scheme == "https" {
			port = "443"
		}
	}
	for _, e := range hosts {
		e = strings.ToLower(e)
		eh, ep := e, ""
		if h, p, err := net.SplitHostPort(e); err == nil {
			eh, ep = h, p
		}
		if ep != "" && ep != port {
			continue
		}
		if suffix, ok := strings.CutPrefix(eh, "*."); ok {
			if strings.HasSuffix(host, "."+suffix) {
				return true
			}
			continue
		}
		if host == eh {
			return true
		}
	}
	return false
}

// doHTTP runs one http_request under the grant.
func doHTTP(ctx context.Context, client *http.Client, g HTTPGrant, maxBody int, r *abi.HTTPRequest) (*abi.HTTPResponse, abi.Status) {
	u, err := url.Parse(r.URL)
	if err != nil || !u.IsAbs() || u.Host == "" {
		return nil, abi.StatusInvalidArgument
	}
	if !hostAllowed(g.Hosts, u) {
		return nil, abi.StatusDenied
	}
	method := r.Method
	if method == "" {
		method = http.MethodGet
	}
	req, err := http.NewRequestWithContext(ctx, method, u.String(), bytes.NewReader(r.Body))
	if err != nil {
		return nil, abi.StatusInvalidArgument
	}
	for k, v := range r.Headers {
		req.Header.Set(k, v)
	}
	resp, err := client.Do(req)
	if err != nil {
		if errors.Is(err, errDenied) {
			return nil, abi.StatusDenied
		}
		return nil, abi.StatusFailed
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, int64(maxBody)+1))
	if err != nil {
		return nil, abi.StatusFailed
	}
	if len(body) > maxBody {
		return nil, abi.StatusTooLarge
	}
	out := &abi.HTTPResponse{Status: resp.StatusCode, Body: body, Headers: map[string]string{}}
	for k, v := range resp.Header {
		out.Headers[k] = strings.Join(v, ", ")
	}
	return out, abi.StatusOK
}

// Client returns an HTTP client that reaches only what g allows, for
// host-side clients that obey a module's rules (an app's MCP servers):
// every request and redirect is checked against Hosts, every dialled
// address against AllowPrivate, and no proxy is taken from the
// environment. A refused destination fails the request with an error that
// names it. Response bodies are not bounded here (MaxResponseBytes is the
// caller's to apply).
func (g HTTPGrant) Client() *http.Client {
	c, _ := newHTTPClient(g)
	c.Transport = grantTransport{base: c.Transport, hosts: g.Hosts}
	return c
}

// grantTransport checks each request's destination, the first included
// (CheckRedirect sees only the later ones).
type grantTransport struct {
	base  http.RoundTripper
	hosts []string
}

func (t grantTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if !hostAllowed(t.hosts, req.URL) {
		if req.Body != nil {
			req.Body.Close()
		}
		return nil, fmt.Errorf("%w: %s is not among the hosts allowed (%s)", errDenied, req.URL.Host, strings.Join(t.hosts, ", "))
	}
	return t.base.RoundTrip(req)
}

// ErrDestinationDenied is wrapped by the errors of a Client whose request
// went where its grant does not allow.
var ErrDestinationDenied = errDenied
