package engine

// The ReAct loop (google-adk BaseLlmFlow): runFlow repeats step until the
// model gives a final answer; one step builds a request, calls the model
// once, and runs the tools the model asked for.

import (
	"iter"
	"strings"
	"time"

	"github.com/google/uuid"
	"google.golang.org/genai"

	"github.com/adkhost/adkhost/callbacks"
	"github.com/adkhost/adkhost/engine/model"
	"github.com/adkhost/adkhost/engine/planner"
	"github.com/adkhost/adkhost/engine/session"
	"github.com/adkhost/adkhost/engine/tool"
)

// llmCall is one step's request, the model that answers it, and the tools
// it offers, by name.
type llmCall struct {
	req   *model.Request
	model model.Model
	tools map[string]tool.Tool
	// toolOrder keeps the order tools were added, for error messages.
	toolOrder []string
}

func (c *llmCall) addTool(t tool.Tool) {
	if _, dup := c.tools[t.Name()]; !dup {
		c.toolOrder = append(c.toolOrder, t.Name())
	}
	c.tools[t.Name()] = t
}

// runFlow is the outer loop (run_async): step until the last event of a
// step is a final response, is partial, or there was no event at all.
func (a *LlmAgent) runFlow(ctx *InvocationContext) iter.Seq2[*session.Event, error] {
	return func(yield func(*session.Event, error) bool) {
		for {
			if err := ctx.Err(); err != nil {
				yield(nil, err)
				return
			}
			var last *session.Event
			for ev, err := range a.step(ctx) {
				if err != nil {
					yield(nil, err)
					return
				}
				last = ev
				if !yield(ev, nil) {
					return
				}
			}
			if last == nil || last.IsFinalResponse() || last.Partial {
				if last != nil && last.Partial {
					ctx.Logger().Warn("the last event is partial, which is not expected", "agent", a.Name)
				}
				return
			}
		}
	}
}

// step is one model call (_run_one_step_async): preprocess, call the model,
// postprocess each response.
func (a *LlmAgent) step(ctx *InvocationContext) iter.Seq2[*session.Event, error] {
	return func(yield func(*session.Event, error) bool) {
		// 1. Preprocess. Confirmed calls run again first, so that the
		// request's contents hold their responses.
		for ev, err := range a.resumeConfirmedCalls(ctx) {
			if !yield(ev, err) || err != nil {
				return
			}
		}
		if ctx.Ended() {
			return
		}
		call := &llmCall{req: &model.Request{}, tools: map[string]tool.Tool{}}
		if err := a.preprocess(ctx, call); err != nil {
			yield(nil, err)
			return
		}
		if ctx.Ended() {
			return
		}
		// A resumed invocation may still wait for a call's response, or owe
		// calls that were stored but never run.
		if ctx.Resumable() {
			switch action, ev := a.decideStepResume(ctx, call.tools); action {
			case resumePause:
				return
			case resumeReplay:
				for ev, err := range a.handleFunctionCalls(ctx, call, ev) {
					if !yield(ev, err) || err != nil {
						return
					}
				}
				return
			}
		}
		// 2. Call the model. Every event of this step shares the skeleton's
		// id until it is final, then the skeleton gets a new one.
		skeleton := ctx.newEvent()
		for resp, err := range a.callModel(ctx, call, skeleton) {
			if err != nil {
				yield(nil, err)
				return
			}
			// 3. Postprocess: finalize the event, run tools, transfer.
			for ev, err := range a.postprocess(ctx, call, resp, skeleton) {
				if err != nil {
					yield(nil, err)
					return
				}
				if !yield(ev, nil) {
					return
				}
				if !ev.Partial {
					skeleton.ID = session.NewEventID()
				}
				skeleton.Timestamp = time.Now()
			}
		}
	}
}

