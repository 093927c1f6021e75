package session

import (
	"encoding/base64"
	"encoding/json"
	"maps"
	"slices"
	"strconv"

	"google.golang.org/genai"

	"github.com/adkhost/adkhost/internal/keyorder"
)

// The event encoder writes what encoding/json writes for an Event (through
// the struct MarshalJSON used to hand it: eventJSON, then the float
// timestamp), byte for byte, without reflection: every turn's events are
// encoded for the store and again for the client, and reflection over
// genai's wide structs was a tenth of a served turn. The fields it knows
// the types of it writes itself; the rare ones (grounding, usage,
// transcriptions, node info, ...) it hands to json.Marshal one field at a
// time. Values (args, responses, state) go through keyorder.AppendJSON.
// FuzzEventJSON checks it against the reflective encoding, kept in a
// test file.

// appendEvent appends e's JSON.
func appendEvent(b []byte, e *Event) ([]byte, error) {
	w := fields{b: append(b, '{')}
	r := &e.Response
	if r.Content != nil {
		w.key("content")
		w.content(r.Content, r.KeyOrder)
	}
	if r.GroundingMetadata != nil {
		w.marshal("groundingMetadata", r.GroundingMetadata)
	}
	if r.Partial {
		w.boolean("partial", true)
	} else if r.Aggregated {
		w.key("partial")
		w.b = append(w.b, "false"...)
	}
	w.boolean("turnComplete", r.TurnComplete)
	w.str("finishReason", string(r.FinishReason))
	w.str("errorCode", r.ErrorCode)
	w.str("errorMessage", r.ErrorMessage)
	w.boolean("interrupted", r.Interrupted)
	if r.CustomMetadata != nil {
		w.key("customMetadata")
		w.value(r.CustomMetadata, nil)
	}
	if r.UsageMetadata != nil {
		w.marshal("usageMetadata", r.UsageMetadata)
	}
	if r.InputTranscription != nil {
		w.marshal("inputTranscription", r.InputTranscription)
	}
	if r.OutputTranscription != nil {
		w.marshal("outputTranscription", r.OutputTranscription)
	}
	if r.AvgLogprobs != 0 {
		w.key("avgLogprobs")
		w.float(r.AvgLogprobs)
	}
	if r.LogprobsResult != nil {
		w.marshal("logprobsResult", r.LogprobsResult)
	}
	if r.CacheMetadata != nil {
		w.marshal("cacheMetadata", r.CacheMetadata)
	}
	if r.CitationMetadata != nil {
		w.marshal("citationMetadata", r.CitationMetadata)
	}
	w.str("interactionId", r.InteractionID)
	w.str("modelVersion", r.ModelVersion)

	w.key("id")
	w.b = keyorder.AppendJSONString(w.b, e.ID)
	w.key("invocationId")
	w.b = keyorder.AppendJSONString(w.b, e.InvocationID)
	w.key("author")
	w.b = keyorder.AppendJSONString(w.b, e.Author)
	w.str("branch", e.Branch)
	w.key("actions")
	w.actions(&e.Actions)
	if len(e.LongRunningToolIDs) > 0 {
		w.key("longRunningToolIds")
		w.b = appendStrings(w.b, e.LongRunningToolIDs)
	}
	if n := e.NodeInfo; n != nil {
		// Every agent event carries one.
		w.key("nodeInfo")
		o := fields{b: append(w.b, '{')}
		o.key("path")
		o.b = keyorder.AppendJSONString(o.b, n.Path)
		if len(n.OutputFor) > 0 {
			o.key("outputFor")
			o.b = appendStrings(o.b, n.OutputFor)
		}
		o.boolean("messageAsOutput", n.MessageAsOutput)
		w.b = append(o.b, '}')
	}
	w.str("isolationScope", e.IsolationScope)
	if e.Output != nil {
		w.key("output")
		w.value(e.Output, nil)
	}
	w.key("timestamp")
	w.float(TimeToFloat(e.Timestamp))
	if w.err != nil {
		return nil, w.err
	}
	return append(w.b, '}'), nil
}

// fields writes an object's members, the first without a comma, keeping
// the first error.
type fields struct {
	b     []byte
	comma bool
	err   error
}

