// Package planner provides planners that shape the model's reasoning
// (google-adk's planners package): PlanReAct, which asks the model for
// tagged plan / reasoning / action / final-answer text and turns the tagged
// parts into thoughts, and BuiltIn, which turns on the model's own thinking.
// ApplyToRequest and ApplyToResponse are what the LLM flow calls around a
// model call (google-adk's nl_planning request and response processors).
package planner

import (
	"google.golang.org/genai"

	"github.com/adkhost/adkhost/callbacks"
	"github.com/adkhost/adkhost/engine/model"
	"github.com/adkhost/adkhost/engine/session"
)

// Planner guides the model's reasoning (google-adk's BasePlanner).
type Planner interface {
	// BuildPlanningInstruction returns text to append to the system
	// instruction, or "" for none. req must not be changed.
	BuildPlanningInstruction(ctx callbacks.ReadonlyContext, req *model.Request) string
	// ProcessPlanningResponse returns the parts that replace a model
	// response's parts, or nil (or an empty slice) to keep them. The input
	// slice and parts must not be changed.
	ProcessPlanningResponse(ctx callbacks.CallbackContext, parts []*genai.Part) []*genai.Part
}

// ThinkingConfigApplier is implemented by planners that configure the
// model's built-in thinking instead of instructing it (google-adk checks
// isinstance(planner, BuiltInPlanner)); BuiltIn and types embedding it
// implement it.
type ThinkingConfigApplier interface {
	ApplyThinkingConfig(req *model.Request)
}

// ApplyToRequest does what google-adk 2.13's nl_planning request processor
// does with a planner (the flow runs it after the contents are built):
//
//   - nil planner: nothing;
//   - a ThinkingConfigApplier (BuiltIn): ApplyThinkingConfig only; the
//     system instruction and the contents are left alone;
//   - any other planner: its planning instruction, when not empty, is
//     appended to the system instruction (model.Request.AppendInstructions,
//     a blank line apart), then every part of every content loses its
//     thought flag, so earlier planning and reasoning text goes back to the
//     model as ordinary text.
//
// Contents and parts whose flag is cleared are replaced by shallow copies,
// never modified, so session events that share them stay intact (google-adk
// builds request contents from shallow copies for the same reason).
func ApplyToRequest(ctx callbacks.ReadonlyContext, p Planner, req *model.Request) {
	if p == nil || req == nil {
		return
	}
	if tc, ok := p.(ThinkingConfigApplier); ok {
		tc.ApplyThinkingConfig(req)
		return
	}
	if instr := p.BuildPlanningInstruction(ctx, req); instr != "" {
		req.AppendInstructions(instr)
	}
	RemoveThoughts(req)
}

// RemoveThoughts clears the thought flag of every part of req's contents,
// replacing affected contents and parts by shallow copies
// (google-adk's _remove_thought_from_request).
func RemoveThoughts(req *model.Request) {
	for i, c := range req.Contents {
		if c == nil || !hasThought(c.Parts) {
			continue
		}
		nc := *c
		nc.Parts = make([]*genai.Part, len(c.Parts))
		for j, part := range c.Parts {
			if part != nil && part.Thought {
				np := *part
				np.Thought = false
				part = &np
			}
			nc.Parts[j] = part
		}
		req.Contents[i] = &nc
	}
}

func hasThought(parts []*genai.Part) bool {
	for _, p := range parts {
		if p != nil && p.Thought {
			return true
		}
	}
	return false
}

// RewritesResponse reports whether ApplyToResponse calls p: any planner but
// nil and BuiltIn (google-adk's response_rewriting_planner, which skips
// planners whose process_planning_response is BuiltInPlanner's; the code
// execution processor uses the same test).
func RewritesResponse(p Planner) bool {
	switch p.(type) {
	case nil, *BuiltIn:
		return false
	}
	return true
}

// ApplyToResponse does what google-adk 2.13's nl_planning response
// processor does. The flow calls it for every response the model yields,
// partial ones included, after the after-model callbacks and before it
// builds the model response event; ctx is a fresh callback context for the
// invocation.
//
// When resp has content with at least one part and RewritesResponse(p), the
// parts go through p.ProcessPlanningResponse; a non-empty result replaces
// the parts (resp.Content is set to a copy holding them; an empty or nil
// result leaves the response as it was). If the
// planner wrote state through ctx, the returned event (author the agent,
// ctx's invocation id and branch, ctx's actions) must be emitted before the
// model response event; otherwise the result is nil.
func ApplyToResponse(ctx callbacks.CallbackContext, p Planner, resp *model.Response) *session.Event {
	if resp == nil || resp.Content == nil || len(resp.Content.Parts) == 0 {
		return nil
	}
	if !RewritesResponse(p) {
		return nil
	}
	if parts := p.ProcessPlanningResponse(ctx, resp.Content.Parts); len(parts) > 0 {
		// A copy of the content, in case the model shares it.
		c := *resp.Content
		c.Parts = parts
		resp.Content = &c
	}
	if st := ctx.State(); st == nil || len(st.Delta()) == 0 {
		return nil
	}
	ev := session.NewEvent(ctx.InvocationID(), ctx.AgentName(), ctx.Branch())
	ev.Actions = *ctx.Actions()
	return ev
}
