package appdef

import (
	"errors"
	"fmt"
	"math"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/adkhost/adkhost/engine/tool/mcptool"
	"github.com/adkhost/adkhost/sandbox"
)

// mcpToolsetNames are the spellings of google-adk's McpToolset in a config
// (config_agent_utils' _MCP_TOOLSET_NAMES).
var mcpToolsetNames = map[string]bool{
	"MCPToolset": true, "McpToolset": true,
	"google.adk.tools.MCPToolset": true, "google.adk.tools.McpToolset": true,
	"google.adk.tools.mcp_tool.MCPToolset": true, "google.adk.tools.mcp_tool.McpToolset": true,
	"google.adk.tools.mcp_tool.mcp_toolset.MCPToolset": true, "google.adk.tools.mcp_tool.mcp_toolset.McpToolset": true,
}

// AllowStdioMCPEnv is google-adk's switch for stdio MCP servers in agent
// configs; adkhost's commands read it (and a flag) into
// Env.AllowStdioMCP.
const AllowStdioMCPEnv = "ADK_ALLOW_CONFIG_STDIO_MCP_SERVERS"

// EnvEnabled reports whether an environment value turns a switch on, as
// google-adk's is_env_enabled reads it: 1, true, yes or on, in any case.
func EnvEnabled(v string) bool {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "1", "true", "yes", "on":
		return true
	}
	return false
}

// mcpRef is an MCPToolset entry, checked; the toolset is made when the
// agent is built, with the app's MCP settings.
type mcpRef struct {
	cfg mcptool.Config
	// url is the HTTP server's URL, whose host the app may reach; urlAt
	// is where it is written.
	url   *url.URL
	urlAt val
	// cacheTTL is google-adk's tool_list_cache_ttl_seconds.
	cacheTTL time.Duration
}

// mcpSettings is the adkhost block's mcp entry: what the app's network MCP
// servers may reach, beyond each server's own host, and their bounds.
type mcpSettings struct {
	// grant holds hosts (beyond each server's own), allow_private and
	// max_response_bytes, read as a module's HTTP grant is.
	grant    sandbox.HTTPGrant
	maxTools int
}

