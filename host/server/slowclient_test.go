package server_test

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/adkhost/adkhost/host/server"
)

// stalledWriter is a response writer whose client stops reading after the
// headers: every later write blocks until the write deadline set through
// http.ResponseController passes, or for the test's patience when none is
// set.
type stalledWriter struct {
	hdr      http.Header
	mu       sync.Mutex
	deadline time.Time
	status   int
	stalled  bool // a write found no deadline set
}

func (w *stalledWriter) Header() http.Header { return w.hdr }
func (w *stalledWriter) WriteHeader(s int)   { w.status = s }
func (w *stalledWriter) Flush()              {}

func (w *stalledWriter) SetWriteDeadline(t time.Time) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.deadline = t
	return nil
}

func (w *stalledWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	d := w.deadline
	if d.IsZero() {
		w.stalled = true
		d = time.Now().Add(3 * time.Second) // the test's patience
	}
	w.mu.Unlock()
	time.Sleep(time.Until(d))
	return 0, os.ErrDeadlineExceeded
}

// TestStalledReaderIsDropped: a client that stops reading an answer (an
// SSE stream, a /run list) no longer holds its handler, its run and its
// app version for as long as the connection stays open: each write waits
// at most Limits.WriteTimeout.
func TestStalledReaderIsDropped(t *testing.T) {
	h := newHarness(t, t.TempDir(), harnessOpts{limits: server.Limits{WriteTimeout: 200 * time.Millisecond}})
	h.setupApp("chat", "v1", false)
	h.must(http.StatusOK)(h.do("POST", "/apps/chat/users/u/sessions", map[string]any{"sessionId": "s"}))
	for _, path := range []string{"/run_sse", "/run"} {
		body := `{"appName":"chat","userId":"u","sessionId":"s","streaming":true,"newMessage":{"parts":[{"text":"hi"}]}}`
		req, err := http.NewRequest("POST", path, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		w := &stalledWriter{hdr: http.Header{}}
		start := time.Now()
		h.srv.Handler().ServeHTTP(w, req)
		took := time.Since(start)
		if w.stalled {
			t.Errorf("%s: a write to a client that does not read waited with no deadline", path)
		}
		if took > 2*time.Second {
			t.Errorf("%s: the handler held on for %s, want about the 200ms write timeout", path, took)
		}
	}
}

// TestSlowBodyIsCutOff: a client that sends its headers and then trickles
// (or never finishes) the body gets 408 after Limits.BodyTimeout, instead
// of holding a handler and its buffer for as long as it likes.
func TestSlowBodyIsCutOff(t *testing.T) {
	h := newHarness(t, t.TempDir(), harnessOpts{limits: server.Limits{BodyTimeout: 300 * time.Millisecond}})
	h.setupApp("chat", "v1", false)
	for _, path := range []string{"/run", "/apps/chat/users/u/sessions"} {
		conn, err := net.Dial("tcp", strings.TrimPrefix(h.ts.URL, "http://"))
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		if _, err := io.WriteString(conn, "POST "+path+" HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{\"appName\":"); err != nil {
			t.Fatal(err)
		}
		conn.SetReadDeadline(time.Now().Add(5 * time.Second))
		resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
		if err != nil {
			t.Fatalf("%s: no answer to a stalled body within 5s: %v", path, err)
		}
		b, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != http.StatusRequestTimeout || !strings.Contains(string(b), "body") {
			t.Errorf("%s: %d %s, want 408 about the body", path, resp.StatusCode, b)
		}
	}
	// A body sent in time is read whole, and the run after it is not cut
	// short by the deadline that bounded the body.
	h.must(http.StatusOK)(h.do("POST", "/apps/chat/users/u/sessions", map[string]any{"sessionId": "s"}))
	time.Sleep(400 * time.Millisecond)
	h.must(http.StatusOK)(h.do("POST", "/run", runBody("chat", "u", "s", "hi")))
}

// TestServeClosesIdleConnections: Serve closes a kept-alive connection
// that sends no next request within Limits.IdleTimeout (without one, an
// unauthenticated client could keep any number open after a /health).
func TestServeClosesIdleConnections(t *testing.T) {
	h := newHarness(t, t.TempDir(), harnessOpts{limits: server.Limits{IdleTimeout: 200 * time.Millisecond}})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- h.srv.Serve(ctx, ln, time.Second) }()
	defer func() {
		cancel()
		<-served
	}()
	conn, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	io.WriteString(conn, "GET /health HTTP/1.1\r\nHost: x\r\n\r\n")
	br := bufio.NewReader(conn)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatal(err)
	}
	io.ReadAll(resp.Body)
	conn.SetReadDeadline(time.Now().Add(3 * time.Second))
	_, err = br.ReadByte()
	if !errors.Is(err, io.EOF) {
		t.Fatalf("idle connection after 3s: %v, want it closed by the server (EOF)", err)
	}
}

// TestUnreadBodyIsBounded: a body the server never reads (the request is
// refused before, here by the run token) is still bounded by the body
// timeout: net/http reads what is left of a small body before answering,
// and an unauthenticated client trickling one held the connection.
func TestUnreadBodyIsBounded(t *testing.T) {
	h := newHarness(t, t.TempDir(), harnessOpts{runToken: "run-secret", limits: server.Limits{BodyTimeout: 300 * time.Millisecond}})
	conn, err := net.Dial("tcp", strings.TrimPrefix(h.ts.URL, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	io.WriteString(conn, "POST /run HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{")
	conn.SetReadDeadline(time.Now().Add(5 * time.Second))
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatalf("no answer within 5s: %v", err)
	}
	if resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("status %d, want 401", resp.StatusCode)
	}
}
