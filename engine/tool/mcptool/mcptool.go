// Package mcptool is google-adk's McpToolset: the tools an MCP server
// lists, offered to the model as engine tools, over the official MCP Go SDK
// (stdio, streamable HTTP, or the older HTTP+SSE transport).
//
// It mirrors google-adk 2.13 (tools/mcp_tool): declarations carry the
// server's input and output schemas as JSON Schema, with descriptions
// fenced as untrusted; a call's result is the MCP CallToolResult as a
// function response ({"content": [...], "isError": false, ...}); a failed
// call answers the model with {"error": "..."} instead of failing the run.
//
// Session lifetime, as google-adk's MCPSessionManager: a Toolset holds one
// MCP session, opened on first use and shared by every invocation and every
// adkhost session of the app; it is reopened when the server drops it,
// closed after IdleTimeout without use, and closed by Close. The tool list
// is fetched once per invocation.
package mcptool

import (
	"cmp"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/adkhost/adkhost/callbacks"
	"github.com/adkhost/adkhost/engine/tool"
)

// Defaults, from google-adk where it has one.
const (
	// DefaultTimeout bounds connecting, listing tools, and a stdio server's
	// calls (google-adk's connection params' timeout, 5 s).
	DefaultTimeout = 5 * time.Second
	// DefaultReadTimeout bounds an HTTP server's calls (google-adk's
	// sse_read_timeout, 5 minutes).
	DefaultReadTimeout = 5 * time.Minute
	// DefaultIdleTimeout closes a session unused this long (google-adk's
	// 900 s idle TTL).
	DefaultIdleTimeout = 15 * time.Minute
	// DefaultMaxTools bounds the tools one server may list.
	DefaultMaxTools = 1000
	// DefaultMaxResponseBytes bounds one message from the server (a tool
	// list page, a call's result), and the tools of a listing together.
	DefaultMaxResponseBytes = 4 << 20
	// DefaultProtocolVersion is offered in the initialize handshake: the
	// newest version of that handshake, which google-adk 2.13 speaks unless
	// ADK_ENABLE_MCP_MODERN_PROTOCOL is set.
	DefaultProtocolVersion = "2025-11-25"
)

// StdioServer is a server run as a local process, spoken to over its
// stdin and stdout (google-adk's StdioServerParameters).
type StdioServer struct {
	Command string
	Args    []string
	// Env is added to the process's environment, which otherwise holds
	// only HOME, LOGNAME, PATH, SHELL, TERM and USER from this process's,
	// as the Python MCP SDK's stdio client does.
	Env map[string]string
	// Dir is the working directory; "" means this process's.
	Dir string
}

// HTTPServer is a remote server: streamable HTTP, or the HTTP+SSE
// transport with SSE set.
type HTTPServer struct {
	URL string
	// Headers are sent with every request.
	Headers map[string]string
	// SSE selects the HTTP+SSE transport (google-adk's
	// sse_connection_params).
	SSE bool
	// Client makes the requests; nil means http.DefaultClient. Whoever
	// configures the toolset decides here what it may reach (adkhost's
	// app definitions pass a client that enforces the app's host list and
	// refuses private addresses).
	Client *http.Client
}

// Config configures New. Exactly one of Stdio and HTTP is set.
type Config struct {
	Stdio *StdioServer
	HTTP  *HTTPServer
	// Timeout bounds connecting and listing tools, and each call to a stdio
	// server; 0 means DefaultTimeout.
	Timeout time.Duration
	// ReadTimeout bounds each call to an HTTP server; 0 means
	// DefaultReadTimeout.
	ReadTimeout time.Duration
	// IdleTimeout closes the session when unused this long; 0 means
	// DefaultIdleTimeout.
	IdleTimeout time.Duration
	// ToolFilter, when not empty, keeps only the tools of these names (the
	// server's names, before the prefix).
	ToolFilter []string
	// ToolNamePrefix, when set, names each tool "<prefix>_<name>".
	ToolNamePrefix string
	// MaxTools bounds the number of tools the server may list; 0 means
	// DefaultMaxTools. A longer list fails the listing.
	MaxTools int
	// MaxResponseBytes bounds each message from the server, and the JSON
	// of the tools a listing returns, all its pages together; 0 means
	// DefaultMaxResponseBytes.
	MaxResponseBytes int
	// ListCacheTTL, when set, reuses a tools/list answer for this long
	// across invocations (google-adk's tool_list_cache_ttl_seconds); 0
	// lists once per invocation.
	ListCacheTTL time.Duration
	// ProtocolVersion is the MCP version offered; "" means
	// DefaultProtocolVersion. "2026-07-28" selects the stateless protocol
	// (server/discover), falling back to the handshake.
	ProtocolVersion string
	// Name names the toolset in logs; "" means the server's URL or command.
	Name string
	// Logger receives the session's events and a stdio server's stderr;
	// nil discards them.
	Logger *slog.Logger
}

