package mcptool

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"google.golang.org/genai"

	"github.com/adkhost/adkhost/callbacks"
	"github.com/adkhost/adkhost/engine/model"
	"github.com/adkhost/adkhost/engine/tool"
	"github.com/adkhost/adkhost/internal/pyfmt"
)

// Tool is one tool of an MCP server (google-adk's McpTool).
type Tool struct {
	ts *Toolset
	// name is what the model calls (prefixed); remote is the server's.
	name, remote string
	description  string
	input        any
	output       any
	decl         *genai.FunctionDeclaration
}

var (
	_ tool.Tool             = (*Tool)(nil)
	_ tool.RequestProcessor = (*Tool)(nil)
)

func newTool(ts *Toolset, t *mcpTool) (*Tool, error) {
	mt := &Tool{ts: ts, name: t.Name, remote: t.Name, description: t.Description}
	if ts.cfg.ToolNamePrefix != "" {
		mt.name = ts.cfg.ToolNamePrefix + "_" + t.Name
	}
	var err error
	if mt.input, err = plainJSON(t.InputSchema); err != nil {
		return nil, fmt.Errorf("input schema: %w", err)
	}
	if t.OutputSchema != nil {
		if mt.output, err = plainJSON(t.OutputSchema); err != nil {
			return nil, fmt.Errorf("output schema: %w", err)
		}
	}
	// What the model sees: the server's schemas as JSON Schema (google-adk's
	// parameters_json_schema and response_json_schema), fenced.
	mt.decl = &genai.FunctionDeclaration{Name: mt.name, Description: fenceDescription(mt.description)}
	if mt.input != nil {
		mt.decl.ParametersJsonSchema = fenceSchema(mt.input, false)
	}
	if mt.output != nil {
		mt.decl.ResponseJsonSchema = fenceSchema(mt.output, false)
	}
	return mt, nil
}

// Name is the name the model calls: "<prefix>_<server's name>" with a
// prefix.
func (t *Tool) Name() string { return t.name }

// Description is the server's description, unfenced.
func (t *Tool) Description() string { return t.description }
func (t *Tool) IsLongRunning() bool { return false }

// RemoteName is the tool's name on the server.
func (t *Tool) RemoteName() string { return t.remote }

// Declaration is the declaration sent to the model: the description and
// every description in the schemas fenced as untrusted.
func (t *Tool) Declaration() *genai.FunctionDeclaration {
	d := *t.decl
	return &d
}

// ProcessRequest adds, once per request, the system instruction's note that
// fenced descriptions are data.
func (t *Tool) ProcessRequest(_ callbacks.ToolContext, req *model.Request) error {
	if !strings.Contains(req.SystemInstructionText(), DescriptionPreamble) {
		req.AppendInstructions(DescriptionPreamble)
	}
	return nil
}

// Run calls the tool on the server. Its result is the MCP CallToolResult as
// google-adk dumps it: {"content": [...], "isError": bool} plus
// "structuredContent" and "meta" when the server sent them. A call that
// fails (the server answers with a JSON-RPC error, the session cannot be
// opened, the call times out) answers the model with {"error": "..."}, as
// google-adk 2.13 does, and the run goes on.
func (t *Tool) Run(ctx callbacks.ToolContext, args map[string]any) (any, error) {
	res, err := t.ts.sess.callTool(ctx, t.remote, args)
	if err != nil {
		var rpc *jsonrpc.Error
		if errors.As(err, &rpc) {
			t.ts.log.Warn("MCP tool execution failed", "tool", t.name, "err", err)
			return map[string]any{"error": "MCP tool execution failed: " + rpc.Message}, nil
		}
		if ctx.Err() != nil {
			return nil, ctx.Err() // the run itself was cancelled
		}
		t.ts.log.Warn("unexpected error during MCP tool execution", "tool", t.name, "err", err)
		return map[string]any{"error": "Unexpected error during MCP tool execution: " + err.Error()}, nil
	}
	return res, nil
}

// listTools lists the server's tools, page by page, up to MaxTools. A
// failure is retried once on a fresh session (google-adk's
// retry_on_errors): the session may have been dropped by the server.
func (s *sessions) listTools(ctx context.Context) ([]*mcpTool, error) {
	tools, err := s.listOnce(ctx)
	if err != nil && ctx.Err() == nil && !errors.Is(err, errTooMany) && !errors.Is(err, errListTooLarge) {
		s.log.Info("retrying tools/list on a new session", "err", err)
		tools, err = s.listOnce(ctx)
	}
	return tools, err
}

var (
	errTooMany      = errors.New("too many tools")
	errListTooLarge = errors.New("tool listing too large")
)

