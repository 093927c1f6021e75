package openai

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	oai "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/shared"
	"google.golang.org/genai"

	"github.com/adkhost/adkhost/engine/model"
)

// emptyContentsHint is sent as the user turn when the request has no
// contents, so the model acts on the system instruction (as the Gemini
// backend does); chat-completions servers reject a request without one.
const emptyContentsHint = "Handle the requests as specified in the System Instruction."

// buildParams maps req onto a chat-completions request for model name.
// req is not modified.
func (m *Model) buildParams(req *model.Request, name string) (oai.ChatCompletionNewParams, error) {
	params := oai.ChatCompletionNewParams{Model: shared.ChatModel(name)}
	if sys := req.SystemInstructionText(); sys != "" {
		params.Messages = append(params.Messages, oai.SystemMessage(sys))
	}
	msgs, err := convertContents(req.Contents)
	if err != nil {
		return params, err
	}
	if len(msgs) == 0 {
		msgs = append(msgs, oai.UserMessage(emptyContentsHint))
	}
	params.Messages = append(params.Messages, msgs...)

	cfg := req.Config
	if cfg == nil {
		return params, nil
	}
	if cfg.Temperature != nil {
		params.Temperature = oai.Float(widen(*cfg.Temperature))
	}
	if cfg.TopP != nil {
		params.TopP = oai.Float(widen(*cfg.TopP))
	}
	if cfg.MaxOutputTokens > 0 {
		if m.maxCompletionTokens {
			params.MaxCompletionTokens = oai.Int(int64(cfg.MaxOutputTokens))
		} else {
			params.MaxTokens = oai.Int(int64(cfg.MaxOutputTokens))
		}
	}
	if len(cfg.StopSequences) > 0 {
		params.Stop.OfStringArray = append([]string(nil), cfg.StopSequences...)
	}
	if cfg.CandidateCount > 0 {
		params.N = oai.Int(int64(cfg.CandidateCount))
	}
	if cfg.Seed != nil {
		params.Seed = oai.Int(int64(*cfg.Seed))
	}
	if cfg.PresencePenalty != nil {
		params.PresencePenalty = oai.Float(widen(*cfg.PresencePenalty))
	}
	if cfg.FrequencyPenalty != nil {
		params.FrequencyPenalty = oai.Float(widen(*cfg.FrequencyPenalty))
	}
	if cfg.TopK != nil {
		// Not in OpenAI's API, but Ollama, vLLM and llama.cpp read it.
		params.SetExtraFields(map[string]any{"top_k": widen(*cfg.TopK)})
	}
	if err := setResponseFormat(&params, cfg); err != nil {
		return params, err
	}
	tools, err := convertTools(cfg.Tools)
	if err != nil {
		return params, err
	}
	params.Tools = tools
	if len(tools) > 0 {
		params.ToolChoice = toolChoice(cfg.ToolConfig)
	}
	return params, nil
}

// widen converts a float32 setting to the float64 with the same shortest
// decimal form, so 0.7 is sent as 0.7 and not 0.699999988079071.
func widen(f float32) float64 {
	v, _ := strconv.ParseFloat(strconv.FormatFloat(float64(f), 'g', -1, 32), 64)
	return v
}

// setResponseFormat asks for JSON when the response MIME type is
// application/json: json_schema with a schema, else json_object.
func setResponseFormat(params *oai.ChatCompletionNewParams, cfg *genai.GenerateContentConfig) error {
	if cfg.ResponseMIMEType != "application/json" {
		return nil
	}
	var schema map[string]any
	switch {
	case cfg.ResponseJsonSchema != nil:
		s, err := jsonSchemaObject(cfg.ResponseJsonSchema)
		if err != nil {
			return fmt.Errorf("openai: response JSON schema: %w", err)
		}
		schema = s
	case cfg.ResponseSchema != nil:
		schema = schemaToJSON(cfg.ResponseSchema)
	}
	if schema == nil {
		params.ResponseFormat.OfJSONObject = &shared.ResponseFormatJSONObjectParam{}
		return nil
	}
	params.ResponseFormat.OfJSONSchema = &shared.ResponseFormatJSONSchemaParam{
		JSONSchema: shared.ResponseFormatJSONSchemaJSONSchemaParam{Name: "response", Schema: schema},
	}
	return nil
}

