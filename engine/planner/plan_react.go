package planner

import (
	"strings"

	"google.golang.org/genai"

	"github.com/adkhost/adkhost/callbacks"
	"github.com/adkhost/adkhost/engine/model"
)

// The tags PlanReAct asks the model to put before each section.
const (
	PlanningTag    = "/*PLANNING*/"
	ReplanningTag  = "/*REPLANNING*/"
	ReasoningTag   = "/*REASONING*/"
	ActionTag      = "/*ACTION*/"
	FinalAnswerTag = "/*FINAL_ANSWER*/"
)

// planningTags are the tags that mark thought text, in the order they are
// stripped.
var planningTags = [...]string{PlanningTag, ReasoningTag, ActionTag, ReplanningTag}

// PlanReActInstruction is the system instruction PlanReAct adds; it is
// byte-identical to google-adk 2.13's PlanReActPlanner instruction.
var PlanReActInstruction = strings.Join([]string{
	`
When answering the question, try to leverage the available tools to gather the information instead of your memorized knowledge.

Follow this process when answering the question: (1) first come up with a plan in natural language text format; (2) Then use tools to execute the plan and provide reasoning between tool code snippets to make a summary of current state and next step. Tool code snippets and reasoning should be interleaved with each other. (3) In the end, return one final answer.

Follow this format when answering the question: (1) The planning part should be under ` + PlanningTag + `. (2) The tool code snippets should be under ` + ActionTag + `, and the reasoning parts should be under ` + ReasoningTag + `. (3) The final answer part should be under ` + FinalAnswerTag + `.
`,
	`
Below are the requirements for the planning:
The plan is made to answer the user query if following the plan. The plan is coherent and covers all aspects of information from user query, and only involves the tools that are accessible by the agent. The plan contains the decomposed steps as a numbered list where each step should use one or multiple available tools. By reading the plan, you can intuitively know which tools to trigger or what actions to take.
If the initial plan cannot be successfully executed, you should learn from previous execution results and revise your plan. The revised plan should be under ` + ReplanningTag + `. Then use tools to follow the new plan.
`,
	`
Below are the requirements for the reasoning:
The reasoning makes a summary of the current trajectory based on the user query and tool outputs. Based on the tool outputs and plan, the reasoning also comes up with instructions to the next steps, making the trajectory closer to the final answer.
`,
	`
Below are the requirements for the final answer:
The final answer should be precise and follow query formatting requirements. Some queries may not be answerable with the available tools and information. In those cases, inform the user why you cannot process their query and ask for more information.
`,
	`
Below are the requirements for the tool code:

**Custom Tools:** The available tools are described in the context and can be directly used.
- Code must be valid self-contained Python snippets with no imports and no references to tools or Python libraries that are not in the context.
- You cannot use any parameters or fields that are not explicitly defined in the APIs in the context.
- The code snippets should be readable, efficient, and directly relevant to the user query and reasoning steps.
- When using the tools, you should use the library name together with the function name, e.g., vertex_search.search().
- If Python libraries are not provided in the context, NEVER write your own code other than the function calls using the provided tools.
`,
	`
VERY IMPORTANT instruction that you MUST follow in addition to the above instructions:

You should ask for clarification if you need more information to answer the question.
You should prefer using the information available in the context instead of repeated tool use.
`,
}, "\n\n")

// PlanReAct makes the model write a plan before acting, with tagged
// sections, and marks the planning and reasoning text of its responses as
// thoughts (google-adk's PlanReActPlanner). It needs no built-in thinking
// support from the model.
type PlanReAct struct{}

// BuildPlanningInstruction implements Planner: PlanReActInstruction.
func (PlanReAct) BuildPlanningInstruction(callbacks.ReadonlyContext, *model.Request) string {
	return PlanReActInstruction
}

// ProcessPlanningResponse implements Planner as google-adk 2.13 does:
//
// Parts are taken in order up to the first function call with a non-empty
// name; function calls with an empty name before it are dropped. That call
// and the function-call parts right after it are kept (these trailing calls
// are kept even with an empty name); everything from the first
// non-function-call part after the group on is dropped.
//
// Each other part taken before the first call is handled this way:
//
//   - text containing FinalAnswerTag is split at its last occurrence: the
//     text before it, with the planning tags (PlanningTag, ReasoningTag,
//     ActionTag, ReplanningTag, removed in that order) stripped, becomes a
//     new thought part when not empty; the text after it becomes a new text
//     part when not empty. Nothing else of the original part is kept, and
//     earlier FinalAnswerTags stay in the thought text;
//   - text starting with a planning tag has all planning tags removed and
//     is marked as a thought (the text may end up empty);
//   - any other part is kept as it is.
//
// It returns nil for no parts, and may return an empty slice (e.g. for a
// lone "/*FINAL_ANSWER*/"), which ApplyToResponse treats as "keep the
// original parts". Parts that change are copies; the input is not modified.
func (PlanReAct) ProcessPlanningResponse(_ callbacks.CallbackContext, parts []*genai.Part) []*genai.Part {
	if len(parts) == 0 {
		return nil
	}
	out := []*genai.Part{}
	firstCall := -1
	for i, part := range parts {
		if part != nil && part.FunctionCall != nil {
			if part.FunctionCall.Name == "" {
				continue
			}
			out = append(out, part)
			firstCall = i
			break
		}
		out = appendNonCallPart(out, part)
	}
	if firstCall >= 0 {
		for _, part := range parts[firstCall+1:] {
			if part == nil || part.FunctionCall == nil {
				break
			}
			out = append(out, part)
		}
	}
	return out
}

func appendNonCallPart(out []*genai.Part, part *genai.Part) []*genai.Part {
	if part == nil {
		return append(out, part)
	}
	text := part.Text
	if idx := strings.LastIndex(text, FinalAnswerTag); idx >= 0 {
		reasoning := stripPlanningTags(text[:idx])
		answer := text[idx+len(FinalAnswerTag):]
		if reasoning != "" {
			out = append(out, &genai.Part{Text: reasoning, Thought: true})
		}
		if answer != "" {
			out = append(out, &genai.Part{Text: answer})
		}
		return out
	}
	if text != "" && startsWithPlanningTag(text) {
		cp := *part
		cp.Text = stripPlanningTags(text)
		cp.Thought = true
		return append(out, &cp)
	}
	return append(out, part)
}

func startsWithPlanningTag(s string) bool {
	for _, t := range planningTags {
		if strings.HasPrefix(s, t) {
			return true
		}
	}
	return false
}

func stripPlanningTags(s string) string {
	for _, t := range planningTags {
		s = strings.ReplaceAll(s, t, "")
	}
	return s
}
