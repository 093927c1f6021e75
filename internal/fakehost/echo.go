// Package fakehost holds test servers shared by the SDKs' end-to-end tests:
// Echo answers guests' http_request calls. (The recording abi.Host is the Go
// SDK's adkhosttest.Host.)
package fakehost

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
)

// Echo is an HTTP server for guests' http_request tests: /empty answers
// 204 with no body, any other path 201 with "got <request body>" as
// text/plain. It records each request it serves.
type Echo struct {
	// URL is the server's base URL (http://127.0.0.1:port); Port its port,
	// for reaching it by another host name.
	URL, Port string

	mu   sync.Mutex
	seen []string
}

// NewEcho starts an Echo, closed when the test ends.
func NewEcho(t testing.TB) *Echo {
	e := &Echo{}
	srv := httptest.NewServer(http.HandlerFunc(e.serve))
	t.Cleanup(srv.Close)
	e.URL = srv.URL
	e.Port = srv.URL[strings.LastIndex(srv.URL, ":")+1:]
	return e
}

func (e *Echo) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	e.mu.Lock()
	e.seen = append(e.seen, r.Method+" "+r.URL.Path+" "+r.Header.Get("X-Test")+" "+string(body))
	e.mu.Unlock()
	if r.URL.Path == "/empty" {
		w.WriteHeader(http.StatusNoContent)
		return
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.WriteHeader(http.StatusCreated)
	fmt.Fprintf(w, "got %s", body)
}

// Seen returns the requests served so far, each as "METHOD path X-Test
// body".
func (e *Echo) Seen() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return slices.Clone(e.seen)
}
