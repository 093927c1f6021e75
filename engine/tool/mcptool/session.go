package mcptool

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"os/exec"
	"runtime/debug"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// sessions holds a toolset's one MCP session (google-adk's
// MCPSessionManager with its one pool key: the headers of a config never
// change). A session is opened on first use, replaced when it has ended,
// and closed after IdleTimeout without a call in flight.
type sessions struct {
	cfg    *Config
	log    *slog.Logger
	client *mcp.Client

	mu      sync.Mutex // held while connecting, so one session is opened at a time
	cur     *live
	inUse   int
	idle    *time.Timer
	httpCli *http.Client
}

// live is an open session; done is closed when it has ended (closed by
// either side, or its transport failed).
type live struct {
	cs     *mcp.ClientSession
	done   chan struct{}
	cancel context.CancelFunc
}

func (l *live) ended() bool {
	select {
	case <-l.done:
		return true
	default:
		return false
	}
}

func newSessions(cfg *Config, log *slog.Logger) *sessions {
	s := &sessions{cfg: cfg, log: log}
	s.client = mcp.NewClient(&mcp.Implementation{Name: "adkhost", Version: clientVersion()}, &mcp.ClientOptions{Logger: log})
	if cfg.HTTP != nil {
		base := cfg.HTTP.Client
		if base == nil {
			base = http.DefaultClient
		}
		cp := *base
		cp.Transport = &limitedTransport{base: base.Transport, max: int64(cfg.MaxResponseBytes), headers: cfg.HTTP.Headers}
		s.httpCli = &cp
	}
	return s
}

// acquire returns the open session, opening one if there is none or the
// last has ended. release must follow.
func (s *sessions) acquire(ctx context.Context) (*live, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.idle != nil {
		s.idle.Stop()
	}
	if s.cur != nil && s.cur.ended() {
		s.cur.cancel()
		s.cur = nil
	}
	if s.cur == nil {
		l, err := s.connect(ctx)
		if err != nil {
			s.armIdle()
			return nil, fmt.Errorf("failed to create MCP session: %w", err)
		}
		s.cur = l
	}
	s.inUse++
	return s.cur, nil
}

// release ends a use of l; the idle clock starts when no call is in flight.
func (s *sessions) release() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.inUse--
	s.armIdle()
}

func (s *sessions) armIdle() {
	if s.inUse > 0 || s.cur == nil {
		return
	}
	if s.idle == nil {
		s.idle = time.AfterFunc(s.cfg.IdleTimeout, s.closeIdle)
		return
	}
	s.idle.Reset(s.cfg.IdleTimeout)
}

// closeIdle closes the session if it is still unused.
func (s *sessions) closeIdle() {
	s.mu.Lock()
	l := s.cur
	if s.inUse > 0 || l == nil {
		s.mu.Unlock()
		return
	}
	s.cur = nil
	s.mu.Unlock()
	s.log.Debug("closing an idle MCP session")
	l.close(s.log)
}

// discard drops l if it is still the current session (the server forgot
// it), so the next use opens a new one.
func (s *sessions) discard(l *live) {
	s.mu.Lock()
	if s.cur == l {
		s.cur = nil
	}
	s.mu.Unlock()
	l.close(s.log)
}

func (s *sessions) close() error {
	s.mu.Lock()
	l := s.cur
	s.cur = nil
	if s.idle != nil {
		s.idle.Stop()
	}
	s.mu.Unlock()
	if l == nil {
		return nil
	}
	return l.close(s.log)
}

// close ends the session. A failure to end it cleanly (the server is
// gone, or refuses the DELETE) is only logged: nothing is left to release.
func (l *live) close(log *slog.Logger) error {
	if err := l.cs.Close(); err != nil && !errors.Is(err, mcp.ErrConnectionClosed) {
		log.Debug("closing an MCP session", "err", err)
	}
	l.cancel()
	return nil
}

