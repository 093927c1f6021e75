package engine

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	"google.golang.org/genai"

	"github.com/adkhost/adkhost/callbacks"
	"github.com/adkhost/adkhost/engine/model"
	"github.com/adkhost/adkhost/engine/tool"
	"github.com/adkhost/adkhost/internal/keyorder"
	"github.com/adkhost/adkhost/internal/pyfmt"
)

// Example is a few-shot example (google-adk's Example): a user's input and
// the turns that answer it.
type Example struct {
	Input  *genai.Content
	Output []*genai.Content
	// KeyOrder keeps, by output content and part, the key order of a
	// function call's args or a function response's dict (a hint of
	// package internal/keyorder, which their Go maps lose); Python prints
	// them in the order they were written. Missing hints print keys sorted.
	KeyOrder [][]json.RawMessage
}

// hint is the key-order hint of output content c, part p.
func (e *Example) hint(c, p int) json.RawMessage {
	if c < len(e.KeyOrder) && p < len(e.KeyOrder[c]) {
		return e.KeyOrder[c][p]
	}
	return nil
}

// ExampleTool is google-adk's ExampleTool: it has no declaration and is
// never called; while the invocation has a user message it appends its
// examples to the system instruction, formatted as google-adk's
// example_util formats them.
type ExampleTool struct {
	Examples []Example
}

var (
	_ tool.Tool             = (*ExampleTool)(nil)
	_ tool.RequestProcessor = (*ExampleTool)(nil)
)

// Name and description are google-adk's; the model sees neither.
func (*ExampleTool) Name() string                            { return "example_tool" }
func (*ExampleTool) Description() string                     { return "example tool" }
func (*ExampleTool) IsLongRunning() bool                     { return false }
func (*ExampleTool) Declaration() *genai.FunctionDeclaration { return nil }

// Run is never called: the model is not told of the tool.
func (*ExampleTool) Run(callbacks.ToolContext, map[string]any) (any, error) {
	return nil, fmt.Errorf("example_tool is not a callable tool")
}

// ProcessRequest appends the examples, unless the invocation has no user
// message (google-adk checks the message, not the request's contents).
func (t *ExampleTool) ProcessRequest(ctx callbacks.ToolContext, req *model.Request) error {
	if uc := ctx.UserContent(); uc == nil || len(uc.Parts) == 0 {
		return nil
	}
	req.AppendInstructions(ExamplesInstruction(t.Examples, req.Model))
	return nil
}

// The fixed text of google-adk's example_util.
const (
	examplesIntro          = "<EXAMPLES>\nBegin few-shot\nThe following are examples of user queries and model responses using the available tools.\n\n"
	examplesEnd            = "End few-shot\n<EXAMPLES>"
	exampleStart           = "EXAMPLE %d:\nBegin example\n"
	exampleEnd             = "End example\n\n"
	exampleUserPrefix      = "[user]\n"
	exampleModelPrefix     = "[model]\n"
	exampleGeminiFence     = "```\n"
	exampleCallFence       = "```tool_code\n"
	exampleResponseFence   = "```tool_outputs\n"
	exampleFenceCloseAfter = "\n```\n"
)

// ExamplesInstruction formats examples as google-adk's
// convert_examples_to_text does for modelName: a function call as
// name(k='v', n=1) and a function response as Python prints the
// FunctionResponse's fields, fenced with ``` for Gemini models (any name
// containing "gemini-") and ```tool_code / ```tool_outputs otherwise.
// Arguments and response keys come in the order of the example's KeyOrder
// hints, else sorted.
func ExamplesInstruction(examples []Example, modelName string) string {
	gemini := strings.Contains(modelName, "gemini-")
	var b strings.Builder
	b.WriteString(examplesIntro)
	for i, ex := range examples {
		fmt.Fprintf(&b, exampleStart, i+1)
		b.WriteString(exampleUserPrefix)
		if ex.Input != nil && len(ex.Input.Parts) > 0 {
			var texts []string
			for _, p := range ex.Input.Parts {
				if p != nil && p.Text != "" {
					texts = append(texts, p.Text)
				}
			}
			b.WriteString(strings.Join(texts, "\n") + "\n")
		}
		previous := ""
		for ci, c := range ex.Output {
			if c == nil {
				continue
			}
			role := exampleUserPrefix
			if c.Role == genai.RoleModel {
				role = exampleModelPrefix
			}
			if role != previous {
				b.WriteString(role)
			}
			previous = role
			for pi, p := range c.Parts {
				switch {
				case p == nil:
				case p.FunctionCall != nil:
					fence := exampleCallFence
					if gemini {
						fence = exampleGeminiFence
					}
					b.WriteString(fence + p.FunctionCall.Name + "(" + exampleArgs(p.FunctionCall.Args, ex.hint(ci, pi)) + ")" + exampleFenceCloseAfter)
				case p.FunctionResponse != nil:
					fence := exampleResponseFence
					if gemini {
						fence = exampleGeminiFence
					}
					b.WriteString(fence + functionResponseDict(p.FunctionResponse, ex.hint(ci, pi)) + exampleFenceCloseAfter)
				case p.Text != "":
					b.WriteString(p.Text + "\n")
				}
			}
		}
		b.WriteString(exampleEnd)
	}
	b.WriteString(examplesEnd)
	return b.String()
}

// exampleArgs writes arguments as google-adk does: k='v' for a string (not
// escaped), k=str(v) otherwise, in the order of hint (else sorted).
func exampleArgs(args map[string]any, hint json.RawMessage) string {
	keys, trees := keyorder.Parse(hint).Order(args)
	if keys == nil {
		keys = slices.Sorted(maps.Keys(args))
	}
	out := make([]string, len(keys))
	for i, k := range keys {
		var sub json.RawMessage
		if trees != nil {
			sub = trees[i].Hint()
		}
		if s, ok := args[k].(string); ok {
			out[i] = k + "='" + s + "'"
		} else {
			out[i] = k + "=" + pyfmt.StrOrdered(args[k], sub)
		}
	}
	return strings.Join(out, ", ")
}

// functionResponseDict is what Python prints for a FunctionResponse's
// __dict__ (google-genai 2.34's field order).
func functionResponseDict(fr *genai.FunctionResponse, hint json.RawMessage) string {
	willContinue := "None"
	if fr.WillContinue != nil {
		willContinue = pyfmt.Repr(*fr.WillContinue)
	}
	scheduling := "None"
	if fr.Scheduling != "" {
		scheduling = fmt.Sprintf("<FunctionResponseScheduling.%s: '%s'>", fr.Scheduling, fr.Scheduling)
	}
	parts := "None"
	if len(fr.Parts) > 0 {
		// google-adk prints the parts' pydantic reprs; a count is all an
		// example needs to show and keeps the bytes out of the prompt.
		parts = fmt.Sprintf("[%d parts]", len(fr.Parts))
	}
	id := "None"
	if fr.ID != "" {
		id = pyfmt.Repr(fr.ID)
	}
	response := "None"
	if fr.Response != nil {
		response = pyfmt.StrOrdered(fr.Response, hint)
	}
	return "{'will_continue': " + willContinue + ", 'scheduling': " + scheduling + ", 'parts': " + parts +
		", 'id': " + id + ", 'name': " + pyfmt.Repr(fr.Name) + ", 'response': " + response + "}"
}
