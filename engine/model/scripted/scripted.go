// Package scripted provides offline models: Model plays back a fixed list of
// answers in call order and records the requests, for tests; Reactive
// answers each request by the first rule it matches, statelessly, for
// serving demos and load tests with many concurrent sessions.
package scripted

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/adkhost/adkhost/engine/model/streaming"
	"iter"
	"maps"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"google.golang.org/genai"

	"github.com/adkhost/adkhost/engine/model"
)

// ErrExhausted is wrapped by the error a Model yields once its script has no
// answer left.
var ErrExhausted = errors.New("script exhausted")

// Step is one scripted answer: a response to yield, or, when Err is set, an
// error that GenerateContent yields instead.
type Step struct {
	Response *model.Response
	Err      error
}

// Model is a model.Model that answers calls in order from its script. It is
// safe for concurrent use.
type Model struct {
	name string
	// keep bounds the requests recorded; 0 records them all.
	keep int

	mu       sync.Mutex
	steps    []Step
	next     int
	calls    int
	requests []*model.Request
}

// MaxRecordedRequests is how many requests a Model built from a script
// (Parse, FromYAML), as a server loads one from an app definition, records:
// the first ones. A server's model lives as long as its app and serves
// every session of it, so recording every request, each a copy of a
// session's whole history, grew without end, calls after the script ran
// out included.
const MaxRecordedRequests = 16

var _ model.Model = (*Model)(nil)

// New returns a Model named name that answers with responses, one per call.
func New(name string, responses ...*model.Response) *Model {
	steps := make([]Step, len(responses))
	for i, r := range responses {
		steps[i] = Step{Response: r}
	}
	return FromSteps(name, steps...)
}

// FromSteps returns a Model named name that plays steps, one per call.
func FromSteps(name string, steps ...Step) *Model {
	return &Model{name: name, steps: steps}
}

// Name returns the model's name.
func (m *Model) Name() string { return m.name }

// Requests returns copies of the requests received so far, in call order;
// for a Model built from a script, the first MaxRecordedRequests.
func (m *Model) Requests() []*model.Request {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]*model.Request, len(m.requests))
	for i, r := range m.requests {
		out[i] = copyRequest(r)
	}
	return out
}

// Remaining reports how many scripted steps have not been played yet.
func (m *Model) Remaining() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.steps) - m.next
}

// GenerateContent records req and plays the next step. Without stream it
// yields the scripted response; with stream it first yields partial
// responses carrying the response's parts piece by piece (each text split in
// two), then the response itself as the final, non-partial one.
func (m *Model) GenerateContent(ctx context.Context, req *model.Request, stream bool) iter.Seq2[*model.Response, error] {
	return func(yield func(*model.Response, error) bool) {
		if err := ctx.Err(); err != nil {
			yield(nil, fmt.Errorf("scripted model %q: %w", m.name, err))
			return
		}
		step, err := m.take(req)
		if err != nil {
			yield(nil, err)
			return
		}
		if step.Err != nil {
			yield(nil, step.Err)
			return
		}
		final, err := copyResponse(step.Response)
		if err != nil {
			yield(nil, fmt.Errorf("scripted model %q: %w", m.name, err))
			return
		}
		var out []*model.Response
		if stream {
			out = append(partials(final), final)
			final.Partial, final.Aggregated = false, true
		} else {
			out = []*model.Response{final}
		}
		for _, r := range out {
			if err := ctx.Err(); err != nil {
				yield(nil, fmt.Errorf("scripted model %q: %w", m.name, err))
				return
			}
			if !yield(r, nil) {
				return
			}
		}
	}
}

