package anthropic

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"

	ant "github.com/anthropics/anthropic-sdk-go"
	"github.com/anthropics/anthropic-sdk-go/packages/respjson"
	"google.golang.org/genai"

	"github.com/adkhost/adkhost/engine/model"
	"github.com/adkhost/adkhost/engine/model/streaming"
	"github.com/adkhost/adkhost/internal/keyorder"
)

// fromMessage maps a whole answer as google-adk's
// message_to_generate_content_response does.
func fromMessage(msg *ant.Message) (*model.Response, error) {
	parts := make([]*genai.Part, 0, len(msg.Content))
	// The key order of each call's input, which its Go map loses.
	hints := make([]json.RawMessage, len(msg.Content))
	for i, b := range msg.Content {
		var p *genai.Part
		switch b.Type {
		case "thinking":
			p = &genai.Part{Text: b.Thinking, Thought: true}
			if b.Signature != "" {
				p.ThoughtSignature = []byte(b.Signature)
			}
		case "redacted_thinking":
			// Kept so it can go back to Claude with the next request.
			p = &genai.Part{Thought: true, ThoughtSignature: []byte(b.Data)}
		case "text":
			p = &genai.Part{Text: b.Text}
		case "tool_use":
			args, err := toolInput(b.Input)
			if err != nil {
				return nil, fmt.Errorf("content[%d]: tool_use %q of %q: %w", i, b.ID, b.Name, err)
			}
			p = &genai.Part{FunctionCall: &genai.FunctionCall{ID: b.ID, Name: b.Name, Args: args}}
			hints[i] = keyorder.Of(b.Input)
		default:
			return nil, fmt.Errorf("content[%d]: unsupported content block type %q", i, b.Type)
		}
		parts = append(parts, p)
	}
	u := msg.Usage
	prompt := promptTokens(u.InputTokens, u.CacheReadInputTokens, u.CacheCreationInputTokens)
	thinking := thinkingTokens(u.OutputTokensDetails, u.JSON.OutputTokensDetails, u.OutputTokens)
	usage := &genai.GenerateContentResponseUsageMetadata{
		PromptTokenCount:     int32(prompt),
		CandidatesTokenCount: int32(u.OutputTokens - thinking),
		TotalTokenCount:      int32(prompt + u.OutputTokens),
		ThoughtsTokenCount:   int32(thinking),
	}
	if u.JSON.CacheReadInputTokens.Valid() {
		usage.CachedContentTokenCount = int32(u.CacheReadInputTokens)
	}
	resp := &model.Response{
		Content:       &genai.Content{Role: genai.RoleModel, Parts: parts},
		UsageMetadata: usage,
		FinishReason:  finishReason(msg.StopReason),
		ModelVersion:  string(msg.Model),
	}
	for i, h := range hints {
		resp.SetPartKeyOrder(i, h)
	}
	return resp, nil
}

// toolInput decodes a tool_use block's input, an object; none means {}.
func toolInput(raw json.RawMessage) (map[string]any, error) {
	args := map[string]any{}
	if len(raw) == 0 || string(raw) == "null" {
		return args, nil
	}
	if err := json.Unmarshal(raw, &args); err != nil {
		return nil, fmt.Errorf("input is not a JSON object: %.200s", raw)
	}
	if args == nil {
		args = map[string]any{}
	}
	return args, nil
}

// promptTokens is every input token billed: Anthropic counts cache reads
// and writes apart from input_tokens, while Gemini's prompt count holds
// them.
func promptTokens(input, cacheRead, cacheCreation int64) int64 {
	return input + cacheRead + cacheCreation
}

// thinkingTokens is the thinking part of output_tokens, which Anthropic
// counts inside it, clamped to it; 0 when the server did not say.
func thinkingTokens(d ant.OutputTokensDetails, field respjson.Field, output int64) int64 {
	if !field.Valid() || !d.JSON.ThinkingTokens.Valid() {
		return 0
	}
	return min(d.ThinkingTokens, output)
}

// finishReason maps stop reasons as google-adk does; a stop reason it does
// not know is FINISH_REASON_UNSPECIFIED, none is none.
func finishReason(r ant.StopReason) genai.FinishReason {
	switch r {
	case "":
		return ""
	case "end_turn", "stop_sequence", "tool_use", "pause_turn":
		return genai.FinishReasonStop
	case "max_tokens":
		return genai.FinishReasonMaxTokens
	case "refusal":
		return genai.FinishReasonSafety
	}
	return genai.FinishReasonUnspecified
}