func (s *sessions) listOnce(ctx context.Context) ([]*mcpTool, error) {
	l, err := s.acquire(ctx)
	if err != nil {
		return nil, err
	}
	defer s.release()
	lctx, cancel := context.WithTimeout(ctx, s.cfg.Timeout)
	defer cancel()
	var tools []*mcpTool
	// MaxResponseBytes bounds each page; the listing as a whole is
	// bounded too, the tools' JSON counted: every model request of the
	// agent carries their declarations, and a server paging one tool of
	// MaxResponseBytes at a time made MaxTools times that for each
	// invocation (1000 x 4 MiB).
	size := 0
	params := &mcp.ListToolsParams{}
	for {
		res, err := l.cs.ListTools(lctx, params)
		if err != nil {
			if lctx.Err() == context.DeadlineExceeded && ctx.Err() == nil {
				err = fmt.Errorf("tools/list: no answer within %s", s.cfg.Timeout)
			}
			s.discardIfGone(l, err)
			return nil, err
		}
		for _, tl := range res.Tools {
			b, err := json.Marshal(tl)
			if err != nil {
				return nil, fmt.Errorf("tools/list: tool %q: %w", tl.Name, err)
			}
			if size += len(b); size > s.cfg.MaxResponseBytes {
				return nil, fmt.Errorf("%w: the server's tools take more than %d bytes of JSON (max_response_bytes bounds the whole listing)", errListTooLarge, s.cfg.MaxResponseBytes)
			}
		}
		tools = append(tools, res.Tools...)
		if len(tools) > s.cfg.MaxTools {
			return nil, fmt.Errorf("%w: the server lists more than %d", errTooMany, s.cfg.MaxTools)
		}
		if res.NextCursor == "" {
			return tools, nil
		}
		params = &mcp.ListToolsParams{Cursor: res.NextCursor}
	}
}

// discardIfGone drops the session after an error that is not the
// server's own JSON-RPC answer: the transport failed, or the server no
// longer knows the session. The retry (or the next call) opens a new one.
func (s *sessions) discardIfGone(l *live, err error) {
	var rpc *jsonrpc.Error
	if l.ended() || !errors.As(err, &rpc) {
		s.discard(l)
	}
}

// callTool calls a tool and returns its result as a function response.
// Opening the session is retried once (nothing was sent yet); the call is
// not, since the server may have run it.
func (s *sessions) callTool(ctx context.Context, name string, args map[string]any) (map[string]any, error) {
	l, err := s.acquire(ctx)
	if err != nil && ctx.Err() == nil {
		l, err = s.acquire(ctx)
	}
	if err != nil {
		return nil, err
	}
	defer s.release()
	timeout := s.cfg.ReadTimeout
	if s.cfg.Stdio != nil {
		timeout = s.cfg.Timeout
	}
	cctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	res, err := l.cs.CallTool(cctx, &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		if cctx.Err() == context.DeadlineExceeded && ctx.Err() == nil {
			// The Python SDK's read timeout, which google-adk reports as an
			// McpError.
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: fmt.Sprintf("Timed out while waiting for response to ClientRequest. Waited %s seconds.", pySeconds(timeout))}
		}
		if ctx.Err() == nil {
			s.discardIfGone(l, err)
		}
		return nil, err
	}
	return resultMap(res, s.cfg.MaxResponseBytes)
}

// pySeconds formats a duration as Python formats a float of seconds.
func pySeconds(d time.Duration) string {
	s := strconv.FormatFloat(d.Seconds(), 'f', -1, 64)
	if !strings.ContainsAny(s, ".e") {
		s += ".0"
	}
	return s
}

// resultMap is a CallToolResult as google-adk's _dump_mcp_model dumps it:
// the wire's camelCase keys, "meta" for "_meta", absent fields left out,
// but "content" and "isError" always present (they have defaults). Numbers
// keep Python's int/float distinction.
func resultMap(res *mcp.CallToolResult, maxBytes int) (map[string]any, error) {
	b, err := json.Marshal(res)
	if err != nil {
		return nil, fmt.Errorf("encoding the MCP result: %w", err)
	}
	if len(b) > maxBytes {
		return nil, fmt.Errorf("the MCP result is %d bytes, more than the limit of %d", len(b), maxBytes)
	}
	v, err := decodeJSON(b)
	if err != nil {
		return nil, err
	}
	m, _ := v.(map[string]any)
	if m == nil {
		return nil, errors.New("the MCP result is not an object")
	}
	m = renameMeta(m).(map[string]any)
	if _, ok := m["content"]; !ok || m["content"] == nil {
		m["content"] = []any{}
	}
	if _, ok := m["isError"]; !ok {
		m["isError"] = false
	}
	// A field of the 2026 protocol that google-adk drops (acting on it is
	// a feature it does not have).
	delete(m, "resultType")
	return m, nil
}

// opaqueKeys hold the server's own JSON, which renameMeta leaves as it is.
var opaqueKeys = map[string]bool{"_meta": true, "inputSchema": true, "outputSchema": true, "structuredContent": true}

// renameMeta renames the MCP models' "_meta" to "meta" throughout,
// without descending into server-authored values.
func renameMeta(v any) any {
	switch v := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, e := range v {
			switch {
			case k == "_meta":
				out["meta"] = e
			case opaqueKeys[k]:
				out[k] = e
			default:
				out[k] = renameMeta(e)
			}
		}
		return out
	case []any:
		for i, e := range v {
			v[i] = renameMeta(e)
		}
		return v
	}
	return v
}

// plainJSON turns a value the SDK decoded (or a server's raw JSON) into
// plain maps, slices and numbers as Python reads them.
func plainJSON(v any) (any, error) {
	if v == nil {
		return nil, nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return decodeJSON(b)
}

func decodeJSON(b []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	return pyfmt.ExactNumbers(v), nil
}
