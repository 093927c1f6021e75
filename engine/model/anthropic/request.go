package anthropic

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"

	ant "github.com/anthropics/anthropic-sdk-go"
	"github.com/anthropics/anthropic-sdk-go/packages/param"
	"google.golang.org/genai"

	"github.com/adkhost/adkhost/engine/model"
	"github.com/adkhost/adkhost/internal/keyorder"
	"github.com/adkhost/adkhost/internal/pyfmt"
)

// builtRequest is a Messages API request and, when the request asked for
// structured output, the tool that carries its schema.
type builtRequest struct {
	params     ant.MessageNewParams
	outputTool *outputSchemaTool
}

// buildParams maps req as google-adk's AnthropicLlm.generate_content_async
// and _build_anthropic_kwargs do.
func (m *Model) buildParams(req *model.Request, name string) (builtRequest, error) {
	messages, err := convertContents(req.Contents)
	if err != nil {
		return builtRequest{}, err
	}
	params := ant.MessageNewParams{Model: ant.Model(name), Messages: messages, MaxTokens: m.maxTokens}
	cfg := req.Config
	if cfg == nil {
		cfg = &genai.GenerateContentConfig{}
	}

	var decls []*genai.FunctionDeclaration
	for _, t := range cfg.Tools {
		if t != nil {
			decls = append(decls, t.FunctionDeclarations...)
		}
	}
	for _, d := range decls {
		if d == nil {
			continue
		}
		tp, err := toolParam(d)
		if err != nil {
			return builtRequest{}, err
		}
		params.Tools = append(params.Tools, ant.ToolUnionParam{OfTool: &tp})
	}
	if len(params.Tools) > 0 {
		// google-adk asks for auto when the request has tools of its own.
		params.ToolChoice = ant.ToolChoiceUnionParam{OfAuto: &ant.ToolChoiceAutoParam{}}
	}

	thinking, err := thinkingParam(cfg.ThinkingConfig)
	if err != nil {
		return builtRequest{}, err
	}
	params.Thinking = thinking
	thinkingOn := thinking.OfEnabled != nil || thinking.OfAdaptive != nil

	var out builtRequest
	// A requested schema rides along as the only tool, since forcing a
	// call on a request that declares tools would cut that turn short.
	// adkhost's engine gives an agent's output schema as a JSON schema,
	// google-adk as a Gemini schema; either is the tool's input schema.
	var responseSchema any
	switch {
	case cfg.ResponseSchema != nil:
		responseSchema = cfg.ResponseSchema
	case cfg.ResponseJsonSchema != nil:
		responseSchema = cfg.ResponseJsonSchema
	}
	if responseSchema != nil && len(decls) == 0 {
		ost, err := newOutputSchemaTool(responseSchema)
		if err != nil {
			return builtRequest{}, err
		}
		out.outputTool = ost
		params.Tools = []ant.ToolUnionParam{{OfTool: &ost.param}}
		params.ToolChoice = ost.choice(thinkingOn)
	}

	if system := systemText(cfg.SystemInstruction); system != "" {
		params.System = []ant.TextBlockParam{{Text: system}}
	}
	// Sampling parameters are left out while thinking is on: newer Claude
	// models reject them then (google-adk warns and drops them too).
	if !thinkingOn {
		if cfg.Temperature != nil {
			params.Temperature = param.NewOpt(float64(*cfg.Temperature))
		}
		if cfg.TopP != nil {
			params.TopP = param.NewOpt(float64(*cfg.TopP))
		}
		if cfg.TopK != nil {
			params.TopK = param.NewOpt(int64(*cfg.TopK))
		}
	}
	if len(cfg.StopSequences) > 0 {
		params.StopSequences = cfg.StopSequences
	}
	if cfg.MaxOutputTokens != 0 {
		params.MaxTokens = int64(cfg.MaxOutputTokens)
	}
	out.params = params
	return out, nil
}

