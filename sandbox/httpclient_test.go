package sandbox_test

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/adkhost/adkhost/sandbox"
)

// TestHTTPGrantClient: the client host-side callers use obeys the grant
// as http_request does: the first request's host and every redirect's are
// checked, and a private address is refused unless allowed.
func TestHTTPGrantClient(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("ok")) }))
	defer srv.Close()
	other := httptest.NewServer(http.RedirectHandler(srv.URL, http.StatusFound))
	defer other.Close()
	host := strings.TrimPrefix(srv.URL, "http://")
	otherHost := strings.TrimPrefix(other.URL, "http://")

	for _, c := range []struct {
		g         sandbox.HTTPGrant
		url, want string
	}{
		{sandbox.HTTPGrant{Hosts: []string{host}}, srv.URL, "127.0.0.1 is not a public address"},
		{sandbox.HTTPGrant{Hosts: []string{"example.com"}, AllowPrivate: true}, srv.URL, "is not among the hosts allowed (example.com)"},
		{sandbox.HTTPGrant{Hosts: []string{otherHost}, AllowPrivate: true}, other.URL, "redirect to " + host},
		{sandbox.HTTPGrant{Hosts: []string{host}, AllowPrivate: true}, srv.URL, ""},
		{sandbox.HTTPGrant{Hosts: []string{otherHost, host}, AllowPrivate: true}, other.URL, ""},
	} {
		resp, err := c.g.Client().Get(c.url)
		if c.want == "" {
			if err != nil {
				t.Errorf("%+v %s: %v", c.g, c.url, err)
				continue
			}
			resp.Body.Close()
			continue
		}
		if err == nil {
			resp.Body.Close()
		}
		if err == nil || !errors.Is(err, sandbox.ErrDestinationDenied) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v %s: %v, want %q", c.g, c.url, err, c.want)
		}
	}
}