// streamedTool is a tool_use block being streamed.
type streamedTool struct {
	id, name string
	args     []byte
	tracker  *streaming.JSONPathTracker
}

// streamedThinking is a thinking block being streamed.
type streamedThinking struct {
	thinking, signature string
}

// stream runs a streamed call as google-adk's _generate_content_streaming
// does: text and thinking deltas become partial responses at once, a
// tool_use block a partial function call (id and name, will_continue) when
// it starts and one with the partial arguments each piece of its input
// brings (streaming.JSONPathTracker), and the blocks are put together, in
// index order, into the final response when the stream ends.
func (m *Model) stream(ctx context.Context, req *model.Request, name string, built builtRequest, yield func(*model.Response, error) bool) {
	s := m.messages.NewStreaming(ctx, built.params)
	defer s.Close()

	texts := map[int64]string{}
	tools := map[int64]*streamedTool{}
	thoughts := map[int64]*streamedThinking{}
	redacted := map[int64]string{}
	var input, output, thinking, cacheRead int64
	cacheReadValid := false
	var stop ant.StopReason
	var version string
	// Function call partials carry the requested model name, as google-adk's.
	callVersion := req.Model
	if callVersion == "" {
		callVersion = m.name
	}
	partial := func(version string, p *genai.Part) bool {
		return yield(&model.Response{
			Content:      &genai.Content{Role: genai.RoleModel, Parts: []*genai.Part{p}},
			Partial:      true,
			ModelVersion: version,
		}, nil)
	}
	isOutputTool := func(n string) bool { return built.outputTool != nil && n == outputSchemaToolName }

	streamed := 0
	for s.Next() {
		ev := s.Current()
		if ev.Type == "content_block_delta" {
			streamed += len(ev.Delta.Text) + len(ev.Delta.Thinking) + len(ev.Delta.Signature) + len(ev.Delta.PartialJSON)
			if streamed > maxStreamedBytes {
				yield(nil, fmt.Errorf("anthropic: model %q: the answer streamed more than %d bytes", name, maxStreamedBytes))
				return
			}
		}
		switch ev.Type {
		case "message_start":
			u := ev.Message.Usage
			input = promptTokens(u.InputTokens, u.CacheReadInputTokens, u.CacheCreationInputTokens)
			output = u.OutputTokens
			thinking = thinkingTokens(u.OutputTokensDetails, u.JSON.OutputTokensDetails, u.OutputTokens)
			cacheRead, cacheReadValid = u.CacheReadInputTokens, u.JSON.CacheReadInputTokens.Valid()
			version = string(ev.Message.Model)
		case "content_block_start":
			b := ev.ContentBlock
			switch b.Type {
			case "thinking":
				thoughts[ev.Index] = &streamedThinking{thinking: b.Thinking, signature: b.Signature}
			case "redacted_thinking":
				redacted[ev.Index] = b.Data
			case "text":
				texts[ev.Index] = b.Text
			case "tool_use":
				tools[ev.Index] = &streamedTool{id: b.ID, name: b.Name}
				if isOutputTool(b.Name) {
					continue
				}
				if !partial(callVersion, &genai.Part{FunctionCall: &genai.FunctionCall{ID: b.ID, Name: b.Name, WillContinue: genai.Ptr(true)}}) {
					return
				}
			}
		case "content_block_delta":
			d := ev.Delta
			switch d.Type {
			case "thinking_delta":
				t := thoughts[ev.Index]
				if t == nil {
					t = &streamedThinking{}
					thoughts[ev.Index] = t
				}
				t.thinking += d.Thinking
				if !partial(version, &genai.Part{Text: d.Thinking, Thought: true}) {
					return
				}
			case "signature_delta":
				// Opaque, so not shown; the final thought carries it.
				t := thoughts[ev.Index]
				if t == nil {
					t = &streamedThinking{}
					thoughts[ev.Index] = t
				}
				t.signature += d.Signature
			case "text_delta":
				texts[ev.Index] += d.Text
				if !partial(version, &genai.Part{Text: d.Text}) {
					return
				}
			case "input_json_delta":
				t := tools[ev.Index]
				if t == nil {
					continue
				}
				t.args = append(t.args, d.PartialJSON...)
				if isOutputTool(t.name) {
					// The streamed input is the structured answer itself,
					// unless the schema had to be nested.
					if d.PartialJSON != "" && !built.outputTool.nests {
						if !partial(version, &genai.Part{Text: d.PartialJSON}) {
							return
						}
					}
					continue
				}
				var args []*genai.PartialArg
				if d.PartialJSON != "" {
					if t.tracker == nil {
						t.tracker = streaming.NewJSONPathTracker()
					}
					args = t.tracker.HandleChunk(d.PartialJSON)
				}
				if !partial(callVersion, &genai.Part{FunctionCall: &genai.FunctionCall{ID: t.id, Name: t.name, PartialArgs: args, WillContinue: genai.Ptr(true)}}) {
					return
				}
			}
		case "message_delta":
			// Its counts are cumulative and final.
			output = ev.Usage.OutputTokens
			thinking = thinkingTokens(ev.Usage.OutputTokensDetails, ev.Usage.JSON.OutputTokensDetails, ev.Usage.OutputTokens)
			if ev.Delta.StopReason != "" {
				stop = ev.Delta.StopReason
			}
		}
	}
	if err := s.Err(); err != nil {
		yield(nil, wrapError(ctx, name, err))
		return
	}
	if err := ctx.Err(); err != nil {
		yield(nil, fmt.Errorf("anthropic: model %q: %w", name, err))
		return
	}

	indexes := map[int64]bool{}
	for _, m := range []map[int64]bool{keys(texts), keys(tools), keys(thoughts), keys(redacted)} {
		for k := range m {
			indexes[k] = true
		}
	}
	order := make([]int64, 0, len(indexes))
	for k := range indexes {
		order = append(order, k)
	}
	slices.Sort(order)
	parts := []*genai.Part{}
	var hints []json.RawMessage
	for _, i := range order {
		if t, ok := thoughts[i]; ok {
			p := &genai.Part{Text: t.thinking, Thought: true}
			if t.signature != "" {
				p.ThoughtSignature = []byte(t.signature)
			}
			parts = append(parts, p)
		}
		if data, ok := redacted[i]; ok {
			parts = append(parts, &genai.Part{Thought: true, ThoughtSignature: []byte(data)})
		}
		if text, ok := texts[i]; ok {
			parts = append(parts, &genai.Part{Text: text})
		}
		if t, ok := tools[i]; ok {
			args, err := toolInput(t.args)
			if err != nil {
				yield(nil, fmt.Errorf("anthropic: model %q: tool_use %q of %q: %w", name, t.id, t.name, err))
				return
			}
			for len(hints) < len(parts) {
				hints = append(hints, nil)
			}
			hints = append(hints, keyorder.Of(t.args))
			parts = append(parts, &genai.Part{FunctionCall: &genai.FunctionCall{ID: t.id, Name: t.name, Args: args}})
		}
	}
	usage := &genai.GenerateContentResponseUsageMetadata{
		PromptTokenCount:     int32(input),
		CandidatesTokenCount: int32(output - thinking),
		TotalTokenCount:      int32(input + output),
		ThoughtsTokenCount:   int32(thinking),
	}
	if cacheReadValid {
		usage.CachedContentTokenCount = int32(cacheRead)
	}
	final := &model.Response{
		Aggregated:    true,
		Content:       &genai.Content{Role: genai.RoleModel, Parts: parts},
		UsageMetadata: usage,
		FinishReason:  finishReason(stop),
		ModelVersion:  version,
	}
	for i, h := range hints {
		final.SetPartKeyOrder(i, h)
	}
	if built.outputTool != nil {
		built.outputTool.unwrap(final)
	}
	yield(final, nil)
}

// maxStreamedBytes bounds what one streamed answer may bring (text,
// thinking, signatures and tool input together), since it is kept whole
// for the final response.
const maxStreamedBytes = 64 << 20

func keys[V any](m map[int64]V) map[int64]bool {
	out := make(map[int64]bool, len(m))
	for k := range m {
		out[k] = true
	}
	return out
}