// systemText is the system instruction's text parts joined by newlines
// (google-adk's extract_system_instruction), or "" for none.
func systemText(c *genai.Content) string {
	if c == nil {
		return ""
	}
	var texts []string
	for _, p := range c.Parts {
		if p != nil && p.Text != "" {
			texts = append(texts, p.Text)
		}
	}
	return strings.Join(texts, "\n")
}

// thinkingParam maps a thinking budget as google-adk does: 0 disables
// thinking, a negative budget asks for adaptive thinking with summarized
// thoughts, a positive one for that budget; a config without a budget is an
// error, since Claude needs an explicit choice.
func thinkingParam(tc *genai.ThinkingConfig) (ant.ThinkingConfigParamUnion, error) {
	if tc == nil {
		return ant.ThinkingConfigParamUnion{}, nil
	}
	if tc.ThinkingBudget == nil {
		return ant.ThinkingConfigParamUnion{}, fmt.Errorf("thinking_budget must be set explicitly when ThinkingConfig is provided for Anthropic models. Use 0 to disable thinking, -1 for adaptive (model-chosen depth), or a positive integer (>= 1024) for manual budgeting")
	}
	switch b := *tc.ThinkingBudget; {
	case b == 0:
		return ant.ThinkingConfigParamUnion{OfDisabled: &ant.ThinkingConfigDisabledParam{}}, nil
	case b < 0:
		return ant.ThinkingConfigParamUnion{OfAdaptive: &ant.ThinkingConfigAdaptiveParam{Display: ant.ThinkingConfigAdaptiveDisplaySummarized}}, nil
	default:
		return ant.ThinkingConfigParamUnion{OfEnabled: &ant.ThinkingConfigEnabledParam{BudgetTokens: int64(b)}}, nil
	}
}

// toolParam maps a function declaration to a tool: its JSON schema, or its
// Gemini schema's properties and required list, with lowercase types.
func toolParam(d *genai.FunctionDeclaration) (ant.ToolParam, error) {
	if d.Name == "" {
		return ant.ToolParam{}, fmt.Errorf("a function declaration has no name")
	}
	schema := map[string]any{"type": "object", "properties": map[string]any{}}
	if d.ParametersJsonSchema != nil {
		s, err := jsonObject(d.ParametersJsonSchema)
		if err != nil {
			return ant.ToolParam{}, fmt.Errorf("function %q: parameters JSON schema: %w", d.Name, err)
		}
		schema = s
	} else if d.Parameters != nil {
		props := map[string]any{}
		for k, v := range d.Parameters.Properties {
			p, err := jsonObject(v)
			if err != nil {
				return ant.ToolParam{}, fmt.Errorf("function %q: parameter %q: %w", d.Name, k, err)
			}
			props[k] = p
		}
		schema["properties"] = props
		if len(d.Parameters.Required) > 0 {
			schema["required"] = d.Parameters.Required
		}
	}
	lowercaseSchemaTypes(schema)
	tp := ant.ToolParam{Name: d.Name, Description: param.NewOpt(d.Description), InputSchema: inputSchema(schema)}
	return tp, nil
}

// inputSchema carries a JSON schema object as the library's input schema,
// every keyword but type as it is.
func inputSchema(schema map[string]any) ant.ToolInputSchemaParam {
	extra := make(map[string]any, len(schema))
	for k, v := range schema {
		if k != "type" {
			extra[k] = v
		}
	}
	// The library always writes type "object"; a tool's input is one.
	return ant.ToolInputSchemaParam{ExtraFields: extra}
}

// jsonObject returns v (a map, a genai.Schema or a schema library's type)
// as a JSON object.
func jsonObject(v any) (map[string]any, error) {
	data, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("encode schema: %w", err)
	}
	var out map[string]any
	if err := json.Unmarshal(data, &out); err != nil || out == nil {
		return nil, fmt.Errorf("schema is not a JSON object: %.200s", data)
	}
	return out, nil
}