// connect opens a session within Timeout. The session's own context is
// detached from ctx (an SSE stream lives as long as the session), and
// cancelled if the handshake outlives Timeout or when the session closes.
func (s *sessions) connect(ctx context.Context) (*live, error) {
	t, err := s.transport()
	if err != nil {
		return nil, err
	}
	sctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	timer := time.AfterFunc(s.cfg.Timeout, cancel)
	// The caller's cancellation ends the handshake too.
	stop := context.AfterFunc(ctx, cancel)
	cs, err := s.client.Connect(sctx, t, &mcp.ClientSessionOptions{ProtocolVersion: s.cfg.ProtocolVersion})
	stop()
	if !timer.Stop() { // the timer fired: the handshake outlived Timeout
		if err == nil {
			cs.Close()
		}
		cancel()
		return nil, fmt.Errorf("no answer to the MCP handshake within %s", s.cfg.Timeout)
	}
	if err != nil {
		cancel()
		return nil, err
	}
	l := &live{cs: cs, done: make(chan struct{}), cancel: cancel}
	go func() {
		_ = cs.Wait()
		close(l.done)
	}()
	return l, nil
}

// transport builds the SDK transport of the configured server.
func (s *sessions) transport() (mcp.Transport, error) {
	if st := s.cfg.Stdio; st != nil {
		cmd := exec.Command(st.Command, st.Args...)
		cmd.Env = stdioEnv(st.Env)
		cmd.Dir = st.Dir
		cmd.Stderr = &lineLogger{log: s.log, max: 4096}
		// Closing waits 2 s for the process to exit once its stdin is
		// closed, then terminates it, as the Python SDK's stdio client does.
		return &stdioTransport{cmd: cmd, max: s.cfg.MaxResponseBytes, terminate: 2 * time.Second}, nil
	}
	h := s.cfg.HTTP
	if h.SSE {
		return &mcp.SSEClientTransport{Endpoint: h.URL, HTTPClient: s.httpCli, MaxEventSize: s.cfg.MaxResponseBytes}, nil
	}
	return &mcp.StreamableClientTransport{Endpoint: h.URL, HTTPClient: s.httpCli, MaxEventSize: s.cfg.MaxResponseBytes}, nil
}

// stdioTransport is the SDK's CommandTransport with the server's output
// bounded to max bytes a line (a message is one line), as the HTTP
// transports bound a response: CommandTransport takes the command's stdout
// itself and caps a line only at the SDK's fixed 16 MiB, never at
// MaxResponseBytes. Past the bound the session fails with an error that
// says so.
type stdioTransport struct {
	cmd       *exec.Cmd
	max       int
	terminate time.Duration
}

func (t *stdioTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	stdout, err := t.cmd.StdoutPipe()
	if err != nil {
		return nil, fmt.Errorf("MCP server %s: %w", t.cmd.Path, err)
	}
	stdin, err := t.cmd.StdinPipe()
	if err != nil {
		return nil, fmt.Errorf("MCP server %s: %w", t.cmd.Path, err)
	}
	if err := t.cmd.Start(); err != nil {
		return nil, err
	}
	return (&mcp.IOTransport{
		// The session ends by closing stdin (serverStdin.Close), not stdout.
		Reader: io.NopCloser(&lineLimitReader{r: stdout, max: t.max}),
		Writer: &serverStdin{WriteCloser: stdin, cmd: t.cmd, terminate: t.terminate},
		// The SDK's own cap counts what its decoder buffers, which may run
		// past a line by a read's worth; lineLimitReader is the bound.
		MaxLineLength: t.max + 1<<20,
	}).Connect(ctx)
}

// lineLimitReader fails a read once a line (the bytes since the last
// newline) grows past max bytes, so a server's one enormous line is
// refused after max bytes instead of being buffered whole.
type lineLimitReader struct {
	r    io.Reader
	max  int
	line int
}

func (l *lineLimitReader) Read(p []byte) (int, error) {
	if l.line > l.max {
		return 0, l.tooLong()
	}
	// At most one byte past the line's budget: a line of exactly max
	// bytes may still end with its newline.
	if len(p) > l.max-l.line+1 {
		p = p[:l.max-l.line+1]
	}
	n, err := l.r.Read(p)
	if i := bytes.LastIndexByte(p[:n], '\n'); i >= 0 {
		l.line = n - i - 1
	} else {
		l.line += n
	}
	if l.line > l.max {
		return 0, l.tooLong()
	}
	return n, err
}

func (l *lineLimitReader) tooLong() error {
	return fmt.Errorf("the MCP server wrote a message (one line) longer than %d bytes, the response bound", l.max)
}