// take records req and returns the next step.
func (m *Model) take(req *model.Request) (Step, error) {
	m.mu.Lock()
	record := m.keep == 0 || len(m.requests) < m.keep
	m.mu.Unlock()
	var rec *model.Request
	if record {
		rec = copyRequest(req) // outside the lock: it is the costly part
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if record && (m.keep == 0 || len(m.requests) < m.keep) {
		m.requests = append(m.requests, rec)
	}
	m.calls++
	call := m.calls
	if m.next >= len(m.steps) {
		return Step{}, fmt.Errorf("scripted model %q: call %d has no answer, the script holds %d: %w",
			m.name, call, len(m.steps), ErrExhausted)
	}
	s := m.steps[m.next]
	m.next++
	if s.Err == nil && s.Response == nil {
		s.Response = &model.Response{}
	}
	return s, nil
}

// partials splits final's parts into the partial responses a streaming
// backend would yield before it: each text part in two pieces, every other
// part whole. The last partial carries the finish reason and usage, as the
// last chunk of a Gemini stream does. A response without parts streams as
// one partial copy of itself.
func partials(final *model.Response) []*model.Response {
	if final.Content == nil || len(final.Content.Parts) == 0 {
		cp := *final
		cp.Partial = true
		return []*model.Response{&cp}
	}
	role := final.Content.Role
	if role == "" {
		role = genai.RoleModel
	}
	var out []*model.Response
	add := func(p *genai.Part) {
		out = append(out, &model.Response{
			Content:      &genai.Content{Role: role, Parts: []*genai.Part{p}},
			Partial:      true,
			ModelVersion: final.ModelVersion,
		})
	}
	for _, p := range final.Content.Parts {
		if p == nil {
			continue
		}
		if p.Text == "" {
			cp := streaming.ClonePart(p)
			add(cp)
			continue
		}
		for i, piece := range splitText(p.Text) {
			cp := &genai.Part{Text: piece, Thought: p.Thought}
			if i == 0 {
				cp.ThoughtSignature = p.ThoughtSignature
			}
			add(cp)
		}
	}
	if n := len(out); n > 0 {
		out[n-1].FinishReason = final.FinishReason
		out[n-1].UsageMetadata = final.UsageMetadata
	}
	return out
}

// splitText cuts s in two near its middle, after a space when there is one,
// never inside a UTF-8 sequence. Short texts stay whole.
func splitText(s string) []string {
	if utf8.RuneCountInString(s) < 2 {
		return []string{s}
	}
	mid := len(s) / 2
	for mid > 0 && !utf8.RuneStart(s[mid]) {
		mid--
	}
	cut := mid
	// Prefer the end of a word close to the middle.
	if i := strings.LastIndexFunc(s[:mid], unicode.IsSpace); i > 0 {
		_, size := utf8.DecodeRuneInString(s[i:])
		cut = i + size
	} else if i := strings.IndexFunc(s[mid:], unicode.IsSpace); i >= 0 {
		_, size := utf8.DecodeRuneInString(s[mid+i:])
		cut = mid + i + size
	}
	if cut <= 0 || cut >= len(s) {
		cut = mid
	}
	if cut <= 0 {
		_, cut = utf8.DecodeRuneInString(s)
	}
	return []string{s[:cut], s[cut:]}
}

// copyRequest deep-copies req through JSON so that later changes by the
// engine do not reach the record.
func copyRequest(req *model.Request) *model.Request {
	if req == nil {
		return nil
	}
	data, err := json.Marshal(req)
	if err != nil {
		// Every field of Request marshals; keep a shallow copy just in case.
		cp := *req
		return &cp
	}
	out := &model.Request{}
	if err := json.Unmarshal(data, out); err != nil {
		cp := *req
		return &cp
	}
	return out
}

// copyResponse copies r so that the engine may change what it is given
// without touching the script. Content goes through JSON, as it would when
// coming from a real backend.
func copyResponse(r *model.Response) (*model.Response, error) {
	cp := *r
	if r.Content != nil {
		data, err := json.Marshal(r.Content)
		if err != nil {
			return nil, fmt.Errorf("copy response content: %w", err)
		}
		cp.Content = &genai.Content{}
		if err := json.Unmarshal(data, cp.Content); err != nil {
			return nil, fmt.Errorf("copy response content: %w", err)
		}
	}
	cp.CustomMetadata = maps.Clone(r.CustomMetadata)
	return &cp, nil
}