// lowercaseSchemaTypes lowercases the type names of a JSON schema in place
// (Gemini's schema writes "STRING"), reaching subschemas through schema
// keywords only, as google-adk's lowercase_schema_types does.
func lowercaseSchemaTypes(v any) {
	switch t := v.(type) {
	case []any:
		for _, e := range t {
			lowercaseSchemaTypes(e)
		}
	case map[string]any:
		switch typ := t["type"].(type) {
		case string:
			t["type"] = strings.ToLower(typ)
		case []any:
			for i, e := range typ {
				if s, ok := e.(string); ok {
					typ[i] = strings.ToLower(s)
				}
			}
		}
		for _, k := range []string{"$defs", "definitions", "defs", "dependentSchemas", "patternProperties", "properties"} {
			if m, ok := t[k].(map[string]any); ok {
				for _, sub := range m {
					lowercaseSchemaTypes(sub)
				}
			}
		}
		for _, k := range []string{"additionalProperties", "additional_properties", "contains", "else", "if", "items", "not", "propertyNames", "then", "unevaluatedProperties"} {
			switch t[k].(type) {
			case map[string]any, []any:
				lowercaseSchemaTypes(t[k])
			}
		}
		for _, k := range []string{"allOf", "all_of", "anyOf", "any_of", "oneOf", "one_of", "prefixItems"} {
			if l, ok := t[k].([]any); ok {
				lowercaseSchemaTypes(l)
			}
		}
	}
}

// Output schema tool (google-adk's _OutputSchemaTool): Claude takes a
// response schema as the input schema of the one tool it is asked to call,
// and the call is turned back into the response text.
const (
	outputSchemaToolName = "structured_output"
	outputSchemaToolDesc = "Provide your final answer. Call this tool exactly once, with your whole answer in the structure its input describes."
	outputSchemaValueKey = "response"
)

type outputSchemaTool struct {
	param ant.ToolParam
	// nests is true when the schema is not an object and became the one
	// property of one.
	nests bool
}

func newOutputSchemaTool(s any) (*outputSchemaTool, error) {
	schema, err := jsonObject(s)
	if err != nil {
		return nil, fmt.Errorf("response schema: %w", err)
	}
	lowercaseSchemaTypes(schema)
	nests := schema["type"] != "object"
	if nests {
		// A $ref resolves from the root, so $defs stay there.
		defs, hasDefs := schema["$defs"]
		delete(schema, "$defs")
		schema = map[string]any{
			"type":       "object",
			"properties": map[string]any{outputSchemaValueKey: schema},
			"required":   []any{outputSchemaValueKey},
		}
		if hasDefs && defs != nil {
			schema["$defs"] = defs
		}
	}
	return &outputSchemaTool{
		param: ant.ToolParam{Name: outputSchemaToolName, Description: param.NewOpt(outputSchemaToolDesc), InputSchema: inputSchema(schema)},
		nests: nests,
	}, nil
}

// choice asks for exactly one call to the tool; with thinking on Claude
// refuses forced tool use, so the tool is only offered.
func (o *outputSchemaTool) choice(thinking bool) ant.ToolChoiceUnionParam {
	if thinking {
		return ant.ToolChoiceUnionParam{OfAuto: &ant.ToolChoiceAutoParam{DisableParallelToolUse: param.NewOpt(true)}}
	}
	return ant.ToolChoiceUnionParam{OfTool: &ant.ToolChoiceToolParam{Name: outputSchemaToolName, DisableParallelToolUse: param.NewOpt(true)}}
}

// text is the structured answer a call carries, as json.dumps(value,
// ensure_ascii=False) writes it, keys in the order Claude wrote them
// (hint is the input's key order).
func (o *outputSchemaTool) text(args map[string]any, hint json.RawMessage) string {
	var v any = args
	if o.nests {
		v = args[outputSchemaValueKey]
		hint = keyorder.Sub(hint, outputSchemaValueKey)
	}
	s, err := pyfmt.JSONDumpsOrdered(v, hint)
	if err != nil {
		// args came from JSON, so they encode.
		return "null"
	}
	return s
}