// toolChoice maps the function calling mode: ANY is "required", or the
// one function when exactly one is allowed; NONE is "none"; AUTO and
// VALIDATED (calls optional) are "auto"; unset leaves the server's default.
func toolChoice(tc *genai.ToolConfig) oai.ChatCompletionToolChoiceOptionUnionParam {
	var out oai.ChatCompletionToolChoiceOptionUnionParam
	if tc == nil || tc.FunctionCallingConfig == nil {
		return out
	}
	fcc := tc.FunctionCallingConfig
	switch fcc.Mode {
	case genai.FunctionCallingConfigModeAny:
		if len(fcc.AllowedFunctionNames) == 1 {
			return oai.ToolChoiceOptionFunctionToolChoice(oai.ChatCompletionNamedToolChoiceFunctionParam{Name: fcc.AllowedFunctionNames[0]})
		}
		out.OfAuto = oai.String("required")
	case genai.FunctionCallingConfigModeNone:
		out.OfAuto = oai.String("none")
	case genai.FunctionCallingConfigModeAuto, genai.FunctionCallingConfigModeValidated:
		out.OfAuto = oai.String("auto")
	}
	return out
}

// convertTools maps function declarations to function tools. Other tool
// kinds (Google Search, code execution, ...) exist only on Gemini, so they
// are refused rather than silently dropped.
func convertTools(tools []*genai.Tool) ([]oai.ChatCompletionToolUnionParam, error) {
	var out []oai.ChatCompletionToolUnionParam
	for _, t := range tools {
		if t == nil {
			continue
		}
		if len(t.FunctionDeclarations) == 0 {
			return nil, fmt.Errorf("openai: only function declarations are supported as tools, got %s", toolKind(t))
		}
		for _, fd := range t.FunctionDeclarations {
			if fd == nil {
				continue
			}
			def := shared.FunctionDefinitionParam{Name: fd.Name}
			if fd.Description != "" {
				def.Description = oai.String(fd.Description)
			}
			params, err := declarationParameters(fd)
			if err != nil {
				return nil, fmt.Errorf("openai: tool %q: %w", fd.Name, err)
			}
			def.Parameters = params
			out = append(out, oai.ChatCompletionFunctionTool(def))
		}
	}
	return out, nil
}

// toolKind names the first kind of tool t holds, for error messages.
func toolKind(t *genai.Tool) string {
	data, _ := json.Marshal(t)
	var fields map[string]json.RawMessage
	_ = json.Unmarshal(data, &fields)
	if len(fields) == 0 {
		return "an empty tool"
	}
	return slices.Sorted(maps.Keys(fields))[0]
}

// declarationParameters is the JSON schema of fd's parameters; a function
// without parameters gets an empty object schema, which every server takes.
func declarationParameters(fd *genai.FunctionDeclaration) (shared.FunctionParameters, error) {
	switch {
	case fd.ParametersJsonSchema != nil:
		return jsonSchemaObject(fd.ParametersJsonSchema)
	case fd.Parameters != nil:
		return schemaToJSON(fd.Parameters), nil
	}
	return map[string]any{"type": "object", "properties": map[string]any{}}, nil
}

// jsonSchemaObject returns a JSON schema given as any Go value (usually a
// map, or a struct from a schema library) as a JSON object.
func jsonSchemaObject(v any) (map[string]any, error) {
	data, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("encode JSON schema: %w", err)
	}
	var out map[string]any
	if err := json.Unmarshal(data, &out); err != nil || out == nil {
		return nil, fmt.Errorf("JSON schema is not an object: %s", data)
	}
	return out, nil
}

