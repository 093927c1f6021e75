package openai

import (
	"encoding/json"
	"fmt"
	"strings"

	oai "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/packages/respjson"
	"google.golang.org/genai"

	"github.com/adkhost/adkhost/engine/model"
	"github.com/adkhost/adkhost/internal/keyorder"
)

// fromCompletion maps a non-streamed answer: the first choice's reasoning
// (as a thought), text and tool calls become the content, and the result
// goes through model.FromGenerateContentResponse so that finish reasons and
// empty answers are treated as for Gemini.
func (m *Model) fromCompletion(c *oai.ChatCompletion) (*model.Response, error) {
	gr := &genai.GenerateContentResponse{ModelVersion: c.Model}
	if c.JSON.Usage.Valid() {
		gr.UsageMetadata = usageMetadata(c.Usage)
	}
	// The key order of each call's arguments, which its Go map loses.
	var orders map[*genai.Part]json.RawMessage
	for _, choice := range c.Choices {
		if choice.Index != 0 {
			continue
		}
		msg := choice.Message
		var parts []*genai.Part
		if r := reasoningText(msg.JSON.ExtraFields); r != "" {
			parts = append(parts, &genai.Part{Text: r, Thought: true})
		}
		if msg.Content != "" {
			parts = append(parts, &genai.Part{Text: msg.Content})
		} else if msg.Refusal != "" {
			// A refusal is the model's own answer; keep it visible.
			parts = append(parts, &genai.Part{Text: msg.Refusal})
		}
		for _, tc := range msg.ToolCalls {
			if tc.Type != "" && tc.Type != "function" {
				return nil, fmt.Errorf("tool call %q has unsupported type %q", tc.ID, tc.Type)
			}
			part, err := functionCallPart(tc.ID, tc.Function.Name, tc.Function.Arguments, m.newID)
			if err != nil {
				return nil, err
			}
			if h := keyorder.Of([]byte(tc.Function.Arguments)); h != nil {
				if orders == nil {
					orders = map[*genai.Part]json.RawMessage{}
				}
				orders[part] = h
			}
			parts = append(parts, part)
		}
		gr.Candidates = []*genai.Candidate{{
			Content:      &genai.Content{Role: genai.RoleModel, Parts: parts},
			FinishReason: finishReason(choice.FinishReason),
		}}
		break
	}
	resp := model.FromGenerateContentResponse(gr)
	if orders != nil && resp.Content != nil {
		for i, p := range resp.Content.Parts {
			resp.SetPartKeyOrder(i, orders[p])
		}
	}
	return resp, nil
}

// functionCallPart builds a function call part from a tool call whose
// arguments are complete. Empty arguments mean none.
func functionCallPart(id, name, arguments string, newID func() string) (*genai.Part, error) {
	if name == "" {
		return nil, fmt.Errorf("tool call %q has no function name", id)
	}
	args := map[string]any{}
	if strings.TrimSpace(arguments) != "" {
		if err := json.Unmarshal([]byte(arguments), &args); err != nil {
			return nil, fmt.Errorf("tool call %q to %q: arguments are not a JSON object: %q: %w", id, name, arguments, err)
		}
		if args == nil {
			// "null" decodes without error.
			args = map[string]any{}
		}
	}
	if id == "" {
		id = newID()
	}
	return &genai.Part{FunctionCall: &genai.FunctionCall{ID: id, Name: name, Args: args}}, nil
}

// reasoningText is the reasoning some servers add to a message or delta:
// "reasoning_content" (vLLM, DeepSeek, llama.cpp) or "reasoning" (Ollama).
func reasoningText(extra map[string]respjson.Field) string {
	for _, key := range []string{"reasoning_content", "reasoning"} {
		// Fields outside the library's schema are never marked valid, so
		// the raw text is read as is.
		f, ok := extra[key]
		if !ok {
			continue
		}
		var s string
		if json.Unmarshal([]byte(f.Raw()), &s) == nil && s != "" {
			return s
		}
	}
	return ""
}