// unwrap replaces the call to the tool with the answer it carries, keeping
// thoughts and dropping prose Claude may have written before the call.
func (o *outputSchemaTool) unwrap(resp *model.Response) {
	if resp == nil || resp.Content == nil {
		return
	}
	var call *genai.FunctionCall
	var hint json.RawMessage
	for i, p := range resp.Content.Parts {
		if p != nil && p.FunctionCall != nil && p.FunctionCall.Name == outputSchemaToolName {
			call, hint = p.FunctionCall, resp.PartKeyOrder(i)
			break
		}
	}
	if call == nil {
		return
	}
	var parts []*genai.Part
	for _, p := range resp.Content.Parts {
		if p != nil && p.Thought {
			parts = append(parts, p)
		}
	}
	resp.Content = &genai.Content{Role: resp.Content.Role, Parts: append(parts, &genai.Part{Text: o.text(call.Args, hint)})}
	// The hints were by part; the parts left have no dicts.
	resp.KeyOrder = nil
}

// toolUseID matches the ids Claude accepts.
var toolUseID = regexp.MustCompile(`^[a-zA-Z0-9_-]+$`)

// idSanitizer gives function calls and responses ids Claude accepts, as
// google-adk's _ToolUseIdSanitizer does: valid ids are kept; invalid ones
// map to toolu_fallback_N, the same for a call and its response; a response
// without an id pairs with the oldest unanswered id-less call of its name,
// else the oldest of any name.
type idSanitizer struct {
	mapping  map[string]string
	byName   map[string][]string
	unpaired []string
	next     int
}

func (s *idSanitizer) fallback() string {
	id := fmt.Sprintf("toolu_fallback_%d", s.next)
	s.next++
	return id
}

func (s *idSanitizer) sanitize(id, name string, isCall bool) string {
	if id != "" && toolUseID.MatchString(id) {
		return id
	}
	if id != "" {
		if got, ok := s.mapping[id]; ok {
			return got
		}
		if s.mapping == nil {
			s.mapping = map[string]string{}
		}
		s.mapping[id] = s.fallback()
		return s.mapping[id]
	}
	if isCall {
		got := s.fallback()
		if name != "" {
			if s.byName == nil {
				s.byName = map[string][]string{}
			}
			s.byName[name] = append(s.byName[name], got)
		}
		s.unpaired = append(s.unpaired, got)
		return got
	}
	if ids := s.byName[name]; name != "" && len(ids) > 0 {
		got := ids[0]
		s.byName[name] = ids[1:]
		s.unpaired = remove(s.unpaired, got)
		return got
	}
	if len(s.unpaired) > 0 {
		got := s.unpaired[0]
		s.unpaired = s.unpaired[1:]
		for n, ids := range s.byName {
			if r := remove(ids, got); len(r) != len(ids) {
				s.byName[n] = r
				break
			}
		}
		return got
	}
	return s.fallback()
}

func remove(ids []string, id string) []string {
	for i, v := range ids {
		if v == id {
			return append(ids[:i:i], ids[i+1:]...)
		}
	}
	return ids
}

// Image media types Claude accepts.
var imageTypes = map[string]bool{"image/jpeg": true, "image/png": true, "image/gif": true, "image/webp": true}

// mediaType is a MIME type without parameters, lowercased.
func mediaType(mime string) string {
	t, _, _ := strings.Cut(mime, ";")
	return strings.ToLower(strings.TrimSpace(t))
}

func isImage(p *genai.Part) bool {
	return p.InlineData != nil && strings.HasPrefix(p.InlineData.MIMEType, "image/")
}

func isPDF(p *genai.Part) bool {
	return p.InlineData != nil && p.InlineData.MIMEType != "" && mediaType(p.InlineData.MIMEType) == "application/pdf"
}

// hasContent reports whether p carries something to send beside text and
// thought data.
func hasContent(p *genai.Part) bool {
	return p.CodeExecutionResult != nil || p.ExecutableCode != nil || p.FileData != nil ||
		p.FunctionCall != nil || p.FunctionResponse != nil || p.InlineData != nil ||
		p.ToolCall != nil || p.ToolResponse != nil
}