// callModel runs the before-model chain (which may answer instead of the
// model), the model itself with on-model-error handling, and the after-model
// chain on every response (_call_llm_async).
func (a *LlmAgent) callModel(ctx *InvocationContext, call *llmCall, skeleton *session.Event) iter.Seq2[*model.Response, error] {
	return func(yield func(*model.Response, error) bool) {
		cc := newCallbackContext(ctx, &skeleton.Actions)
		plugins := ctx.inv.plugins
		resp, err := callbacks.BeforeModelChain(cc, plugins, a.cfg.BeforeModel, call.req)
		cc.state.RecordNestedWrites()
		if err != nil {
			yield(nil, err)
			return
		}
		if resp != nil {
			yield(resp, nil)
			return
		}
		cfg := call.req.EnsureConfig()
		if cfg.Labels == nil {
			cfg.Labels = map[string]string{}
		}
		if _, ok := cfg.Labels[agentNameLabel]; !ok {
			cfg.Labels[agentNameLabel] = a.Name
		}
		m := call.model
		if err := ctx.incrementLLMCalls(); err != nil {
			yield(nil, err)
			return
		}
		stream := ctx.RunConfig().StreamingMode == StreamingModeSSE
		for resp, err := range m.GenerateContent(ctx, call.req, stream) {
			failed := err != nil
			if failed {
				if ctx.Err() != nil {
					yield(nil, ctx.Err())
					return
				}
				cause := err
				resp, err = callbacks.OnModelErrorChain(cc, plugins, a.cfg.OnModelError, call.req, cause)
				if err != nil {
					yield(nil, err)
					return
				}
				if resp == nil {
					yield(nil, &ModelError{Agent: a.Name, Err: cause})
					return
				}
			}
			altered, err := callbacks.AfterModelChain(cc, plugins, a.cfg.AfterModel, resp)
			cc.state.RecordNestedWrites()
			if err != nil {
				yield(nil, err)
				return
			}
			if altered != nil && altered != resp {
				resp = inheritModelFields(resp, altered)
			}
			if !yield(resp, nil) || failed {
				return
			}
		}
	}
}

// inheritModelFields keeps the streaming flags and usage of a replaced
// response when the replacement leaves them unset.
func inheritModelFields(orig, repl *model.Response) *model.Response {
	streamUnset := !repl.Partial && !repl.Aggregated && (orig.Partial || orig.Aggregated)
	if streamUnset || !repl.TurnComplete && orig.TurnComplete || repl.UsageMetadata == nil && orig.UsageMetadata != nil {
		c := *repl
		if streamUnset {
			c.Partial, c.Aggregated = orig.Partial, orig.Aggregated
		}
		c.TurnComplete = c.TurnComplete || orig.TurnComplete
		if c.UsageMetadata == nil {
			c.UsageMetadata = orig.UsageMetadata
		}
		return &c
	}
	return repl
}

// postprocess turns a model response into events (_postprocess_async).
func (a *LlmAgent) postprocess(ctx *InvocationContext, call *llmCall, resp *model.Response, skeleton *session.Event) iter.Seq2[*session.Event, error] {
	return func(yield func(*session.Event, error) bool) {
		applyEmptyResponsePolicy(ctx, resp)
		if a.cfg.Planner != nil {
			if ev := planner.ApplyToResponse(newCallbackContext(ctx, &session.EventActions{}), a.cfg.Planner, resp); ev != nil && !yield(ev, nil) {
				return
			}
		}
		if a.cfg.CodeExecutor != nil && !resp.Partial && resp.Content != nil {
			ev, err := a.cfg.CodeExecutor.processResponse(ctx, resp)
			if err != nil {
				yield(nil, err)
				return
			}
			if !yield(ev, nil) {
				return
			}
		}
		if resp.Content == nil && resp.ErrorCode == "" && !resp.Interrupted && resp.GroundingMetadata == nil {
			return
		}
		if limit := ctx.RunConfig().MaxFunctionCalls; limit > 0 && !resp.Partial {
			if n := countFunctionCalls(resp.Content); n > limit {
				yield(nil, &TooManyFunctionCallsError{Agent: a.Name, Calls: n, Limit: limit})
				return
			}
		}
		ev := finalizeModelResponseEvent(call, resp, skeleton)
		if !yield(ev, nil) {
			return
		}
		if ev.Partial || len(ev.FunctionCalls()) == 0 {
			return
		}
		for ev, err := range a.handleFunctionCalls(ctx, call, ev) {
			if !yield(ev, err) || err != nil {
				return
			}
		}
	}
}

