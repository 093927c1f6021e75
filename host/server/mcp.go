package server

// The MCP server: /mcp/{app} serves an app's Wasm module tools over MCP's
// streamable HTTP transport (github.com/modelcontextprotocol/go-sdk), so
// MCP clients (Claude Desktop, IDEs, other agent frameworks) can call the
// sandboxed tools adkhost hosts. A call runs through Runner.CallTool: the
// module's grants and limits, the host's admit gate and the app's tool
// callbacks and plugins apply as in a run, and the call is recorded in an
// adkhost session of the app, one per MCP session.

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"
	"github.com/labstack/echo/v4"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/adkhost/adkhost/engine"
	"github.com/adkhost/adkhost/engine/session"
	"github.com/adkhost/adkhost/host"
)

// DefaultMCPSessionTimeout is how long an MCP session may stay idle before
// the server forgets it (its adkhost session stays in the store).
const DefaultMCPSessionTimeout = 30 * time.Minute

// DefaultMCPMaxSessions bounds the MCP sessions open at once.
const DefaultMCPMaxSessions = 1024

// maxClientNameBytes bounds the MCP client name recorded on events.
const maxClientNameBytes = 128

// MCPUserID is the adkhost user id of the sessions of MCP clients that
// authenticate with token: "mcp-" and 16 hex digits of its SHA-256. Every
// client holding the token is the same user, so "user:" state is shared
// among their sessions; the token itself is never stored.
func MCPUserID(token string) string {
	sum := sha256.Sum256([]byte(token))
	return "mcp-" + hex.EncodeToString(sum[:8])
}

// mcpApps holds one MCP server and streamable HTTP handler per app. Each
// app has its own handler, so an MCP session id is only valid at the path
// of the app it was made for.
type mcpApps struct {
	s      *Server
	user   string
	mu     sync.Mutex
	byName map[string]*mcpApp

	// openMu serializes the admission of new sessions, and opening counts
	// the requests admitted that may still make one: without them,
	// initialize requests arriving together would all pass the bound
	// before any of them had made its session.
	openMu  sync.Mutex
	opening int
}

// admitNew admits a request that may make a new session, unless max
// sessions are open or being made; done ends the admission, once the
// request's session, if any, is counted among the open ones.
func (m *mcpApps) admitNew(max int) (done func(), err error) {
	m.openMu.Lock()
	defer m.openMu.Unlock()
	if n := m.sessions(); n+m.opening >= max {
		return nil, errorf(http.StatusServiceUnavailable, fmt.Sprintf("too many MCP sessions open (%d, %d more being made): end idle ones (DELETE with their Mcp-Session-Id) or raise --mcp-max-sessions", n, m.opening))
	}
	m.opening++
	return func() {
		m.openMu.Lock()
		m.opening--
		m.openMu.Unlock()
	}, nil
}

// mcpApp is one app's MCP server. Its tool list follows the app's current
// version: sync re-registers it when the version changed.
type mcpApp struct {
	name    string
	server  *mcp.Server
	handler *mcp.StreamableHTTPHandler

	mu     sync.Mutex
	synced *loadedApp
	tools  []string

	// calls serializes the tool calls of each MCP session (by id).
	calls keyedMutex
}

// maxMCPCallsPerSession bounds the tool calls of one MCP session running
// or waiting their turn at once. The SDK runs a call to its end whether or
// not its POST is still open, so without a bound a client could pile up
// waiting calls (and their goroutines) by sending calls and hanging up.
const maxMCPCallsPerSession = 16

// errTooManyCalls refuses a call past maxMCPCallsPerSession.
var errTooManyCalls = errors.New("too many tool calls in flight in this MCP session")

// keyedMutex is a mutex per key, held only while in use.
type keyedMutex struct {
	mu    sync.Mutex
	locks map[string]*keyedLock
	// max, when positive, bounds the holder and waiters of one key: past
	// it lock fails with errTooManyCalls.
	max int
}

type keyedLock struct {
	sem  chan struct{} // holds one token while locked
	refs int
}

