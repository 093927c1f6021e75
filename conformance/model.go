package conformance

import (
	"context"
	"fmt"
	"iter"
	"sync"
	"time"

	"google.golang.org/genai"

	"github.com/adkhost/adkhost/engine"
	"github.com/adkhost/adkhost/engine/model"
)

// script is the scripted model's shared state (FORMAT.md §1.6): every model
// instance of a scenario answers from the same responses and records every
// request.
type script struct {
	// agentNames are the scenario's agent names, schemaAgents those with
	// an output_schema (dumpRequest).
	agentNames, schemaAgents map[string]bool
	mu                       sync.Mutex
	responses                []*ResponseSpec
	used                     []bool
	exhausted                bool
	requests                 []map[string]any
	outputSchemaAndTools     bool
	turn                     int
	// changed is closed (and replaced) whenever a response is used.
	changed chan struct{}
}

func newScript(sc *Scenario) *script {
	names, schemaAgents := map[string]bool{}, map[string]bool{}
	var walk func(a *AgentSpec)
	walk = func(a *AgentSpec) {
		if a == nil {
			return
		}
		names[a.Name] = true
		if a.OutputSchema != nil {
			schemaAgents[a.Name] = true
		}
		for _, sub := range a.SubAgents {
			walk(sub)
		}
		for _, t := range a.Tools {
			if t.AgentTool != nil {
				walk(t.AgentTool.Agent)
			}
		}
	}
	walk(sc.Agent)
	return &script{
		agentNames:           names,
		schemaAgents:         schemaAgents,
		responses:            sc.ModelResponses,
		used:                 make([]bool, len(sc.ModelResponses)),
		changed:              make(chan struct{}),
		outputSchemaAndTools: sc.OutputSchemaAndTools,
	}
}

func (s *script) setTurn(t int) {
	s.mu.Lock()
	s.turn = t
	s.mu.Unlock()
}

func (s *script) usedCount() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, u := range s.used {
		if u {
			n++
		}
	}
	return n
}