// finalizeModelResponseEvent merges the response into a copy of the
// skeleton, gives calls without an id an "adk-" id, and marks long-running
// calls.
func finalizeModelResponseEvent(call *llmCall, resp *model.Response, skeleton *session.Event) *session.Event {
	ev := *skeleton
	ev.Response = *resp
	calls := ev.FunctionCalls()
	if len(calls) == 0 {
		return &ev
	}
	ev.Content = copyContentParts(ev.Content)
	var longRunning []string
	for _, p := range ev.Content.Parts {
		fc := p.FunctionCall
		if fc == nil {
			continue
		}
		if fc.ID == "" {
			c := *fc
			c.ID = clientCallIDPrefix + uuid.NewString()
			p.FunctionCall = &c
			fc = &c
		}
		if t, ok := call.tools[fc.Name]; ok && t.IsLongRunning() {
			longRunning = append(longRunning, fc.ID)
		}
	}
	if len(longRunning) > 0 {
		ev.LongRunningToolIDs = sortedUnique(longRunning)
	}
	return &ev
}

func countFunctionCalls(c *genai.Content) int {
	n := 0
	if c != nil {
		for _, p := range c.Parts {
			if p != nil && p.FunctionCall != nil {
				n++
			}
		}
	}
	return n
}

// copyContentParts copies a content and its part structs (not their data),
// so ids can be filled in without touching the model's response.
func copyContentParts(c *genai.Content) *genai.Content {
	out := &genai.Content{Role: c.Role, Parts: make([]*genai.Part, len(c.Parts))}
	for i, p := range c.Parts {
		if p != nil {
			cp := *p
			out.Parts[i] = &cp
		}
	}
	return out
}

// Error codes and messages of google-adk's empty-response policy.
const (
	noContentErrorCode           = "MODEL_RETURNED_NO_CONTENT"
	noContentErrorMessage        = "The model returned no content (finish_reason=STOP with empty parts)."
	noMeaningfulContentErrorText = "The model returned no actionable content (finish_reason=STOP with thought-only or whitespace-only parts)."
)

// applyEmptyResponsePolicy turns a finished response with nothing usable
// in it into an error response.
func applyEmptyResponsePolicy(ctx *InvocationContext, resp *model.Response) {
	hasParts := resp.Content != nil && len(resp.Content.Parts) > 0
	if resp.Partial || resp.ErrorCode != "" || resp.FinishReason != genai.FinishReasonStop || hasMeaningfulContent(resp) {
		return
	}
	if ctx.RunConfig().StreamingMode == StreamingModeSSE && !hasParts {
		return
	}
	resp.ErrorCode = noContentErrorCode
	if resp.ErrorMessage == "" {
		if hasParts {
			resp.ErrorMessage = noMeaningfulContentErrorText
		} else {
			resp.ErrorMessage = noContentErrorMessage
		}
	}
}

func hasMeaningfulContent(resp *model.Response) bool {
	if resp.Content == nil {
		return false
	}
	for _, p := range resp.Content.Parts {
		if p == nil {
			continue
		}
		if p.FunctionCall != nil || p.FunctionResponse != nil || p.ExecutableCode != nil || p.CodeExecutionResult != nil || p.InlineData != nil || p.FileData != nil {
			return true
		}
		if !p.Thought && strings.TrimSpace(p.Text) != "" {
			return true
		}
	}
	return false
}

const (
	agentNameLabel     = "adk_agent_name"
	clientCallIDPrefix = "adk-"
)