// lock locks key, waiting until ctx is done at most, and returns the
// unlock function.
func (k *keyedMutex) lock(ctx context.Context, key string) (func(), error) {
	k.mu.Lock()
	if k.locks == nil {
		k.locks = map[string]*keyedLock{}
	}
	l := k.locks[key]
	if l == nil {
		l = &keyedLock{sem: make(chan struct{}, 1)}
		k.locks[key] = l
	}
	if k.max > 0 && l.refs >= k.max {
		k.mu.Unlock()
		return nil, fmt.Errorf("%w (%d): wait for their results", errTooManyCalls, k.max)
	}
	l.refs++
	k.mu.Unlock()
	release := func() {
		k.mu.Lock()
		if l.refs--; l.refs == 0 {
			delete(k.locks, key)
		}
		k.mu.Unlock()
	}
	select {
	case l.sem <- struct{}{}:
		return func() { <-l.sem; release() }, nil
	case <-ctx.Done():
		release()
		return nil, ctx.Err()
	}
}

func newMCPApps(s *Server, token string) *mcpApps {
	return &mcpApps{s: s, user: MCPUserID(token), byName: map[string]*mcpApp{}}
}

// get returns app name's MCP server, made on first use, and the app's
// current version; nil if the app is not served. The app is looked up
// under m.mu: a deletion removes the app before it calls changed, which
// takes m.mu too, so a server made here for an app being deleted is seen
// and forgotten by that call, never left behind.
func (m *mcpApps) get(name string) (*mcpApp, *loadedApp) {
	m.mu.Lock()
	defer m.mu.Unlock()
	la := m.s.apps.get(name)
	if la == nil {
		return nil, nil
	}
	if a := m.byName[name]; a != nil {
		return a, la
	}
	v := m.s.cfg.Version
	if v == "" {
		v = "dev"
	}
	a := &mcpApp{name: name, calls: keyedMutex{max: maxMCPCallsPerSession}}
	a.server = mcp.NewServer(&mcp.Implementation{Name: "adkhost/" + name, Version: v}, &mcp.ServerOptions{Logger: m.s.log.With("app", name, "mcp", true)})
	a.handler = mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return a.server }, &mcp.StreamableHTTPOptions{
		Logger:              m.s.log.With("app", name, "mcp", true),
		SessionTimeout:      m.s.cfg.MCPSessionTimeout,
		MaxRequestBodyBytes: m.s.cfg.Limits.RequestBytes,
	})
	m.byName[name] = a
	return a, la
}

// forget drops the MCP server of an app that is no longer served and
// closes its sessions; requests for it are answered 404 from now on.
func (m *mcpApps) forget(name string) {
	m.mu.Lock()
	a := m.byName[name]
	delete(m.byName, name)
	m.mu.Unlock()
	if a != nil {
		a.closeSessions()
	}
}

// closeIfForgotten closes the sessions of a if it was forgotten: a request
// that got a just before its app was deleted may have made a session
// after forget closed the others.
func (m *mcpApps) closeIfForgotten(a *mcpApp) {
	m.mu.Lock()
	current := m.byName[a.name] == a
	m.mu.Unlock()
	if !current {
		a.closeSessions()
	}
}

func (a *mcpApp) closeSessions() {
	for ss := range a.server.Sessions() {
		ss.Close()
	}
}

// changed follows a registration, replacement or deletion of app name at
// once, so that clients with an open stream hear of a new tool list
// without having to ask first.
func (m *mcpApps) changed(name string) {
	m.mu.Lock()
	a := m.byName[name]
	m.mu.Unlock()
	if a == nil {
		return // no client has used the app yet
	}
	if la := m.s.apps.get(name); la != nil {
		a.sync(m.s, la)
	} else {
		m.forget(name)
	}
}