func (w *fields) key(k string) {
	if w.comma {
		w.b = append(w.b, ',')
	}
	w.comma = true
	w.b = append(w.b, '"')
	w.b = append(w.b, k...) // the keys are ours: plain ASCII
	w.b = append(w.b, '"', ':')
}

// str writes an omitempty string field.
func (w *fields) str(k, v string) {
	if v != "" {
		w.key(k)
		w.b = keyorder.AppendJSONString(w.b, v)
	}
}

// boolean writes an omitempty bool field.
func (w *fields) boolean(k string, v bool) {
	if v {
		w.key(k)
		w.b = append(w.b, "true"...)
	}
}

// appendStrings writes a list of strings.
func appendStrings(b []byte, list []string) []byte {
	b = append(b, '[')
	for i, s := range list {
		if i > 0 {
			b = append(b, ',')
		}
		b = keyorder.AppendJSONString(b, s)
	}
	return append(b, ']')
}

// appendVersions writes an artifact delta as encoding/json does (keys
// sorted): the events of a tool or callback that saved artifacts carry
// one.
func appendVersions(b []byte, m map[string]int) []byte {
	b = append(b, '{')
	for i, k := range slices.Sorted(maps.Keys(m)) {
		if i > 0 {
			b = append(b, ',')
		}
		b = keyorder.AppendJSONString(b, k)
		b = append(b, ':')
		b = strconv.AppendInt(b, int64(m[k]), 10)
	}
	return append(b, '}')
}

// marshal writes a field with encoding/json.
func (w *fields) marshal(k string, v any) {
	w.key(k)
	data, err := json.Marshal(v)
	if err != nil && w.err == nil {
		w.err = err
	}
	w.b = append(w.b, data...)
}

func (w *fields) float(f float64) {
	var err error
	if w.b, err = keyorder.AppendJSONFloat(w.b, f); err != nil && w.err == nil {
		w.err = err
	}
}

// value writes a JSON-like value, maps in the order of hint t.
func (w *fields) value(v any, t *keyorder.Tree) {
	var err error
	if w.b, err = keyorder.AppendJSON(w.b, v, t); err != nil && w.err == nil {
		w.err = err
	}
}

func (w *fields) actions(a *EventActions) {
	o := fields{b: append(w.b, '{')}
	if a.SkipSummarizationSet && !a.SkipSummarization {
		o.key("skipSummarization")
		o.b = append(o.b, "false"...)
	} else {
		o.boolean("skipSummarization", a.SkipSummarization)
	}
	if a.StateDelta != nil {
		o.key("stateDelta")
		o.value(a.StateDelta, nil)
	}
	if a.ArtifactDelta != nil {
		o.key("artifactDelta")
		o.b = appendVersions(o.b, a.ArtifactDelta)
	}
	o.str("transferToAgent", a.TransferToAgent)
	o.str("transferReason", a.TransferReason)
	o.boolean("escalate", a.Escalate)
	if a.RequestedAuthConfigs != nil {
		o.key("requestedAuthConfigs")
		o.value(a.RequestedAuthConfigs, nil)
	}
	if a.RequestedToolConfirmations != nil {
		o.marshal("requestedToolConfirmations", a.RequestedToolConfirmations)
	}
	if a.Compaction != nil {
		o.marshal("compaction", a.Compaction)
	}
	o.boolean("endOfAgent", a.EndOfAgent)
	if a.AgentState != nil {
		o.key("agentState")
		o.value(a.AgentState, nil)
	}
	o.str("rewindBeforeInvocationId", a.RewindBeforeInvocationID)
	if a.SetModelResponse != nil {
		o.key("setModelResponse")
		o.value(a.SetModelResponse, nil)
	}
	w.b = append(o.b, '}')
	if o.err != nil && w.err == nil {
		w.err = o.err
	}
}

// content writes c: an empty text part as {"text":""}, and the args or
// response of part i in the order of hints[i] (marshalContent's rules).
func (w *fields) content(c *genai.Content, hints []json.RawMessage) {
	o := fields{b: append(w.b, '{')}
	if len(c.Parts) > 0 {
		o.key("parts")
		o.b = append(o.b, '[')
		for i, p := range c.Parts {
			if i > 0 {
				o.b = append(o.b, ',')
			}
			var hint json.RawMessage
			if i < len(hints) {
				hint = hints[i]
			}
			o.part(p, hint)
		}
		o.b = append(o.b, ']')
	}
	o.str("role", c.Role)
	w.b = append(o.b, '}')
	if o.err != nil && w.err == nil {
		w.err = o.err
	}
}

