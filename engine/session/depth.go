package session

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"google.golang.org/genai"
)

// DefaultMaxValueDepth is WithDepthLimit's default bound on the nesting
// of a value an event or a state carries (objects and lists inside each
// other). encoding/json reads 10,000 levels, so a tool result, a
// callback's output, a client's function response or state delta could
// store values that Python's json, which stops at its recursion limit
// (1,000 frames less the caller's), cannot read back: a session shared
// with google-adk (store/postgres) became unreadable there. Real values
// stay within a few dozen levels.
const DefaultMaxValueDepth = 100

// ErrTooDeep is what a write refused by WithDepthLimit wraps; the error is
// a *TooDeepError.
var ErrTooDeep = errors.New("value nests too deep")

// TooDeepError is the refusal of a write holding a value that nests deeper
// than the bound.
type TooDeepError struct {
	AppName, UserID, Session string
	// What was refused: "an event of <author>" or "the initial state".
	What string
	// Field names the value: "state delta", "a function response", ...
	Field string
	Limit int
}

func (e *TooDeepError) Error() string {
	sess := "a new session"
	if e.Session != "" {
		sess = fmt.Sprintf("session %q", e.Session)
	}
	return fmt.Sprintf("%s: %s for %s of user %q in app %q holds a value (%s) nesting more than %d levels of JSON objects and lists; nothing was stored: flatten the value (google-adk's Python cannot read values nested past its recursion limit back)",
		ErrTooDeep, e.What, sess, e.UserID, e.AppName, e.Field, e.Limit)
}

func (e *TooDeepError) Unwrap() error { return ErrTooDeep }

// WithDepthLimit returns svc refusing, with a *TooDeepError, an event
// (AppendEvent) or an initial state (Create) holding a value that nests
// deeper than limit levels; limit <= 0 means DefaultMaxValueDepth.
func WithDepthLimit(svc Service, limit int) Service {
	if limit <= 0 {
		limit = DefaultMaxValueDepth
	}
	return &depthLimited{Service: svc, limit: limit}
}

type depthLimited struct {
	Service
	limit int
}

// AppendEvent implements Service.
func (d *depthLimited) AppendEvent(ctx context.Context, s *Session, e *Event) error {
	if !e.Partial {
		if field := EventTooDeep(e, d.limit); field != "" {
			return &TooDeepError{AppName: s.AppName, UserID: s.UserID, Session: s.ID, What: fmt.Sprintf("an event of %q", e.Author), Field: field, Limit: d.limit}
		}
	}
	return d.Service.AppendEvent(ctx, s, e)
}

// Create implements Service.
func (d *depthLimited) Create(ctx context.Context, req *CreateRequest) (*Session, error) {
	if tooDeep(req.State, d.limit) {
		return nil, &TooDeepError{AppName: req.AppName, UserID: req.UserID, Session: req.SessionID, What: "the initial state", Field: "state", Limit: d.limit}
	}
	return d.Service.Create(ctx, req)
}

// EventTooDeep names the first field of e holding a value that nests
// deeper than limit levels, or returns "". It looks at every field that
// may hold any value (TestEventTooDeepCoversEveryValue checks the list
// against Event's type); the rest of an event has a fixed shape.
func EventTooDeep(e *Event, limit int) string {
	if f := contentTooDeep(e.Content, limit); f != "" {
		return f
	}
	a := &e.Actions
	for _, c := range []struct {
		field string
		v     any
	}{
		{"custom metadata", e.CustomMetadata}, {"state delta", a.StateDelta}, {"agent state", a.AgentState},
		{"requested auth configs", a.RequestedAuthConfigs}, {"set_model_response", a.SetModelResponse}, {"output", e.Output},
	} {
		if tooDeep(c.v, limit) {
			return c.field
		}
	}
	for _, tc := range a.RequestedToolConfirmations {
		if tooDeep(tc.Payload, limit) {
			return "a tool confirmation's payload"
		}
	}
	if a.Compaction != nil {
		if f := contentTooDeep(a.Compaction.CompactedContent, limit); f != "" {
			return "the compacted content's " + f
		}
	}
	return ""
}

func contentTooDeep(c *genai.Content, limit int) string {
	if c == nil {
		return ""
	}
	for _, p := range c.Parts {
		switch {
		case p == nil:
		case p.FunctionCall != nil && tooDeep(p.FunctionCall.Args, limit):
			return "a function call's args"
		case p.FunctionResponse != nil && tooDeep(p.FunctionResponse.Response, limit):
			return "a function response"
		case p.ToolCall != nil && tooDeep(p.ToolCall.Args, limit):
			return "a tool call's args"
		case p.ToolResponse != nil && tooDeep(p.ToolResponse.Response, limit):
			return "a tool response"
		case tooDeep(p.PartMetadata, limit):
			return "a part's metadata"
		}
	}
	return ""
}

// tooDeep reports whether v nests deeper than limit levels of objects and
// lists. It stops at the first path past the limit.
func tooDeep(v any, limit int) bool {
	switch x := v.(type) {
	case nil, string, bool, float64, int, int64, json.Number:
		return false
	case map[string]any:
		if limit == 0 {
			return true
		}
		for _, e := range x {
			if tooDeep(e, limit-1) {
				return true
			}
		}
		return false
	case []any:
		if limit == 0 {
			return true
		}
		for _, e := range x {
			if tooDeep(e, limit-1) {
				return true
			}
		}
		return false
	case json.RawMessage:
		return JSONDepth(x) > limit
	}
	// A Go value of another type (a function tool's struct): measured as
	// the JSON it is stored as. Rare: tool results from guests and
	// requests are maps, lists and scalars.
	b, err := json.Marshal(v)
	return err == nil && JSONDepth(b) > limit
}

// JSONDepth is the deepest nesting of objects and lists in the JSON text
// b (0 for a scalar). It does not validate b.
func JSONDepth(b []byte) int {
	depth, deepest := 0, 0
	inString := false
	for i := 0; i < len(b); i++ {
		c := b[i]
		if inString {
			switch c {
			case '\\':
				i++
			case '"':
				inString = false
			}
			continue
		}
		switch c {
		case '"':
			inString = true
		case '{', '[':
			if depth++; depth > deepest {
				deepest = depth
			}
		case '}', ']':
			depth--
		}
	}
	return deepest
}