// schemaToJSON converts a Gemini schema to JSON schema: lowercase types,
// nullable as a "null" type, example as examples. propertyOrdering has no
// JSON-schema equivalent and is dropped.
func schemaToJSON(s *genai.Schema) map[string]any {
	if s == nil {
		return nil
	}
	out := map[string]any{}
	if s.Type != "" && s.Type != genai.TypeUnspecified {
		typ := strings.ToLower(string(s.Type))
		if s.Nullable != nil && *s.Nullable {
			out["type"] = []any{typ, "null"}
		} else {
			out["type"] = typ
		}
	}
	if len(s.AnyOf) > 0 {
		anyOf := make([]any, 0, len(s.AnyOf)+1)
		for _, sub := range s.AnyOf {
			anyOf = append(anyOf, schemaToJSON(sub))
		}
		if _, typed := out["type"]; !typed && s.Nullable != nil && *s.Nullable {
			anyOf = append(anyOf, map[string]any{"type": "null"})
		}
		out["anyOf"] = anyOf
	}
	if s.Title != "" {
		out["title"] = s.Title
	}
	if s.Description != "" {
		out["description"] = s.Description
	}
	if s.Format != "" {
		out["format"] = s.Format
	}
	if len(s.Enum) > 0 {
		enum := make([]any, len(s.Enum))
		for i, e := range s.Enum {
			enum[i] = e
		}
		out["enum"] = enum
	}
	if s.Default != nil {
		out["default"] = s.Default
	}
	if s.Example != nil {
		out["examples"] = []any{s.Example}
	}
	if s.Pattern != "" {
		out["pattern"] = s.Pattern
	}
	if s.Items != nil {
		out["items"] = schemaToJSON(s.Items)
	}
	if s.Properties != nil {
		props := make(map[string]any, len(s.Properties))
		for k, sub := range s.Properties {
			props[k] = schemaToJSON(sub)
		}
		out["properties"] = props
	}
	if len(s.Required) > 0 {
		req := make([]any, len(s.Required))
		for i, r := range s.Required {
			req[i] = r
		}
		out["required"] = req
	}
	for key, v := range map[string]*int64{
		"minItems": s.MinItems, "maxItems": s.MaxItems,
		"minLength": s.MinLength, "maxLength": s.MaxLength,
		"minProperties": s.MinProperties, "maxProperties": s.MaxProperties,
	} {
		if v != nil {
			out[key] = *v
		}
	}
	if s.Minimum != nil {
		out["minimum"] = *s.Minimum
	}
	if s.Maximum != nil {
		out["maximum"] = *s.Maximum
	}
	return out
}

// pendingCall is a function call of the history that got a made-up id.
type pendingCall struct {
	name string
	id   string
}

// idMapper gives function calls and responses of one request matching
// tool_call ids. Calls without an id get one made from their position, so
// the same history always gives the same request; a response without an
// id takes the id of the earliest unanswered call of the same name.
type idMapper struct {
	pending []pendingCall
}

func (im *idMapper) callID(fc *genai.FunctionCall, content, part int) string {
	if fc.ID != "" {
		return fc.ID
	}
	id := fmt.Sprintf("call_adk_%d_%d", content, part)
	im.pending = append(im.pending, pendingCall{name: fc.Name, id: id})
	return id
}

func (im *idMapper) responseID(fr *genai.FunctionResponse, content, part int) string {
	if fr.ID != "" {
		return fr.ID
	}
	for i, p := range im.pending {
		if p.name == fr.Name {
			im.pending = append(im.pending[:i:i], im.pending[i+1:]...)
			return p.id
		}
	}
	// An answer to a call that is not in the history; the server will
	// likely reject it, but with a message naming the id.
	return fmt.Sprintf("call_adk_%d_%d", content, part)
}