// parseMCPToolset reads {name: MCPToolset, args: {<one of the connection
// params>, tool_filter, tool_name_prefix, ...}} (google-adk's
// McpToolsetConfig).
func (l *loader) parseMCPToolset(t *toolRef, args *entry) bool {
	const want = "want {streamable_http_connection_params: {url: ...}}, {sse_connection_params: {url: ...}}, {stdio_server_params: {command: ..., args: [...]}} or {stdio_connection_params: {server_params: {...}, timeout: ...}}, with tool_filter and tool_name_prefix"
	if args == nil || args.val.isNull() {
		l.add(t.at.errf("MCPToolset needs args: %s", want))
		return false
	}
	entries, ok := args.val.mapping()
	if !ok {
		l.add(args.val.errf("%s, got %s", want, args.val.kind()))
		return false
	}
	ref := &mcpRef{}
	var conns []entry
	valid := true
	fields := []string{"stdio_server_params", "stdio_connection_params", "sse_connection_params", "streamable_http_connection_params", "tool_filter", "tool_name_prefix", "tool_list_cache_ttl_seconds", "auth_scheme", "auth_credential", "credential_key", "use_mcp_resources"}
	for _, e := range entries {
		switch e.key {
		case "stdio_server_params", "stdio_connection_params", "sse_connection_params", "streamable_http_connection_params":
			if !e.val.isNull() {
				conns = append(conns, e)
			}
		case "tool_filter":
			if e.val.isNull() {
				continue
			}
			items, ok := e.val.list()
			if !ok {
				l.add(e.val.errf("want a list of tool names, got %s", e.val.kind()))
				valid = false
				continue
			}
			for _, it := range items {
				s, ok := l.str(it)
				valid = valid && ok
				ref.cfg.ToolFilter = append(ref.cfg.ToolFilter, s)
			}
		case "tool_name_prefix":
			s, ok := l.optStr(e.val)
			valid = valid && ok
			ref.cfg.ToolNamePrefix = s
		case "tool_list_cache_ttl_seconds":
			if e.val.isNull() {
				continue
			}
			ref.cacheTTL = l.seconds(e.val)
			valid = valid && ref.cacheTTL > 0
		case "auth_scheme", "auth_credential", "credential_key":
			if !e.val.isNull() {
				l.add(e.keyAt.errf("not supported: %s (google-adk's credential exchange); send a token with the connection params' headers, e.g. headers: {Authorization: Bearer ...}", e.key))
				valid = false
			}
		case "use_mcp_resources":
			if b, ok := l.optBool(e.val); ok && b {
				l.add(e.val.errf("not supported: use_mcp_resources (the load_mcp_resource tool)"))
				valid = false
			}
		default:
			l.add(e.keyAt.errf("unknown field %q%s", e.key, didYouMean(e.key, fields)))
			valid = false
		}
	}
	if len(conns) != 1 {
		// google-adk's McpToolsetConfig validator, word for word.
		l.add(args.val.errf("Exactly one of stdio_server_params, stdio_connection_params, sse_connection_params, streamable_http_connection_params must be set."))
		return false
	}
	c := conns[0]
	switch c.key {
	case "stdio_server_params", "stdio_connection_params":
		if !l.env.AllowStdioMCP {
			l.add(c.keyAt.errf("Stdio MCP servers are not allowed in app definitions: the command would run as a local process on the server, outside the sandbox, so an untrusted definition could run anything. Use a remote server (streamable_http_connection_params or sse_connection_params), or start adkhost with --allow-stdio-mcp (or %s=1) if it registers only definitions it trusts.", AllowStdioMCPEnv))
			return false
		}
		if c.key == "stdio_server_params" {
			ref.cfg.Stdio = l.parseStdioServer(c.val)
		} else {
			ref.cfg.Stdio = l.parseStdioConnection(c.val, &ref.cfg)
		}
	case "sse_connection_params", "streamable_http_connection_params":
		ref.cfg.HTTP, ref.url, ref.urlAt = l.parseHTTPConnection(c.val, &ref.cfg)
		ref.cfg.HTTP.SSE = c.key == "sse_connection_params"
	}
	if !valid || (ref.cfg.Stdio == nil && ref.url == nil) {
		return false
	}
	t.mcp = ref
	return true
}

// parseStdioServer reads google-adk's StdioServerParameters: command,
// args, env, cwd (encoding and encoding_error_handler only as UTF-8).
func (l *loader) parseStdioServer(v val) *mcptool.StdioServer {
	entries, ok := v.mapping()
	if !ok {
		l.add(v.errf("want {command: <program>, args: [...], env: {...}}, got %s", v.kind()))
		return nil
	}
	s := &mcptool.StdioServer{}
	for _, e := range entries {
		switch e.key {
		case "command":
			s.Command, _ = l.str(e.val)
		case "args":
			if e.val.isNull() {
				continue
			}
			items, ok := e.val.list()
			if !ok {
				l.add(e.val.errf("want a list of strings, got %s", e.val.kind()))
				continue
			}
			for _, it := range items {
				a, _ := l.str(it)
				s.Args = append(s.Args, a)
			}
		case "env":
			s.Env = l.stringMap(e.val)
		case "cwd":
			s.Dir, _ = l.optStr(e.val)
		case "encoding":
			if enc, ok := l.optStr(e.val); ok && enc != "" && !strings.EqualFold(strings.ReplaceAll(enc, "-", ""), "utf8") {
				l.add(e.val.errf("not supported: encoding %q; MCP over stdio is UTF-8 here", enc))
			}
		case "encoding_error_handler":
			l.optStr(e.val)
		default:
			l.add(e.keyAt.errf("unknown field %q%s", e.key, didYouMean(e.key, []string{"command", "args", "env", "cwd", "encoding", "encoding_error_handler"})))
		}
	}
	if s.Command == "" {
		l.add(v.errf("the stdio server needs a command"))
		return nil
	}
	return s
}