// sessions counts the MCP sessions open, all apps together: those that
// completed the initialize handshake. The go-sdk also makes a session for
// each request without a session id before it knows what the request is;
// for a client's probe of the sessionless protocol (server/discover, which
// the go-sdk's and the Python SDK's clients send before initialize) it
// closes it right after, so those are left out, and are bounded by the
// requests in flight.
func (m *mcpApps) sessions() int {
	m.mu.Lock()
	apps := make([]*mcpApp, 0, len(m.byName))
	for _, a := range m.byName {
		apps = append(apps, a)
	}
	m.mu.Unlock()
	n := 0
	for _, a := range apps {
		for ss := range a.server.Sessions() {
			if ss.InitializeParams() != nil {
				n++
			}
		}
	}
	return n
}

// serveMCP is /mcp/{app} (POST, GET, DELETE: the streamable HTTP transport).
func (s *Server) serveMCP(c echo.Context) error {
	name := c.Param("app")
	la := s.apps.get(name)
	if la == nil {
		s.mcp.forget(name)
		return errorf(http.StatusNotFound, "App not found: "+name)
	}
	r := c.Request()
	rpcw := &jsonrpcErrors{ResponseWriter: c.Response(), id: json.RawMessage("null")}
	var w http.ResponseWriter = rpcw
	defer rpcw.finish()
	if r.ContentLength > s.cfg.Limits.RequestBytes {
		return &http.MaxBytesError{Limit: s.cfg.Limits.RequestBytes}
	}
	if r.Method == http.MethodPost {
		body, err := readBody(c, s.cfg.Limits.RequestBytes)
		if err != nil {
			return err
		}
		if e := checkMCPMessage(body); e != nil {
			return c.JSON(http.StatusBadRequest, map[string]any{"jsonrpc": "2.0", "id": nil, "error": e})
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		var msg struct {
			ID json.RawMessage `json:"id"`
		}
		if json.Unmarshal(body, &msg) == nil && len(msg.ID) > 0 {
			rpcw.id = msg.ID
		}
		if r.Header.Get("Mcp-Session-Id") == "" {
			// A new session (an initialize request).
			done, err := s.mcp.admitNew(s.cfg.MCPMaxSessions)
			if err != nil {
				return err
			}
			// The admission ends with the answer's first byte: a session
			// the request made is initialized by then, and counted among
			// the open ones (the client may already be opening another).
			release := sync.OnceFunc(done)
			defer release()
			w = &onFirstWrite{ResponseWriter: w, f: release}
		}
	}
	if r.Method == http.MethodGet {
		// A GET is the client's stream of server messages, open for the
		// session's life: shutdown ends it (POSTs, tool calls, drain).
		ctx, cancel := context.WithCancel(r.Context())
		defer cancel()
		defer context.AfterFunc(s.mcpStreams, cancel)()
		r = r.WithContext(ctx)
	}
	a, la := s.mcp.get(name)
	if a == nil { // deleted since the check above
		return errorf(http.StatusNotFound, "App not found: "+name)
	}
	a.sync(s, la)
	a.handler.ServeHTTP(w, r)
	s.mcp.closeIfForgotten(a)
	return nil
}

// onFirstWrite calls f before the first byte of the response is written.
type onFirstWrite struct {
	http.ResponseWriter
	f func()
}

func (w *onFirstWrite) WriteHeader(code int) {
	w.f()
	w.ResponseWriter.WriteHeader(code)
}

func (w *onFirstWrite) Write(b []byte) (int, error) {
	w.f()
	return w.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController flush the underlying writer.
func (w *onFirstWrite) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// jsonrpcErrors turns the SDK's plain-text answers to requests it cannot
// take (http.Error, 4xx: an unknown method, an unknown or ended session, a
// missing header...) into JSON-RPC error responses, keeping their HTTP
// status (clients open a new session on 404) and the SDK's text as the
// message. The SDK decides every such answer itself, so this takes no copy
// of its method table; a plain-text answer is told by the Content-Type
// http.Error sets. Server failures (5xx) are left as they are.
//
// The error of a 404 has id null, as the TypeScript SDK answers it: the
// go-sdk's client takes a 404 carrying an error to one of its requests for
// that request refused, and keeps using the session, but one with id null
// for the session's end (TestMCPErrorsAreJSONRPC holds it to that).
type jsonrpcErrors struct {
	http.ResponseWriter
	id      json.RawMessage // the request's; null when it has none
	started bool
	status  int // the plain-text error's, once one began
	text    []byte
}

// maxErrorText bounds the SDK's text kept for the JSON-RPC message.
const maxErrorText = 1024

// Codes of the JSON-RPC errors that stand for the SDK's plain-text ones:
// a session the server does not know (as the TypeScript SDK answers it),
// and a method no handler takes.
const (
	mcpCodeSessionNotFound = -32001
	sdkNotHandled          = "JSON RPC not handled"
)

func (w *jsonrpcErrors) WriteHeader(code int) {
	if w.started {
		return
	}
	w.started = true
	if code >= 400 && code < 500 && strings.HasPrefix(w.Header().Get("Content-Type"), "text/plain") {
		w.status = code
		return
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *jsonrpcErrors) Write(b []byte) (int, error) {
	if !w.started {
		w.WriteHeader(http.StatusOK)
	}
	if w.status == 0 {
		return w.ResponseWriter.Write(b)
	}
	if room := maxErrorText - len(w.text); room > 0 {
		w.text = append(w.text, b[:min(room, len(b))]...)
	}
	return len(b), nil
}

// finish writes the JSON-RPC error of a plain-text answer held back.
func (w *jsonrpcErrors) finish() {
	if w.status == 0 {
		return
	}
	msg := strings.TrimSpace(strings.ToValidUTF8(string(w.text), "\uFFFD"))
	id, code := w.id, jsonrpc.CodeInvalidRequest
	switch {
	case w.status == http.StatusNotFound:
		id, code = json.RawMessage("null"), mcpCodeSessionNotFound
	case strings.HasPrefix(msg, sdkNotHandled):
		code = jsonrpc.CodeMethodNotFound
	}
	body, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "error": &jsonrpc.Error{Code: int64(code), Message: msg}})
	if err != nil { // an id that is not JSON cannot reach here: the body parsed
		body = []byte(`{"jsonrpc":"2.0","id":null,"error":{"code":-32603,"message":"encoding an error"}}`)
	}
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Del("X-Content-Type-Options")
	w.ResponseWriter.WriteHeader(w.status)
	w.ResponseWriter.Write(body)
}

// Unwrap lets http.ResponseController flush the underlying writer.
func (w *jsonrpcErrors) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// checkMCPMessage refuses a POST body that is not one JSON-RPC message
// before the SDK reads it: a batch (MCP dropped them in 2025-06-18; the
// SDK still runs them for older sessions, so one request could fan out
// into as many tool calls as its bytes hold), invalid JSON, or a value
// that is not an object. The SDK answers the latter two in plain text;
// here they get a JSON-RPC error.
func checkMCPMessage(body []byte) *jsonrpc.Error {
	b := bytes.TrimLeft(body, " \t\r\n")
	switch {
	case len(b) == 0:
		return &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: "empty body: POST one JSON-RPC message"}
	case b[0] == '[':
		return &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: "JSON-RPC batches are not accepted (MCP removed them in 2025-06-18): POST one message per request"}
	}
	var v json.RawMessage
	if err := json.Unmarshal(b, &v); err != nil {
		return &jsonrpc.Error{Code: jsonrpc.CodeParseError, Message: "parse error: " + err.Error()}
	}
	if b[0] != '{' {
		return &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: "invalid request: a JSON-RPC message is an object"}
	}
	return nil
}