// convertContents maps the conversation onto chat messages. A user turn
// gives its function responses as tool messages first (they must follow
// the assistant message with the calls) and then one user message with the
// rest; a model turn gives one assistant message with its text and calls.
// Thoughts are not sent back.
func convertContents(contents []*genai.Content) ([]oai.ChatCompletionMessageParamUnion, error) {
	var out []oai.ChatCompletionMessageParamUnion
	var ids idMapper
	for ci, c := range contents {
		if c == nil {
			continue
		}
		if c.Role == genai.RoleModel {
			msg, ok, err := assistantMessage(c, ci, &ids)
			if err != nil {
				return nil, err
			}
			if ok {
				out = append(out, msg)
			}
			continue
		}
		var parts []oai.ChatCompletionContentPartUnionParam
		for pi, p := range c.Parts {
			switch {
			case p == nil || p.Thought:
			case p.FunctionResponse != nil:
				fr := p.FunctionResponse
				data, err := json.Marshal(responseValue(fr.Response))
				if err != nil {
					return nil, fmt.Errorf("openai: encode response of function %q: %w", fr.Name, err)
				}
				out = append(out, oai.ToolMessage(string(data), ids.responseID(fr, ci, pi)))
			case p.Text != "":
				parts = append(parts, oai.TextContentPart(p.Text))
			case p.InlineData != nil:
				if !strings.HasPrefix(p.InlineData.MIMEType, "image/") {
					return nil, fmt.Errorf("openai: inline data of type %q is not supported", p.InlineData.MIMEType)
				}
				url := "data:" + p.InlineData.MIMEType + ";base64," + base64.StdEncoding.EncodeToString(p.InlineData.Data)
				parts = append(parts, oai.ImageContentPart(oai.ChatCompletionContentPartImageImageURLParam{URL: url}))
			case p.FileData != nil:
				if !strings.HasPrefix(p.FileData.MIMEType, "image/") {
					return nil, fmt.Errorf("openai: file data of type %q is not supported", p.FileData.MIMEType)
				}
				parts = append(parts, oai.ImageContentPart(oai.ChatCompletionContentPartImageImageURLParam{URL: p.FileData.FileURI}))
			case p.FunctionCall != nil:
				return nil, fmt.Errorf("openai: function call %q in a %q turn", p.FunctionCall.Name, c.Role)
			}
		}
		switch {
		case len(parts) == 1 && parts[0].OfText != nil:
			// A plain string is what every server understands.
			out = append(out, oai.UserMessage(parts[0].OfText.Text))
		case len(parts) > 0:
			out = append(out, oai.UserMessage(parts))
		}
	}
	return out, nil
}

// responseValue is what a tool message carries: the function's response
// object, or {} for none.
func responseValue(r map[string]any) any {
	if r == nil {
		return map[string]any{}
	}
	return r
}

// assistantMessage maps a model turn; ok is false when it holds nothing to
// send (only thoughts, say).
func assistantMessage(c *genai.Content, ci int, ids *idMapper) (oai.ChatCompletionMessageParamUnion, bool, error) {
	var msg oai.ChatCompletionAssistantMessageParam
	var text strings.Builder
	hasText := false
	for pi, p := range c.Parts {
		switch {
		case p == nil || p.Thought:
		case p.FunctionCall != nil:
			fc := p.FunctionCall
			args := fc.Args
			if args == nil {
				args = map[string]any{}
			}
			data, err := json.Marshal(args)
			if err != nil {
				return oai.ChatCompletionMessageParamUnion{}, false, fmt.Errorf("openai: encode arguments of function call %q: %w", fc.Name, err)
			}
			msg.ToolCalls = append(msg.ToolCalls, oai.ChatCompletionMessageToolCallUnionParam{
				OfFunction: &oai.ChatCompletionMessageFunctionToolCallParam{
					ID:       ids.callID(fc, ci, pi),
					Function: oai.ChatCompletionMessageFunctionToolCallFunctionParam{Name: fc.Name, Arguments: string(data)},
				},
			})
		case p.Text != "":
			text.WriteString(p.Text)
			hasText = true
		case p.FunctionResponse != nil:
			return oai.ChatCompletionMessageParamUnion{}, false, fmt.Errorf("openai: function response %q in a model turn", p.FunctionResponse.Name)
		}
	}
	if hasText {
		msg.Content.OfString = oai.String(text.String())
	}
	if !hasText && len(msg.ToolCalls) == 0 {
		return oai.ChatCompletionMessageParamUnion{}, false, nil
	}
	return oai.ChatCompletionMessageParamUnion{OfAssistant: &msg}, true, nil
}