func (w *fields) part(p *genai.Part, hint json.RawMessage) {
	switch {
	case p == nil:
		w.b = append(w.b, "null"...)
		return
	case IsEmptyText(p):
		w.b = append(w.b, `{"text":""}`...)
		return
	}
	// A part with a hint writes its call or response last, the hinted map
	// last in it (marshalOrderedPart's struct embedding).
	ordered := hint != nil && (p.FunctionCall != nil || p.FunctionResponse != nil)
	o := fields{b: append(w.b, '{')}
	if p.MediaResolution != nil {
		o.marshal("mediaResolution", p.MediaResolution)
	}
	if p.CodeExecutionResult != nil {
		o.marshal("codeExecutionResult", p.CodeExecutionResult)
	}
	if p.ExecutableCode != nil {
		o.marshal("executableCode", p.ExecutableCode)
	}
	if p.FileData != nil {
		o.marshal("fileData", p.FileData)
	}
	if !ordered {
		o.call(p.FunctionCall, nil)
		o.response(p.FunctionResponse, nil)
	}
	if p.InlineData != nil {
		o.marshal("inlineData", p.InlineData)
	}
	o.str("text", p.Text)
	o.boolean("thought", p.Thought)
	if len(p.ThoughtSignature) > 0 {
		o.key("thoughtSignature")
		o.b = append(o.b, '"')
		o.b = base64.StdEncoding.AppendEncode(o.b, p.ThoughtSignature)
		o.b = append(o.b, '"')
	}
	if p.VideoMetadata != nil {
		o.marshal("videoMetadata", p.VideoMetadata)
	}
	if p.ToolCall != nil {
		o.marshal("toolCall", p.ToolCall)
	}
	if p.ToolResponse != nil {
		o.marshal("toolResponse", p.ToolResponse)
	}
	if len(p.PartMetadata) > 0 {
		o.key("partMetadata")
		o.value(p.PartMetadata, nil)
	}
	if p.AudioTranscription != nil {
		o.marshal("audioTranscription", p.AudioTranscription)
	}
	o.str("mediaProcessing", string(p.MediaProcessing))
	if p.SpeechMetadata != nil {
		o.marshal("speechMetadata", p.SpeechMetadata)
	}
	if ordered {
		t := keyorder.Parse(hint)
		o.call(p.FunctionCall, t)
		o.response(p.FunctionResponse, t)
	}
	w.b = append(o.b, '}')
	if o.err != nil && w.err == nil {
		w.err = o.err
	}
}

// call writes a function call; with a hint tree, its args go last.
func (w *fields) call(fc *genai.FunctionCall, t *keyorder.Tree) {
	if fc == nil {
		return
	}
	w.key("functionCall")
	o := fields{b: append(w.b, '{')}
	o.str("id", fc.ID)
	if t == nil && len(fc.Args) > 0 {
		o.key("args")
		o.value(fc.Args, nil)
	}
	o.str("name", fc.Name)
	if len(fc.PartialArgs) > 0 {
		o.marshal("partialArgs", fc.PartialArgs)
	}
	if fc.WillContinue != nil {
		o.marshal("willContinue", fc.WillContinue)
	}
	if t != nil && len(fc.Args) > 0 {
		o.key("args")
		o.value(fc.Args, t)
	}
	w.b = append(o.b, '}')
	if o.err != nil && w.err == nil {
		w.err = o.err
	}
}

// response writes a function response; with a hint tree, its response
// goes last.
func (w *fields) response(fr *genai.FunctionResponse, t *keyorder.Tree) {
	if fr == nil {
		return
	}
	w.key("functionResponse")
	o := fields{b: append(w.b, '{')}
	if fr.WillContinue != nil {
		o.marshal("willContinue", fr.WillContinue)
	}
	o.str("scheduling", string(fr.Scheduling))
	if len(fr.Parts) > 0 {
		o.marshal("parts", fr.Parts)
	}
	o.str("id", fr.ID)
	o.str("name", fr.Name)
	if len(fr.Response) > 0 {
		o.key("response")
		o.value(fr.Response, t)
	}
	w.b = append(o.b, '}')
	if o.err != nil && w.err == nil {
		w.err = o.err
	}
}