// take records req and picks the first unused response for agent. Scripts
// are written in the order google-adk asked for them; when agents run
// concurrently (ParallelAgent branches), a request waits while an earlier
// unused response belongs to another agent, so requests are answered in
// script order, as a model slower for the later branch would make happen.
// The wait is bounded so a scenario can never hang on it.
func (s *script) take(req *model.Request, stream bool) (*ResponseSpec, error) {
	recorded := dumpRequest(req, s.agentNames, s.schemaAgents)
	agent := ""
	if req.Config != nil {
		agent = req.Config.Labels["adk_agent_name"]
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	deadline := time.Now().Add(2 * time.Second)
	for s.waitsForOtherAgent(agent) && time.Now().Before(deadline) {
		changed := s.changed
		s.mu.Unlock()
		select {
		case <-changed:
		case <-time.After(time.Until(deadline)):
		}
		s.mu.Lock()
	}
	index := len(s.requests)
	recorded["turn"] = int64(s.turn)
	recorded["stream"] = stream
	s.requests = append(s.requests, recorded)
	for i, r := range s.responses {
		if s.used[i] || (r.Agent != "" && r.Agent != agent) {
			continue
		}
		s.used[i] = true
		close(s.changed)
		s.changed = make(chan struct{})
		recorded["response_index"] = int64(i)
		return r, nil
	}
	s.exhausted = true
	return nil, &PyError{Type: "RuntimeError", Msg: fmt.Sprintf("scripted model: no response left for request #%d (agent %s)", index+1, pyNoneOr(agent))}
}

// waitsForOtherAgent reports whether an unused response bound to another
// agent comes before agent's next response. s.mu must be held.
func (s *script) waitsForOtherAgent(agent string) bool {
	for i, r := range s.responses {
		if s.used[i] {
			continue
		}
		if r.Agent == "" || r.Agent == agent {
			return false
		}
		// An earlier response is bound to another agent: wait for it,
		// unless agent has no response at all (then nothing to order).
		for _, later := range s.responses[i+1:] {
			if later.Agent == agent {
				return true
			}
		}
		return false
	}
	return false
}

func pyNoneOr(s string) string {
	if s == "" {
		return "None"
	}
	return s
}

// scriptedModel is one named model instance over the shared script.
type scriptedModel struct {
	name string
	s    *script
}

var (
	_ model.Model                 = (*scriptedModel)(nil)
	_ engine.SchemaWithToolsModel = (*scriptedModel)(nil)
)

func (m *scriptedModel) Name() string { return m.name }

// SupportsOutputSchemaWithTools reports model_capabilities.output_schema_and_tools.
func (m *scriptedModel) SupportsOutputSchemaWithTools() bool { return m.s.outputSchemaAndTools }

func (m *scriptedModel) GenerateContent(ctx context.Context, req *model.Request, stream bool) iter.Seq2[*model.Response, error] {
	return func(yield func(*model.Response, error) bool) {
		spec, err := m.s.take(req, stream)
		if err != nil {
			yield(nil, err)
			return
		}
		if spec.Err != nil {
			yield(nil, &PyError{Type: spec.Err.Type, Msg: spec.Err.Msg})
			return
		}
		if stream {
			for _, chunk := range spec.Partials {
				r := &model.Response{Content: &genai.Content{Role: "model", Parts: []*genai.Part{{Text: chunk}}}, Partial: true}
				if !yield(r, nil) {
					return
				}
			}
		}
		resp := buildResponse(spec)
		if stream {
			resp.Aggregated = true // partial=False on the final response
		}
		yield(resp, nil)
	}
}

// buildResponse makes a fresh response for a spec, like build_llm_response.
func buildResponse(r *ResponseSpec) *model.Response {
	out := &model.Response{}
	parts := buildParts(r.Parts)
	if len(parts) > 0 && !r.NoContent {
		out.Content = &genai.Content{Role: r.Role, Parts: parts}
		for i, p := range r.Parts {
			switch {
			case p.Call != nil:
				out.SetPartKeyOrder(i, p.Call.ArgsOrder)
			case p.Response != nil:
				out.SetPartKeyOrder(i, p.Response.ResponseOrder)
			}
		}
	}
	if r.ErrorCode != nil {
		out.ErrorCode = *r.ErrorCode
	}
	if r.ErrorMessage != nil {
		out.ErrorMessage = *r.ErrorMessage
	}
	if r.TurnComplete != nil {
		out.TurnComplete = *r.TurnComplete
	}
	if r.CustomMetadata != nil {
		out.CustomMetadata = deepCopyMap(r.CustomMetadata)
	}
	if r.FinishReason != "" {
		out.FinishReason = genai.FinishReason(r.FinishReason)
	}
	if r.UsageMetadata != nil {
		out.UsageMetadata = &genai.GenerateContentResponseUsageMetadata{
			PromptTokenCount:     int32(r.UsageMetadata["prompt_token_count"]),
			CandidatesTokenCount: int32(r.UsageMetadata["candidates_token_count"]),
			TotalTokenCount:      int32(r.UsageMetadata["total_token_count"]),
		}
	}
	return out
}

func buildParts(specs []PartSpec) []*genai.Part {
	var parts []*genai.Part
	for _, p := range specs {
		parts = append(parts, buildPart(p))
	}
	return parts
}

func buildPart(p PartSpec) *genai.Part {
	gp := &genai.Part{Thought: p.Thought}
	if p.Text != nil {
		gp.Text = *p.Text
	}
	if c := p.Call; c != nil {
		gp.FunctionCall = &genai.FunctionCall{Name: c.Name, ID: c.ID, Args: deepCopyMap(c.Args)}
	}
	if r := p.Response; r != nil {
		gp.FunctionResponse = &genai.FunctionResponse{Name: r.Name, ID: r.ID, Response: deepCopyMap(r.Response)}
	}
	if p.Code != nil {
		c := *p.Code
		gp.ExecutableCode = &c
	}
	if p.Result != nil {
		r := *p.Result
		gp.CodeExecutionResult = &r
	}
	if p.Inline != nil {
		b := *p.Inline
		b.Data = append([]byte(nil), p.Inline.Data...)
		gp.InlineData = &b
	}
	return gp
}

func buildContent(c *ContentSpec) *genai.Content {
	parts := buildParts(c.Parts)
	if parts == nil {
		parts = []*genai.Part{}
	}
	return &genai.Content{Role: c.Role, Parts: parts}
}