// parseStdioConnection reads google-adk's StdioConnectionParams:
// server_params and timeout.
func (l *loader) parseStdioConnection(v val, cfg *mcptool.Config) *mcptool.StdioServer {
	entries, ok := v.mapping()
	if !ok {
		l.add(v.errf("want {server_params: {command: ...}, timeout: <seconds>}, got %s", v.kind()))
		return nil
	}
	var s *mcptool.StdioServer
	for _, e := range entries {
		switch e.key {
		case "server_params":
			s = l.parseStdioServer(e.val)
		case "timeout":
			cfg.Timeout = l.seconds(e.val)
		default:
			l.add(e.keyAt.errf("unknown field %q%s", e.key, didYouMean(e.key, []string{"server_params", "timeout"})))
		}
	}
	if s == nil && ok {
		l.add(v.errf("stdio_connection_params needs server_params: {command: ...}"))
	}
	return s
}

// parseHTTPConnection reads google-adk's StreamableHTTPConnectionParams or
// SseConnectionParams: url, headers, timeout, sse_read_timeout,
// terminate_on_close.
func (l *loader) parseHTTPConnection(v val, cfg *mcptool.Config) (*mcptool.HTTPServer, *url.URL, val) {
	h := &mcptool.HTTPServer{}
	entries, ok := v.mapping()
	if !ok {
		l.add(v.errf("want {url: <http(s) URL>, headers: {...}, timeout: <seconds>}, got %s", v.kind()))
		return h, nil, v
	}
	var u *url.URL
	at := v
	for _, e := range entries {
		switch e.key {
		case "url":
			s, ok := l.str(e.val)
			if !ok {
				continue
			}
			p, err := url.Parse(s)
			if err != nil || (p.Scheme != "http" && p.Scheme != "https") || p.Hostname() == "" || p.User != nil {
				l.add(e.val.errf("want an absolute http or https URL without user info, got %q", s))
				continue
			}
			h.URL, u, at = s, p, e.val
		case "headers":
			h.Headers = l.headers(e.val)
		case "timeout":
			cfg.Timeout = l.seconds(e.val)
		case "sse_read_timeout":
			cfg.ReadTimeout = l.seconds(e.val)
		case "terminate_on_close":
			// The session is always ended with DELETE on close, as
			// google-adk's default; false is accepted and not honoured.
			l.optBool(e.val)
		case "httpx_client_factory":
			l.add(e.keyAt.errf("not supported: Python code references (httpx_client_factory)"))
		default:
			l.add(e.keyAt.errf("unknown field %q%s", e.key, didYouMean(e.key, []string{"url", "headers", "timeout", "sse_read_timeout", "terminate_on_close"})))
		}
	}
	if u == nil && h.URL == "" {
		if _, has := findKey(entries, "url"); !has {
			l.add(v.errf("the connection params need a url"))
		}
	}
	return h, u, at
}

func findKey(entries []entry, k string) (entry, bool) {
	for _, e := range entries {
		if e.key == k {
			return e, true
		}
	}
	return entry{}, false
}

// headers reads HTTP headers: names valid as HTTP field names, scalar
// values (google-adk's dict[str, Any], sent as their text).
func (l *loader) headers(v val) map[string]string {
	if v.isNull() {
		return nil
	}
	entries, ok := v.mapping()
	if !ok {
		l.add(v.errf("want a mapping of header names to values, got %s", v.kind()))
		return nil
	}
	out := make(map[string]string, len(entries))
	for _, e := range entries {
		if !validHeaderName(e.key) {
			l.add(e.keyAt.errf("%q is not a valid HTTP header name", e.key))
			continue
		}
		var s string
		if str, ok := e.val.str(); ok {
			s = str
		} else if n, ok := e.val.integer(); ok {
			s = strconv.FormatInt(n, 10)
		} else if b, ok := e.val.boolean(); ok {
			s = map[bool]string{true: "True", false: "False"}[b] // Python's str()
		} else {
			l.add(e.val.errf("want a string, got %s", e.val.kind()))
			continue
		}
		if strings.ContainsAny(s, "\r\n\x00") {
			l.add(e.val.errf("a header value cannot hold line breaks or NUL"))
			continue
		}
		out[e.key] = s
	}
	return out
}