// convertContents maps the history to messages as google-adk does: roles
// model/assistant become assistant and the rest user; turns left without
// blocks are dropped, since Claude rejects empty messages.
func convertContents(contents []*genai.Content) ([]ant.MessageParam, error) {
	var out []ant.MessageParam
	var ids idSanitizer
	for ci, c := range contents {
		if c == nil {
			continue
		}
		role := ant.MessageParamRoleUser
		if c.Role == genai.RoleModel || c.Role == "assistant" {
			role = ant.MessageParamRoleAssistant
		}
		var blocks []ant.ContentBlockParamUnion
		hadEmptyText := false
		for pi, p := range c.Parts {
			if p == nil {
				continue
			}
			// Claude takes images and PDFs in user turns only.
			if c.Role != genai.RoleUser && (isImage(p) || isPDF(p)) {
				continue
			}
			// A thought signature from another model with nothing beside it.
			if len(p.ThoughtSignature) > 0 && !p.Thought && p.Text == "" && !hasContent(p) {
				continue
			}
			// Claude rejects empty text blocks.
			if p.Text == "" && len(p.ThoughtSignature) == 0 && !hasContent(p) {
				hadEmptyText = true
				continue
			}
			b, err := partBlock(p, &ids)
			if err != nil {
				return nil, fmt.Errorf("contents[%d].parts[%d]: %w", ci, pi, err)
			}
			blocks = append(blocks, b)
		}
		// A user turn whose only text was empty (code execution without
		// output) keeps a placeholder, so the conversation does not end on
		// an assistant turn, which Claude would take as a prefill.
		if len(blocks) == 0 && hadEmptyText && role == ant.MessageParamRoleUser {
			blocks = append(blocks, ant.NewTextBlock("."))
		}
		if len(blocks) == 0 {
			continue
		}
		out = append(out, ant.MessageParam{Role: role, Content: blocks})
	}
	return out, nil
}

// partBlock maps one part as google-adk's _part_to_message_block does.
func partBlock(p *genai.Part, ids *idSanitizer) (ant.ContentBlockParamUnion, error) {
	switch {
	case p.Thought && p.Text != "":
		return ant.ContentBlockParamUnion{OfThinking: &ant.ThinkingBlockParam{Thinking: p.Text, Signature: string(p.ThoughtSignature)}}, nil
	case p.Thought && len(p.ThoughtSignature) > 0:
		return ant.ContentBlockParamUnion{OfRedactedThinking: &ant.RedactedThinkingBlockParam{Data: string(p.ThoughtSignature)}}, nil
	case p.Text != "":
		return ant.NewTextBlock(p.Text), nil
	case p.FunctionCall != nil:
		fc := p.FunctionCall
		if fc.Name == "" {
			return ant.ContentBlockParamUnion{}, fmt.Errorf("function call %q has no name", fc.ID)
		}
		input := map[string]any{}
		for k, v := range fc.Args {
			input[k] = v
		}
		return ant.ContentBlockParamUnion{OfToolUse: &ant.ToolUseBlockParam{ID: ids.sanitize(fc.ID, fc.Name, true), Name: fc.Name, Input: input}}, nil
	case p.FunctionResponse != nil:
		return toolResult(p.FunctionResponse, ids)
	case isImage(p):
		mt := mediaType(p.InlineData.MIMEType)
		if !imageTypes[mt] {
			return ant.ContentBlockParamUnion{}, fmt.Errorf("Unsupported Anthropic image MIME type: %s", p.InlineData.MIMEType)
		}
		return ant.NewImageBlockBase64(mt, base64.StdEncoding.EncodeToString(p.InlineData.Data)), nil
	case isPDF(p):
		return ant.NewDocumentBlock(ant.Base64PDFSourceParam{Data: base64.StdEncoding.EncodeToString(p.InlineData.Data)}), nil
	case p.ExecutableCode != nil:
		return ant.NewTextBlock("Code:```python\n" + p.ExecutableCode.Code + "\n```"), nil
	case p.CodeExecutionResult != nil:
		return ant.NewTextBlock("Execution Result:```code_output\n" + p.CodeExecutionResult.Output + "\n```"), nil
	}
	return ant.ContentBlockParamUnion{}, fmt.Errorf("Not supported yet: %s", describePart(p))
}

