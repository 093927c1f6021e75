package planner

import (
	"google.golang.org/genai"

	"github.com/adkhost/adkhost/callbacks"
	"github.com/adkhost/adkhost/engine/model"
)

// BuiltIn uses the model's built-in thinking (google-adk's
// BuiltInPlanner): it adds no instruction and leaves responses alone; the
// flow calls ApplyThinkingConfig instead.
type BuiltIn struct {
	// ThinkingConfig is set on every request. Models that do not support
	// thinking reject it.
	ThinkingConfig *genai.ThinkingConfig
}

// ApplyThinkingConfig sets req's thinking config to a copy of
// ThinkingConfig, creating the config when needed and replacing any
// thinking config the agent's generate-content config had. With a nil
// ThinkingConfig the request is not touched.
func (p *BuiltIn) ApplyThinkingConfig(req *model.Request) {
	if p == nil || p.ThinkingConfig == nil {
		return
	}
	tc := *p.ThinkingConfig
	req.EnsureConfig().ThinkingConfig = &tc
}

// BuildPlanningInstruction implements Planner: no instruction.
func (p *BuiltIn) BuildPlanningInstruction(callbacks.ReadonlyContext, *model.Request) string {
	return ""
}

// ProcessPlanningResponse implements Planner: no processing.
func (p *BuiltIn) ProcessPlanningResponse(callbacks.CallbackContext, []*genai.Part) []*genai.Part {
	return nil
}