// mcpTool is a Wasm module tool of an app and the agent that has it.
type mcpTool struct {
	agent string
	tool  *host.Tool
}

// mcpTools returns the app's Wasm module tools by name, and their names in
// tree order (depth first from the root). A name that two agents use is
// served from the first; the others are logged.
func (s *Server) mcpTools(la *loadedApp) (map[string]mcpTool, []string) {
	out := map[string]mcpTool{}
	var order []string
	var walk func(a engine.Agent)
	walk = func(a engine.Agent) {
		if llm, ok := a.(*engine.LlmAgent); ok {
			for _, t := range llm.Config().Tools {
				ht, ok := t.(*host.Tool)
				if !ok {
					continue
				}
				if prev, dup := out[ht.Name()]; dup {
					if prev.tool != ht {
						s.log.Warn("mcp: two agents have a tool of this name; serving the first", "app", la.name, "tool", ht.Name(), "served", prev.agent, "hidden", llm.Name)
					}
					continue
				}
				out[ht.Name()] = mcpTool{agent: llm.Name, tool: ht}
				order = append(order, ht.Name())
			}
		}
		for _, sub := range a.Info().SubAgents {
			walk(sub)
		}
	}
	walk(la.app.Root)
	return out, order
}

// sync makes the MCP server's tool list that of la, if it is not yet.
// Clients with a session get notifications/tools/list_changed.
func (a *mcpApp) sync(s *Server, la *loadedApp) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.synced == la {
		return
	}
	tools, order := s.mcpTools(la)
	var gone []string
	for _, n := range a.tools {
		if _, ok := tools[n]; !ok {
			gone = append(gone, n)
		}
	}
	if len(gone) > 0 {
		a.server.RemoveTools(gone...)
	}
	a.tools = a.tools[:0]
	for _, n := range order {
		decl := tools[n].tool.Declaration()
		schema, err := mcpInputSchema(decl.ParametersJsonSchema)
		if err != nil {
			s.log.Warn("mcp: tool not served", "app", la.name, "tool", n, "err", err)
			a.server.RemoveTools(n)
			continue
		}
		if err := addMCPTool(a.server, &mcp.Tool{Name: n, Description: decl.Description, InputSchema: schema}, s.mcpToolHandler(a, n)); err != nil {
			s.log.Warn("mcp: tool not served", "app", la.name, "tool", n, "err", err)
			a.server.RemoveTools(n)
			continue
		}
		a.tools = append(a.tools, n)
	}
	a.synced = la
}