// Toolset is an MCP server's tools (tool.Toolset). It is safe for
// concurrent use.
type Toolset struct {
	cfg    Config
	name   string
	log    *slog.Logger
	sess   *sessions
	filter map[string]bool

	mu sync.Mutex
	// byInvocation caches the tool list per invocation, as google-adk's
	// BaseToolset does: one tools/list per invocation, not per request.
	byInvocation map[string][]tool.Tool
	order        []string
	// listed and listedUntil hold the last listing under ListCacheTTL.
	listed      []*mcpTool
	listedUntil time.Time
}

// maxCachedInvocations bounds the per-invocation cache.
const maxCachedInvocations = 64

var _ tool.Toolset = (*Toolset)(nil)

// New checks cfg and returns a Toolset. It does not connect: the session
// opens when the tools are first listed.
func New(cfg Config) (*Toolset, error) {
	switch {
	case (cfg.Stdio == nil) == (cfg.HTTP == nil):
		return nil, errors.New("mcptool: exactly one of a stdio server and an HTTP server is needed")
	case cfg.Stdio != nil && cfg.Stdio.Command == "":
		return nil, errors.New("mcptool: the stdio server has no command")
	case cfg.HTTP != nil:
		u, err := url.Parse(cfg.HTTP.URL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return nil, fmt.Errorf("mcptool: the server URL %q is not an absolute http or https URL", cfg.HTTP.URL)
		}
	}
	if cfg.Timeout < 0 || cfg.ReadTimeout < 0 || cfg.IdleTimeout < 0 || cfg.ListCacheTTL < 0 || cfg.MaxTools < 0 || cfg.MaxResponseBytes < 0 {
		return nil, errors.New("mcptool: timeouts and bounds cannot be negative")
	}
	cfg.Timeout = cmp.Or(cfg.Timeout, DefaultTimeout)
	cfg.ReadTimeout = cmp.Or(cfg.ReadTimeout, DefaultReadTimeout)
	cfg.IdleTimeout = cmp.Or(cfg.IdleTimeout, DefaultIdleTimeout)
	cfg.MaxTools = cmp.Or(cfg.MaxTools, DefaultMaxTools)
	cfg.MaxResponseBytes = cmp.Or(cfg.MaxResponseBytes, DefaultMaxResponseBytes)
	cfg.ProtocolVersion = cmp.Or(cfg.ProtocolVersion, DefaultProtocolVersion)
	ts := &Toolset{cfg: cfg, name: cfg.Name, log: cfg.Logger, byInvocation: map[string][]tool.Tool{}}
	if ts.log == nil {
		ts.log = slog.New(slog.DiscardHandler)
	}
	if ts.name == "" {
		if cfg.Stdio != nil {
			ts.name = strings.Join(append([]string{cfg.Stdio.Command}, cfg.Stdio.Args...), " ")
		} else {
			ts.name = redactURL(cfg.HTTP.URL)
		}
	}
	if len(cfg.ToolFilter) > 0 {
		ts.filter = map[string]bool{}
		for _, n := range cfg.ToolFilter {
			ts.filter[n] = true
		}
	}
	ts.sess = newSessions(&ts.cfg, ts.log.With("mcp_server", ts.name))
	return ts, nil
}

// Name is the server's URL (without credentials or query) or command line.
func (ts *Toolset) Name() string { return "MCP server " + ts.name }

// reservedNames are names the engine itself puts on the wire; a server
// tool of one of these names is skipped, as google-adk skips it, so it
// can never be dispatched in place of the engine's own.
var reservedNames = map[string]bool{
	"adk_request_credential":   true,
	"adk_request_confirmation": true,
	"adk_request_input":        true,
	"transfer_to_agent":        true,
	"set_model_response":       true,
}

