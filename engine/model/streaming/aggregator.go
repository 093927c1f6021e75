// Package streaming folds the chunks of a streamed model answer into partial
// responses and one final aggregated response, as google-adk's SSE path does.
package streaming

import (
	"maps"
	"strings"

	"github.com/google/uuid"
	"google.golang.org/genai"

	"github.com/adkhost/adkhost/engine/model"
)

// ClientFunctionCallIDPrefix starts every function call id made on the client
// side; ids with it are never taken as the model's own.
const ClientFunctionCallIDPrefix = "adk-"

// NewClientFunctionCallID returns a fresh client-side function call id,
// "adk-" followed by a random UUID, as google-adk generates them.
func NewClientFunctionCallID() string { return ClientFunctionCallIDPrefix + uuid.NewString() }

// Aggregator turns the chunks of one streamed model turn into responses.
// Every chunk becomes a partial response; Close builds the final one, whose
// parts keep their arrival order with consecutive text of the same kind
// (thought or answer) merged, and with function calls whose arguments were
// streamed piece by piece put back together. This is google-adk's
// StreamingResponseAggregator with progressive SSE streaming on (its
// default). An Aggregator is for one turn and one goroutine.
type Aggregator struct {
	newID func() string

	last         *genai.GenerateContentResponse
	usage        *genai.GenerateContentResponseUsageMetadata
	grounding    *genai.GroundingMetadata
	citation     *genai.CitationMetadata
	finishReason genai.FinishReason

	// parts holds the final parts in order; a nil entry keeps the place of
	// a function call whose arguments are still streaming.
	parts []*genai.Part

	text        strings.Builder
	hasText     bool
	textThought bool
	textSig     []byte

	call *openCall
}

// openCall is a function call whose arguments arrive over several chunks.
type openCall struct {
	name string
	id   string
	sig  []byte
	args map[string]any
	// strs buffers string pieces per JSON path until the call is flushed.
	strs map[string]*strings.Builder
	slot int
}

// New returns an empty Aggregator. newID makes ids for function calls the
// model sent without one; nil means NewClientFunctionCallID.
func New(newID func() string) *Aggregator {
	if newID == nil {
		newID = NewClientFunctionCallID
	}
	return &Aggregator{newID: newID}
}

// Process folds one chunk in and returns the partial response to yield for
// it. Function calls in the chunk that lack an id get one, in place, so the
// partial and the final response agree on it.
func (a *Aggregator) Process(chunk *genai.GenerateContentResponse) *model.Response {
	if chunk == nil {
		chunk = &genai.GenerateContentResponse{}
	}
	a.last = chunk
	resp := model.FromGenerateContentResponse(chunk)
	if resp.UsageMetadata != nil {
		a.usage = resp.UsageMetadata
	}
	if resp.GroundingMetadata != nil {
		a.grounding = resp.GroundingMetadata
	}
	if resp.CitationMetadata != nil {
		a.citation = resp.CitationMetadata
	}
	if resp.FinishReason != "" {
		a.finishReason = resp.FinishReason
	}
	if resp.Content != nil {
		for _, p := range resp.Content.Parts {
			a.addPart(p)
		}
	}
	resp.Partial = true
	return resp
}

// Close flushes what is still buffered and returns the final, non-partial
// response, or nil when no chunk was processed.
func (a *Aggregator) Close() *model.Response {
	if a.last == nil {
		return nil
	}
	var cand *genai.Candidate
	if len(a.last.Candidates) > 0 {
		cand = a.last.Candidates[0]
	}
	finish := a.finishReason
	if finish == "" && cand != nil {
		finish = cand.FinishReason
	}
	out := &model.Response{
		Aggregated:        true,
		GroundingMetadata: a.grounding,
		CitationMetadata:  a.citation,
		UsageMetadata:     a.usage,
		FinishReason:      finish,
		ModelVersion:      a.last.ModelVersion,
	}
	switch {
	case finish != "" && finish != genai.FinishReasonStop:
		out.ErrorCode = string(finish)
		if cand != nil {
			out.ErrorMessage = cand.FinishMessage
		}
	case cand == nil && a.last.PromptFeedback != nil:
		out.ErrorCode = string(a.last.PromptFeedback.BlockReason)
		out.ErrorMessage = a.last.PromptFeedback.BlockReasonMessage
	}

	a.flushText()
	a.flushCall()
	parts := dedupeCalls(a.parts)
	a.parts = nil
	if len(parts) > 0 {
		out.Content = &genai.Content{Role: genai.RoleModel, Parts: parts}
	}
	return out
}

func (a *Aggregator) addPart(p *genai.Part) {
	switch {
	case p == nil:
	case p.Text != "":
		if a.hasText && p.Thought != a.textThought {
			a.flushText()
		}
		if !a.hasText {
			a.hasText = true
			a.textThought = p.Thought
		}
		a.text.WriteString(p.Text)
		// The signature may ride on any chunk of the run; keep the first.
		if len(a.textSig) == 0 && len(p.ThoughtSignature) > 0 {
			a.textSig = p.ThoughtSignature
		}
	case p.FunctionCall != nil:
		a.addCall(p)
	default:
		a.flushText()
		a.parts = append(a.parts, ClonePart(p))
	}
}