// addMCPTool adds t to srv. The go-sdk reports a tool it will not serve
// by panicking (an x-mcp-header annotation on a property that is not a
// string, integer or boolean, or two of them naming one header, ...), and
// the schema is the guest's: the panic becomes an error, the tool is left
// out, and neither the request syncing the list nor a replica's registry
// watcher (which has no recover) fails with it.
func addMCPTool(srv *mcp.Server, t *mcp.Tool, h mcp.ToolHandler) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("the MCP SDK refuses the tool's schema: %v", r)
		}
	}()
	srv.AddTool(t, h)
	return nil
}

// mcpInputSchema is a tool's parameters schema as MCP's inputSchema, which
// must be an object schema: no parameters is an object without
// properties. The tool's own schema is shared, so it is copied, never
// changed.
func mcpInputSchema(params any) (map[string]any, error) {
	if params == nil {
		return map[string]any{"type": "object", "properties": map[string]any{}}, nil
	}
	m, ok := params.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("parameters schema is a %T, not a JSON object", params)
	}
	switch t := m["type"]; t {
	case "object":
		return m, nil
	case nil:
		out := maps.Clone(m)
		out["type"] = "object"
		return out, nil
	default:
		return nil, fmt.Errorf("parameters schema has type %v: MCP tools take an object", t)
	}
}