// finishReason maps chat-completions finish reasons to Gemini's, as
// google-adk's LiteLlm does: tool calls end a turn normally.
func finishReason(r string) genai.FinishReason {
	switch r {
	case "":
		return ""
	case "stop", "tool_calls", "function_call":
		return genai.FinishReasonStop
	case "length":
		return genai.FinishReasonMaxTokens
	case "content_filter":
		return genai.FinishReasonSafety
	}
	return genai.FinishReasonOther
}

// usageMetadata maps token counts. Gemini counts thoughts apart from the
// candidates while OpenAI's completion tokens include reasoning tokens, so
// those are moved to ThoughtsTokenCount; the total is the server's.
func usageMetadata(u oai.CompletionUsage) *genai.GenerateContentResponseUsageMetadata {
	reasoning := u.CompletionTokensDetails.ReasoningTokens
	return &genai.GenerateContentResponseUsageMetadata{
		PromptTokenCount:        int32(u.PromptTokens),
		CandidatesTokenCount:    int32(u.CompletionTokens - reasoning),
		ThoughtsTokenCount:      int32(reasoning),
		CachedContentTokenCount: int32(u.PromptTokensDetails.CachedTokens),
		TotalTokenCount:         int32(u.TotalTokens),
	}
}

// firstChoice returns the choice with index 0; others (n > 1) are ignored
// as the Gemini backend ignores other candidates.
func firstChoice(choices []oai.ChatCompletionChunkChoice) (oai.ChatCompletionChunkChoice, bool) {
	for _, c := range choices {
		if c.Index == 0 {
			return c, true
		}
	}
	return oai.ChatCompletionChunkChoice{}, false
}

// deltaParts are the reasoning and text pieces of a streamed delta.
func deltaParts(d oai.ChatCompletionChunkChoiceDelta) []*genai.Part {
	var parts []*genai.Part
	if r := reasoningText(d.JSON.ExtraFields); r != "" {
		parts = append(parts, &genai.Part{Text: r, Thought: true})
	}
	if d.Content != "" {
		parts = append(parts, &genai.Part{Text: d.Content})
	} else if d.Refusal != "" {
		parts = append(parts, &genai.Part{Text: d.Refusal})
	}
	return parts
}

// streamedCall is a tool call whose pieces are still arriving.
type streamedCall struct {
	index int64
	id    string
	name  string
	args  strings.Builder
}

// toolCallAssembler puts streamed tool calls back together. A delta names
// its call by index; the id and name come once, the arguments in pieces.
type toolCallAssembler struct {
	calls []*streamedCall
}

func (a *toolCallAssembler) add(deltas []oai.ChatCompletionChunkChoiceDeltaToolCall) {
	for _, d := range deltas {
		c := a.find(d.Index)
		// Some servers number every call 0 but give each its own id; a new
		// id at a known index starts a new call.
		if c == nil || (d.ID != "" && c.id != "" && d.ID != c.id) {
			c = &streamedCall{index: d.Index}
			a.calls = append(a.calls, c)
		}
		if c.id == "" {
			c.id = d.ID
		}
		// The name is sent whole; servers that repeat it must not double it.
		if c.name == "" {
			c.name = d.Function.Name
		}
		c.args.WriteString(d.Function.Arguments)
	}
}

// find returns the latest call with index i.
func (a *toolCallAssembler) find(i int64) *streamedCall {
	for j := len(a.calls) - 1; j >= 0; j-- {
		if a.calls[j].index == i {
			return a.calls[j]
		}
	}
	return nil
}

// parts returns the assembled calls as function call parts, in the order
// they started.
func (a *toolCallAssembler) parts(newID func() string) ([]*genai.Part, error) {
	var out []*genai.Part
	for _, c := range a.calls {
		p, err := functionCallPart(c.id, c.name, c.args.String(), newID)
		if err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	return out, nil
}