// serverStdin is the server's stdin; closing it ends the server as the SDK's
// CommandTransport does: close stdin, wait terminate for the process to
// exit, then SIGTERM, wait again, then SIGKILL.
type serverStdin struct {
	io.WriteCloser
	cmd       *exec.Cmd
	terminate time.Duration
}

func (s *serverStdin) Close() error {
	if err := s.WriteCloser.Close(); err != nil {
		return fmt.Errorf("closing the MCP server's stdin: %w", err)
	}
	exited := make(chan error, 1)
	go func() { exited <- s.cmd.Wait() }()
	wait := func() (error, bool) {
		select {
		case err := <-exited:
			return err, true
		case <-time.After(s.terminate):
			return nil, false
		}
	}
	if err, ok := wait(); ok {
		return err
	}
	if s.cmd.Process.Signal(syscall.SIGTERM) == nil {
		if err, ok := wait(); ok {
			return err
		}
	}
	if err := s.cmd.Process.Kill(); err != nil {
		return err
	}
	if err, ok := wait(); ok {
		return err
	}
	return fmt.Errorf("MCP server %s does not exit after SIGKILL", s.cmd.Path)
}

// stdioEnv is the environment of a stdio server: the Python MCP SDK's
// default inherited variables, then the configured ones.
func stdioEnv(extra map[string]string) []string {
	var env []string
	for _, k := range []string{"HOME", "LOGNAME", "PATH", "SHELL", "TERM", "USER"} {
		if v, ok := os.LookupEnv(k); ok && !strings.HasPrefix(v, "()") {
			env = append(env, k+"="+v)
		}
	}
	for k, v := range extra {
		env = append(env, k+"="+v)
	}
	return env
}

// lineLogger logs a stdio server's stderr line by line, each line cut at
// max bytes, up to maxStderrLines lines per process (a chatty server
// cannot flood the log).
type lineLogger struct {
	log   *slog.Logger
	max   int
	mu    sync.Mutex
	buf   []byte
	lines int
}

const maxStderrLines = 1000

func (w *lineLogger) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, b := range p {
		if b == '\n' {
			w.flush()
			continue
		}
		if len(w.buf) < w.max {
			w.buf = append(w.buf, b)
		}
	}
	return len(p), nil
}

func (w *lineLogger) flush() {
	if len(w.buf) > 0 {
		w.lines++
		switch {
		case w.lines <= maxStderrLines:
			w.log.Info("MCP server stderr", "line", string(w.buf))
		case w.lines == maxStderrLines+1:
			w.log.Warn("MCP server stderr: further lines of this process are not logged", "lines", maxStderrLines)
		}
	}
	w.buf = w.buf[:0]
}

// limitedTransport adds the configured headers to every request and
// bounds every response that is not an event stream to max bytes (an
// event stream is bounded per event by the SDK's MaxEventSize).
type limitedTransport struct {
	base    http.RoundTripper
	max     int64
	headers map[string]string
}

func (t *limitedTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if len(t.headers) > 0 {
		req = req.Clone(req.Context())
		for k, v := range t.headers {
			req.Header.Set(k, v)
		}
	}
	base := t.base
	if base == nil {
		base = http.DefaultTransport
	}
	resp, err := base.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	if !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		resp.Body = &limitedBody{rc: resp.Body, left: t.max, max: t.max}
	}
	return resp, nil
}

// limitedBody fails a read past max bytes instead of truncating silently.
type limitedBody struct {
	rc        io.ReadCloser
	left, max int64
}

func (b *limitedBody) Read(p []byte) (int, error) {
	if b.left <= 0 {
		// One more byte tells a body of exactly max bytes from a longer one.
		var one [1]byte
		if n, _ := b.rc.Read(one[:]); n > 0 {
			return 0, fmt.Errorf("the MCP server's response is larger than %d bytes", b.max)
		}
		return 0, io.EOF
	}
	if int64(len(p)) > b.left {
		p = p[:b.left]
	}
	n, err := b.rc.Read(p)
	b.left -= int64(n)
	return n, err
}

func (b *limitedBody) Close() error { return b.rc.Close() }

// clientVersion is the version the client reports in the handshake.
func clientVersion() string {
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" {
		return bi.Main.Version
	}
	return "devel"
}