// mcpToolHandler calls tool of app's current version in the MCP session's
// adkhost session. What the tool answers is the call's result: its
// function response as JSON text and as structuredContent. A tool that
// failed (after the on_tool_error callbacks) or needs the user's
// confirmation is a result with isError, so the model on the other side
// sees it; a store failure is a protocol error.
func (s *Server) mcpToolHandler(a *mcpApp, tool string) mcp.ToolHandler {
	app := a.name
	return func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		// The calls of one MCP session run one at a time, each on the
		// state the previous one left: concurrent calls would append
		// through stale copies of the session.
		unlock, err := a.calls.lock(ctx, req.Session.ID())
		if errors.Is(err, errTooManyCalls) {
			return nil, &jsonrpc.Error{Code: mcpCodeBusy, Message: err.Error()}
		}
		if err != nil {
			return nil, err
		}
		defer unlock()
		// A tool call is a run: it counts against --max-runs with /run and
		// /run_sse (the 16 calls an MCP session may queue wait on its lock,
		// not here; one runs at a time).
		release, ok := s.takeRunSlot()
		if !ok {
			return nil, &jsonrpc.Error{Code: mcpCodeBusy, Message: s.tooManyRuns()}
		}
		defer release()
		la := s.apps.acquire(app)
		if la == nil {
			return nil, fmt.Errorf("app %q is no longer served", app)
		}
		defer la.release()
		tools, _ := s.mcpTools(la)
		t, ok := tools[tool]
		if !ok {
			// The app was replaced by a version without the tool, and the
			// client has not listed the tools again yet.
			return toolError(fmt.Sprintf("tool %q is no longer served by app %q: list the tools again", tool, app)), nil
		}
		args := map[string]any{}
		if raw := req.Params.Arguments; len(raw) > 0 && string(raw) != "null" {
			if err := json.Unmarshal(raw, &args); err != nil {
				return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("tool %q: arguments must be a JSON object: %v", tool, err)}
			}
		}
		sessionID := req.Session.ID()
		if err := checkID("MCP session id", sessionID); err != nil {
			return nil, err
		}
		if err := s.ensureSession(ctx, app, s.mcp.user, sessionID); err != nil {
			return nil, err
		}
		md := map[string]any{"adkhost_mcp_session": sessionID}
		if p := req.Session.InitializeParams(); p != nil && p.ClientInfo != nil && p.ClientInfo.Name != "" {
			md["adkhost_mcp_client"] = truncateUTF8(p.ClientInfo.Name, maxClientNameBytes)
		}
		invID := "e-" + uuid.NewString()
		// As /run: the result is the acknowledgment, so the call's events
		// are queued and waited for once, before it is sent.
		qctx, pend := session.WithPending(ctx)
		res, err := la.runner.CallTool(qctx, engine.DirectToolCall{UserID: s.mcp.user, SessionID: sessionID, Agent: t.agent,
			Tool: tool, Args: args, CustomMetadata: md, InvocationID: invID, Limits: s.cfg.Limits.RunConfig()})
		if werr := pend.Wait(); werr != nil {
			err = werr // the events were not stored: not the tool's error
		}
		s.obs.finish(invID, err)
		var te *engine.ToolError
		var ce *engine.ConfirmationRequiredError
		switch {
		case errors.As(err, &te):
			return toolError(te.Err.Error()), nil
		case errors.As(err, &ce):
			return toolError(ce.Error()), nil
		case err != nil:
			s.log.Warn("mcp tool call failed", "app", app, "tool", tool, "session", sessionID, "err", err)
			return nil, fmt.Errorf("tool %q: %w", tool, err)
		}
		text, err := json.Marshal(res.Response)
		if err != nil {
			return nil, fmt.Errorf("tool %q: encoding the result: %w", tool, err)
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(text)}}, StructuredContent: res.Response}, nil
	}
}

// mcpCodeBusy is the JSON-RPC error of a call refused for the calls
// already in flight (in the range JSON-RPC leaves to servers).
const mcpCodeBusy = -32000

func toolError(msg string) *mcp.CallToolResult {
	return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: msg}}}
}

// ensureSession creates the adkhost session of an MCP session on its first
// tool call.
func (s *Server) ensureSession(ctx context.Context, app, user, id string) error {
	svc := s.cfg.Stores.Sessions
	_, err := svc.Get(ctx, &session.GetRequest{AppName: app, UserID: user, SessionID: id, NumRecentEvents: 1})
	if errors.Is(err, session.ErrNotFound) {
		_, err = svc.Create(ctx, &session.CreateRequest{AppName: app, UserID: user, SessionID: id})
		if errors.Is(err, session.ErrAlreadyExists) {
			err = nil // a concurrent first call made it
		}
	}
	if err != nil {
		return fmt.Errorf("the adkhost session of MCP session %s: %w", id, err)
	}
	return nil
}

// truncateUTF8 cuts s to at most n bytes on a rune boundary.
func truncateUTF8(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}