// validFunctionName reports whether a tool name is one Gemini takes for a
// function (a letter or '_', then letters, digits, '_', '.', ':' or '-',
// 64 at most). A server's tool named otherwise would fail every model
// request of the agent that offers it, so it is skipped instead.
func validFunctionName(n string) bool {
	if n == "" || len(n) > 64 {
		return false
	}
	for i, c := range []byte(n) {
		switch {
		case c == '_', c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z':
		case i > 0 && (c >= '0' && c <= '9' || c == '.' || c == ':' || c == '-'):
		default:
			return false
		}
	}
	return true
}

// Tools lists the server's tools for the invocation: filtered (a name
// listed twice, reserved, or that model APIs refuse is skipped), sorted by
// name (a server's order is not contractual, and a stable order keeps the
// model's context cache warm), then prefixed. The list is fetched once per
// invocation; a failed listing is retried once on a fresh session.
func (ts *Toolset) Tools(ctx callbacks.ReadonlyContext) ([]tool.Tool, error) {
	inv := ctx.InvocationID()
	ts.mu.Lock()
	cached, ok := ts.byInvocation[inv]
	ts.mu.Unlock()
	if ok {
		return cached, nil
	}
	ts.mu.Lock()
	listed := ts.listed
	if time.Now().After(ts.listedUntil) {
		listed = nil
	}
	ts.mu.Unlock()
	if listed == nil {
		var err error
		if listed, err = ts.sess.listTools(ctx); err != nil {
			return nil, fmt.Errorf("failed to get tools from MCP server %s: %w", ts.name, err)
		}
		if ts.cfg.ListCacheTTL > 0 {
			ts.mu.Lock()
			ts.listed, ts.listedUntil = listed, time.Now().Add(ts.cfg.ListCacheTTL)
			ts.mu.Unlock()
		}
	}
	var out []tool.Tool
	seen := map[string]bool{}
	for _, t := range listed {
		if seen[t.Name] {
			ts.log.Warn("skipping an MCP tool listed twice", "mcp_server", ts.name, "tool", t.Name)
			continue
		}
		seen[t.Name] = true
		if reservedNames[t.Name] {
			ts.log.Warn("skipping an MCP tool whose name is reserved by the engine", "mcp_server", ts.name, "tool", t.Name)
			continue
		}
		if ts.filter != nil && !ts.filter[t.Name] {
			continue
		}
		mt, err := newTool(ts, t)
		if err != nil {
			ts.log.Warn("skipping an MCP tool", "mcp_server", ts.name, "tool", t.Name, "err", err)
			continue
		}
		if t.Name == "" || !validFunctionName(mt.name) {
			ts.log.Warn("skipping an MCP tool whose name model APIs refuse", "mcp_server", ts.name, "tool", mt.name)
			continue
		}
		out = append(out, mt)
	}
	slices.SortStableFunc(out, func(a, b tool.Tool) int { return strings.Compare(a.(*Tool).remote, b.(*Tool).remote) })
	ts.mu.Lock()
	if len(ts.order) >= maxCachedInvocations {
		delete(ts.byInvocation, ts.order[0])
		ts.order = ts.order[1:]
	}
	if _, dup := ts.byInvocation[inv]; !dup {
		ts.order = append(ts.order, inv)
	}
	ts.byInvocation[inv] = out
	ts.mu.Unlock()
	return out, nil
}

// Close closes the session (ending a stdio server's process). The toolset
// may be used again: the next listing opens a new session.
func (ts *Toolset) Close() error {
	ts.mu.Lock()
	clear(ts.byInvocation)
	ts.order, ts.listed = nil, nil
	ts.mu.Unlock()
	return ts.sess.close()
}

// redactURL drops the user info and query of a URL shown in logs and
// errors, which may hold credentials.
func redactURL(s string) string {
	u, err := url.Parse(s)
	if err != nil {
		return "<invalid URL>"
	}
	u.User = nil
	u.RawQuery, u.Fragment = "", ""
	return u.String()
}

// mcpTool aliases the SDK's tool for the files of this package.
type mcpTool = mcp.Tool