func (a *Aggregator) addCall(p *genai.Part) {
	fc := p.FunctionCall
	streamed := len(fc.PartialArgs) > 0 || fc.WillContinue != nil || (a.call != nil && len(fc.Args) == 0)
	if !streamed {
		a.flushText()
		a.flushCall()
		if fc.Name != "" {
			if fc.ID == "" {
				fc.ID = a.newID()
			}
			a.parts = append(a.parts, ClonePart(p))
		}
		return
	}

	// A call with another name closes the one still open.
	if fc.Name != "" && a.call != nil && a.call.name != "" && fc.Name != a.call.name {
		a.flushText()
		a.flushCall()
	}
	if a.call == nil {
		a.flushText()
		if fc.ID == "" {
			fc.ID = a.newID()
		}
		a.call = &openCall{id: fc.ID, args: map[string]any{}, strs: map[string]*strings.Builder{}, slot: len(a.parts)}
		a.parts = append(a.parts, nil)
	}
	c := a.call
	if fc.Name != "" {
		c.name = fc.Name
	}
	if fc.ID != "" && c.id == "" {
		c.id = fc.ID
	}
	if fc.ID == "" && c.id != "" {
		fc.ID = c.id
	}
	if len(p.ThoughtSignature) > 0 && len(c.sig) == 0 {
		c.sig = p.ThoughtSignature
	}
	// google-adk reads only partial arguments here; whole arguments sent
	// alongside are kept too rather than dropped.
	for k, v := range fc.Args {
		c.args[k] = v
	}
	for _, pa := range fc.PartialArgs {
		if pa == nil || pa.JsonPath == "" {
			continue
		}
		switch {
		case pa.NumberValue != nil && pa.StringValue == "":
			delete(c.strs, pa.JsonPath)
			setPath(c.args, parsePath(pa.JsonPath), *pa.NumberValue)
		case pa.BoolValue != nil && pa.StringValue == "":
			delete(c.strs, pa.JsonPath)
			setPath(c.args, parsePath(pa.JsonPath), *pa.BoolValue)
		case pa.NULLValue != "" && pa.StringValue == "":
			delete(c.strs, pa.JsonPath)
			setPath(c.args, parsePath(pa.JsonPath), nil)
		default:
			c.appendString(pa.JsonPath, pa.StringValue)
		}
	}
	if fc.WillContinue == nil || !*fc.WillContinue {
		a.flushText()
		a.flushCall()
	}
}

// appendString buffers a piece of a streamed string argument. The first
// piece for a path starts from any string already there and reserves the key.
func (c *openCall) appendString(path, piece string) {
	b, ok := c.strs[path]
	if !ok {
		b = &strings.Builder{}
		parsed := parsePath(path)
		if v, found := getPath(c.args, parsed); found {
			if s, isStr := v.(string); isStr {
				b.WriteString(s)
			}
		}
		c.strs[path] = b
		setPath(c.args, parsed, "")
	}
	b.WriteString(piece)
}

func (a *Aggregator) flushText() {
	if !a.hasText {
		return
	}
	a.parts = append(a.parts, &genai.Part{Text: a.text.String(), Thought: a.textThought, ThoughtSignature: a.textSig})
	a.text.Reset()
	a.hasText = false
	a.textThought = false
	a.textSig = nil
}

func (a *Aggregator) flushCall() {
	c := a.call
	a.call = nil
	if c == nil || c.name == "" {
		return
	}
	for path, b := range c.strs {
		setPath(c.args, parsePath(path), b.String())
	}
	part := &genai.Part{
		FunctionCall:     &genai.FunctionCall{ID: c.id, Name: c.name, Args: maps.Clone(c.args)},
		ThoughtSignature: c.sig,
	}
	if c.slot >= 0 && c.slot < len(a.parts) && a.parts[c.slot] == nil {
		a.parts[c.slot] = part
		return
	}
	a.parts = append(a.parts, part)
}

// dedupeCalls drops nil slots and function calls that repeat an id the model
// gave. Calls with client-made ids are all kept.
func dedupeCalls(parts []*genai.Part) []*genai.Part {
	seen := map[string]bool{}
	out := make([]*genai.Part, 0, len(parts))
	for _, p := range parts {
		if p == nil {
			continue
		}
		if fc := p.FunctionCall; fc != nil && fc.ID != "" && !strings.HasPrefix(fc.ID, ClientFunctionCallIDPrefix) {
			if seen[fc.ID] {
				continue
			}
			seen[fc.ID] = true
		}
		out = append(out, p)
	}
	return out
}

// ClonePart copies a part so a response does not share a function
// call (or its argument map) with the partial response it came from.
func ClonePart(p *genai.Part) *genai.Part {
	cp := *p
	if p.FunctionCall != nil {
		fc := *p.FunctionCall
		fc.Args = maps.Clone(p.FunctionCall.Args)
		cp.FunctionCall = &fc
	}
	return &cp
}