func validHeaderName(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if r > 0x7e || r <= ' ' || strings.ContainsRune("\"(),/:;<=>?@[\\]{}", r) {
			return false
		}
	}
	return true
}

// seconds reads a positive number of seconds (google-adk's float
// timeouts).
func (l *loader) seconds(v val) time.Duration {
	f, ok := v.number()
	if !ok || f <= 0 || f > math.MaxInt64/float64(time.Second) || math.IsNaN(f) {
		l.add(v.errf("want a positive number of seconds"))
		return 0
	}
	return time.Duration(f * float64(time.Second))
}

// parseMCPSettings reads adkhost.mcp: {hosts, allow_private,
// max_response_bytes, max_tools}.
func (l *loader) parseMCPSettings(v val) {
	if v.isNull() {
		return
	}
	entries, ok := v.mapping()
	if !ok {
		l.add(v.errf("want {hosts: [...], allow_private: false, max_response_bytes: N, max_tools: N}, got %s", v.kind()))
		return
	}
	s := &l.ext.mcp
	for _, e := range entries {
		switch {
		case e.key == "max_tools":
			s.maxTools = l.size(e.val)
		case !l.httpGrantField(e, &s.grant):
			l.add(e.keyAt.errf("unknown field %q%s", e.key, didYouMean(e.key, []string{"hosts", "allow_private", "max_response_bytes", "max_tools"})))
		}
	}
}

// mcpToolset makes the toolset of an entry. A network server is reached
// with a client obeying the rule of a module's HTTP grant: only the
// server's own host and the hosts of adkhost.mcp (redirects included),
// and no private or loopback address unless adkhost.mcp.allow_private.
func (l *loader) mcpToolset(r *mcpRef) (*mcptool.Toolset, error) {
	cfg := r.cfg
	cfg.Logger = l.log.With("app", l.src.Name)
	cfg.MaxTools = l.ext.mcp.maxTools
	cfg.MaxResponseBytes = l.ext.mcp.grant.MaxResponseBytes
	cfg.ListCacheTTL = r.cacheTTL
	if cfg.HTTP != nil {
		if !l.ext.mcp.grant.AllowPrivate && nonPublicHost(r.url.Hostname()) {
			w := r.urlAt.errf("%s is a loopback or private address: calls to this MCP server will be refused unless adkhost.mcp.allow_private is true", r.url.Hostname())
			l.warnings = append(l.warnings, w.Error())
			l.log.Warn("appdef: MCP server on a private address", "app", l.src.Name, "url", r.url.Redacted())
		}
		h := *cfg.HTTP
		port := r.url.Port()
		if port == "" {
			port = map[string]string{"http": "80", "https": "443"}[r.url.Scheme]
		}
		g := sandbox.HTTPGrant{
			Hosts:        append([]string{net.JoinHostPort(r.url.Hostname(), port)}, l.ext.mcp.grant.Hosts...),
			AllowPrivate: l.ext.mcp.grant.AllowPrivate,
		}
		c := g.Client()
		c.Transport = hintTransport{c.Transport}
		h.Client = c
		cfg.HTTP = &h
	}
	return mcptool.New(cfg)
}

// nonPublicHost reports whether a URL's host names a loopback or private
// address as written (a name that resolves to one is refused when dialled).
func nonPublicHost(h string) bool {
	if strings.EqualFold(h, "localhost") || strings.HasSuffix(strings.ToLower(h), ".localhost") {
		return true
	}
	a, err := netip.ParseAddr(h)
	return err == nil && (!a.Unmap().IsGlobalUnicast() || a.Unmap().IsPrivate())
}

// hintTransport says how to allow a destination the app's MCP settings
// refuse.
type hintTransport struct{ base http.RoundTripper }

func (t hintTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := t.base.RoundTrip(req)
	if err != nil && errors.Is(err, sandbox.ErrDestinationDenied) {
		return nil, fmt.Errorf("%w (an app's MCP servers reach their own host; list others under adkhost.mcp.hosts, and allow private or loopback addresses with adkhost.mcp.allow_private: true)", err)
	}
	return resp, err
}