// describePart names what a part holds, for the error on a part Claude
// cannot take.
func describePart(p *genai.Part) string {
	switch {
	case p.InlineData != nil:
		return fmt.Sprintf("inline data of type %q", p.InlineData.MIMEType)
	case p.FileData != nil:
		return fmt.Sprintf("file data %q of type %q", p.FileData.FileURI, p.FileData.MIMEType)
	case p.ToolCall != nil || p.ToolResponse != nil:
		return "a server-side tool call or response"
	}
	return "an empty part"
}

// toolResult maps a function response to a tool result as google-adk
// does: a non-empty "content" list or string is the text; exactly
// {"result": v} is v (JSON for objects and lists, Python's str otherwise);
// any other response is its JSON. Images and PDFs the tool attached follow
// the text; other media Claude cannot take in a tool result are dropped.
func toolResult(fr *genai.FunctionResponse, ids *idSanitizer) (ant.ContentBlockParamUnion, error) {
	data := fr.Response
	text := ""
	content, hasContentKey := data["content"]
	switch list, _ := content.([]any); {
	case hasContentKey && len(list) > 0:
		items := make([]string, 0, len(list))
		for _, item := range list {
			if m, ok := item.(map[string]any); ok && m["type"] == "text" {
				if t, ok := m["text"]; ok {
					items = append(items, pyfmt.Str(t))
					continue
				}
			}
			items = append(items, pyfmt.Str(item))
		}
		text = strings.Join(items, "\n")
	case hasContentKey && content != "" && isString(content):
		text = content.(string)
	case len(data) == 1 && data["result"] != nil:
		switch r := data["result"].(type) {
		case map[string]any, []any:
			s, err := pyfmt.JSONDumpsASCII(r)
			if err != nil {
				return ant.ContentBlockParamUnion{}, fmt.Errorf("function response %q: %w", fr.Name, err)
			}
			text = s
		default:
			text = pyfmt.Str(r)
		}
	case len(data) > 0:
		s, err := pyfmt.JSONDumpsASCII(data)
		if err != nil {
			return ant.ContentBlockParamUnion{}, fmt.Errorf("function response %q: %w", fr.Name, err)
		}
		text = s
	}
	block := &ant.ToolResultBlockParam{ToolUseID: ids.sanitize(fr.ID, fr.Name, false), IsError: param.NewOpt(false)}
	if text != "" {
		block.Content = append(block.Content, ant.ToolResultBlockParamContentUnion{OfText: &ant.TextBlockParam{Text: text}})
	}
	for _, rp := range fr.Parts {
		if rp == nil || rp.InlineData == nil || rp.InlineData.Data == nil || rp.InlineData.MIMEType == "" {
			continue
		}
		mt := mediaType(rp.InlineData.MIMEType)
		enc := base64.StdEncoding.EncodeToString(rp.InlineData.Data)
		switch {
		case imageTypes[mt]:
			block.Content = append(block.Content, ant.ToolResultBlockParamContentUnion{OfImage: &ant.ImageBlockParam{
				Source: ant.ImageBlockParamSourceUnion{OfBase64: &ant.Base64ImageSourceParam{MediaType: ant.Base64ImageSourceMediaType(mt), Data: enc}},
			}})
		case mt == "application/pdf":
			block.Content = append(block.Content, ant.ToolResultBlockParamContentUnion{OfDocument: &ant.DocumentBlockParam{
				Source: ant.DocumentBlockParamSourceUnion{OfBase64: &ant.Base64PDFSourceParam{Data: enc}},
			}})
		}
	}
	return ant.ContentBlockParamUnion{OfToolResult: block}, nil
}

func isString(v any) bool {
	_, ok := v.(string)
	return ok
}
