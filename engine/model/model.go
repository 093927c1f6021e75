// Package model defines the request the engine sends to a language model, the
// response it gets back, and the Model interface that backends implement.
package model

import (
	"context"
	"iter"
	"reflect"
	"strings"

	"google.golang.org/genai"
)

// Model is a language model backend. GenerateContent must honour ctx and
// stop as soon as yield returns false. With stream set, a backend yields
// partial responses (Partial true) followed by one aggregated final response;
// without it, exactly one response.
type Model interface {
	// Name is the model name sent in requests, e.g. "gemini-2.5-flash".
	Name() string
	GenerateContent(ctx context.Context, req *Request, stream bool) iter.Seq2[*Response, error]
}

// Request is one call to a model (google-adk's LlmRequest). The engine builds
// a fresh Request for every model call, and callbacks may change it: set its
// fields, append to or replace elements of Contents. The Content values taken
// from the session history are shared with other requests of the session,
// so they must not be modified in place; to change one, replace the element
// (req.Contents[i] = edited copy). Sharing them is what keeps the cost of a
// model call independent of the length of the conversation.
type Request struct {
	Model    string                       `json:"model,omitempty"`
	Contents []*genai.Content             `json:"contents,omitempty"`
	Config   *genai.GenerateContentConfig `json:"config,omitempty"`
}

// AppendInstructions appends texts to the system instruction as google-adk
// does with its string system instruction: the texts are joined with a blank
// line, and appended after a blank line unless the instruction is empty.
func (r *Request) AppendInstructions(texts ...string) {
	if len(texts) == 0 {
		return
	}
	joined := strings.Join(texts, "\n\n")
	cfg := r.EnsureConfig()
	si := cfg.SystemInstruction
	if si == nil || isBlank(si) {
		// An empty instruction is as good as none, as in google-adk; an
		// empty text part would be rejected on the wire.
		if joined != "" {
			cfg.SystemInstruction = &genai.Content{Role: "user", Parts: []*genai.Part{{Text: joined}}}
		}
		return
	}
	if n := len(si.Parts); n > 0 && si.Parts[n-1] != nil && si.Parts[n-1].Text != "" {
		si.Parts[n-1] = &genai.Part{Text: si.Parts[n-1].Text + "\n\n" + joined}
		return
	}
	if joined != "" {
		si.Parts = append(si.Parts, &genai.Part{Text: joined})
	}
}

// isBlank reports whether c has no part with any data.
func isBlank(c *genai.Content) bool {
	for _, p := range c.Parts {
		if p != nil && !reflect.ValueOf(*p).IsZero() {
			return false
		}
	}
	return true
}

// SystemInstructionText returns the system instruction's text parts joined
// by blank lines, or "" when there is none.
func (r *Request) SystemInstructionText() string {
	if r.Config == nil || r.Config.SystemInstruction == nil {
		return ""
	}
	var texts []string
	for _, p := range r.Config.SystemInstruction.Parts {
		if p != nil && p.Text != "" {
			texts = append(texts, p.Text)
		}
	}
	return joinNonEmpty(texts)
}

// AppendFunctionDeclarations adds declarations to the first Tool that holds
// function declarations, creating it if needed (LlmRequest.append_tools).
func (r *Request) AppendFunctionDeclarations(decls ...*genai.FunctionDeclaration) {
	if len(decls) == 0 {
		return
	}
	cfg := r.EnsureConfig()
	for _, t := range cfg.Tools {
		if t != nil && len(t.FunctionDeclarations) > 0 {
			t.FunctionDeclarations = append(t.FunctionDeclarations, decls...)
			return
		}
	}
	cfg.Tools = append(cfg.Tools, &genai.Tool{FunctionDeclarations: decls})
}

// FunctionDeclaration returns the declaration named name, or nil.
func (r *Request) FunctionDeclaration(name string) *genai.FunctionDeclaration {
	if r.Config == nil {
		return nil
	}
	for _, t := range r.Config.Tools {
		if t == nil {
			continue
		}
		for _, d := range t.FunctionDeclarations {
			if d != nil && d.Name == name {
				return d
			}
		}
	}
	return nil
}

// SetOutputSchema asks the model for JSON matching schema.
func (r *Request) SetOutputSchema(schema *genai.Schema) {
	cfg := r.EnsureConfig()
	cfg.ResponseSchema = schema
	cfg.ResponseMIMEType = "application/json"
}

// EnsureConfig returns r.Config, creating it when nil.
func (r *Request) EnsureConfig() *genai.GenerateContentConfig {
	if r.Config == nil {
		r.Config = &genai.GenerateContentConfig{}
	}
	return r.Config
}

func joinNonEmpty(texts []string) string {
	out := ""
	for _, t := range texts {
		if t == "" {
			continue
		}
		if out != "" {
			out += "\n\n"
		}
		out += t
	}
	return out
}
