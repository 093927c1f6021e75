package scripted

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"regexp"
	"strings"

	"google.golang.org/genai"

	"github.com/adkhost/adkhost/engine/model"
)

// ErrNoRule is wrapped by the error a Reactive model yields for a request no
// rule matches.
var ErrNoRule = errors.New("no rule matches the request")

// Rule is one rule of a reactive script: when the request matches When, the
// model answers Respond. A rule without conditions matches every request.
type Rule struct {
	When    Match        `yaml:"when,omitempty"`
	Respond ResponseSpec `yaml:"respond"`
}

// Match holds a rule's conditions; every one that is set must hold. They
// look at the request's last content (the turn the model answers) and at
// its system instruction.
type Match struct {
	// UserContains: the last content is user text containing this
	// substring, compared case-insensitively.
	UserContains string `yaml:"user_contains,omitempty"`
	// UserMatches: the last content is user text matching this RE2
	// regular expression. Its groups become template variables, by number
	// ({{1}}) and by name ({{city}} for (?P<city>...)).
	UserMatches string `yaml:"user_matches,omitempty"`
	// FunctionResponse: the last content holds a function response of the
	// tool of this name; "*" means any tool.
	FunctionResponse string `yaml:"function_response,omitempty"`
	// InstructionContains: the system instruction contains this substring,
	// which tells apart agents sharing the model.
	InstructionContains string `yaml:"instruction_contains,omitempty"`
}

// Reactive is a model.Model that answers each request by the first rule it
// matches. It keeps no state between calls, records nothing, and never runs
// out, so it can serve any number of concurrent sessions for as long as
// needed, each seeing the same answer to the same turn.
type Reactive struct {
	name  string
	rules []compiledRule
}

var _ model.Model = (*Reactive)(nil)

type compiledRule struct {
	when    Match
	re      *regexp.Regexp
	respond ResponseSpec
}

// NewReactive returns a Reactive model named name playing rules. It checks
// each rule's regular expression, response and template variables.
func NewReactive(name string, rules ...Rule) (*Reactive, error) {
	if len(rules) == 0 {
		return nil, errors.New("scripted: a reactive script needs at least one rule")
	}
	m := &Reactive{name: name}
	for i, r := range rules {
		c := compiledRule{when: r.When, respond: r.Respond}
		vars := map[string]bool{"text": true, "tool": true, "response": true}
		if r.When.UserMatches != "" {
			re, err := regexp.Compile(r.When.UserMatches)
			if err != nil {
				return nil, fmt.Errorf("scripted: rule %d: user_matches: %w", i, err)
			}
			c.re = re
			for j, n := range re.SubexpNames() {
				vars[fmt.Sprint(j)] = true
				if n != "" {
					vars[n] = true
				}
			}
		}
		if r.Respond.Error == "" && r.Respond.Content == nil && r.Respond.isZero() {
			return nil, fmt.Errorf("scripted: rule %d: respond is empty", i)
		}
		// Build once with placeholders left in, to check the spec itself.
		if _, err := r.Respond.Step(); err != nil {
			return nil, fmt.Errorf("scripted: rule %d: respond: %w", i, err)
		}
		if err := checkTemplates(r.Respond, vars); err != nil {
			return nil, fmt.Errorf("scripted: rule %d: respond: %w", i, err)
		}
		m.rules = append(m.rules, c)
	}
	return m, nil
}

// Name returns the model's name.
func (m *Reactive) Name() string { return m.name }

// GenerateContent answers req by the first matching rule, streamed as
// Model.GenerateContent streams (partials, then the final response).
func (m *Reactive) GenerateContent(ctx context.Context, req *model.Request, stream bool) iter.Seq2[*model.Response, error] {
	return func(yield func(*model.Response, error) bool) {
		if err := ctx.Err(); err != nil {
			yield(nil, fmt.Errorf("scripted model %q: %w", m.name, err))
			return
		}
		step, err := m.answer(req)
		if err != nil {
			yield(nil, fmt.Errorf("scripted model %q: %w", m.name, err))
			return
		}
		if step.Err != nil {
			yield(nil, step.Err)
			return
		}
		final := step.Response
		out := []*model.Response{final}
		if stream {
			out = append(partials(final), final)
		}
		for _, r := range out {
			if !yield(r, nil) {
				return
			}
		}
	}
}

// answer finds the first rule matching req and builds its step, with the
// templates filled from the request.
func (m *Reactive) answer(req *model.Request) (Step, error) {
	turn := lastTurn(req)
	for i, r := range m.rules {
		vars, ok := r.match(req, turn)
		if !ok {
			continue
		}
		spec, err := fill(r.respond, vars, MaxFilledBytes)
		if errors.Is(err, errFilledTooLarge) {
			return Step{}, &FilledTooLargeError{Rule: i, Limit: MaxFilledBytes}
		}
		if err != nil {
			return Step{}, err
		}
		step, err := spec.Step()
		if err != nil {
			return Step{}, err
		}
		if step.Response == nil && step.Err == nil {
			step.Response = &model.Response{}
		}
		return step, nil
	}
	return Step{}, fmt.Errorf("%w (last content: %s)", ErrNoRule, turn.describe())
}

// turn is what the rules look at in a request's last content.
type turn struct {
	isUser bool
	text   string
	// responses are the function responses, in order.
	responses []*genai.FunctionResponse
}

func lastTurn(req *model.Request) turn {
	var t turn
	if req == nil || len(req.Contents) == 0 {
		return t
	}
	c := req.Contents[len(req.Contents)-1]
	if c == nil {
		return t
	}
	var sb strings.Builder
	for _, p := range c.Parts {
		switch {
		case p == nil:
		case p.FunctionResponse != nil:
			t.responses = append(t.responses, p.FunctionResponse)
		case p.Text != "" && !p.Thought:
			sb.WriteString(p.Text)
		}
	}
	t.text = sb.String()
	t.isUser = c.Role == genai.RoleUser && len(t.responses) == 0 && t.text != ""
	return t
}

func (t turn) describe() string {
	switch {
	case t.isUser:
		return fmt.Sprintf("user text %q", t.text)
	case len(t.responses) > 0:
		names := make([]string, len(t.responses))
		for i, r := range t.responses {
			names[i] = r.Name
		}
		return "function responses of " + strings.Join(names, ", ")
	default:
		return "neither user text nor a function response"
	}
}

// match reports whether r matches and returns the template variables.
func (r compiledRule) match(req *model.Request, t turn) (map[string]any, bool) {
	vars := map[string]any{"text": t.text}
	w := r.when
	if w.InstructionContains != "" && !strings.Contains(systemText(req), w.InstructionContains) {
		return nil, false
	}
	if (w.UserContains != "" || r.re != nil) && !t.isUser {
		return nil, false
	}
	if w.UserContains != "" && !strings.Contains(strings.ToLower(t.text), strings.ToLower(w.UserContains)) {
		return nil, false
	}
	if r.re != nil {
		sub := r.re.FindStringSubmatch(t.text)
		if sub == nil {
			return nil, false
		}
		for i, n := range r.re.SubexpNames() {
			vars[fmt.Sprint(i)] = sub[i]
			if n != "" {
				vars[n] = sub[i]
			}
		}
	}
	if w.FunctionResponse != "" {
		var found *genai.FunctionResponse
		for _, fr := range t.responses {
			if w.FunctionResponse == "*" || fr.Name == w.FunctionResponse {
				found = fr
				break
			}
		}
		if found == nil {
			return nil, false
		}
		vars["tool"] = found.Name
		// Through JSON, so a path reaches into whatever the tool returned.
		if resp, ok := plainJSON(found.Response); ok {
			vars["response"] = resp
		} else {
			var resp any = map[string]any{}
			if err := viaJSON(found.Response, &resp); err == nil {
				vars["response"] = resp
			}
		}
	}
	return vars, true
}

func systemText(req *model.Request) string {
	if req == nil || req.Config == nil || req.Config.SystemInstruction == nil {
		return ""
	}
	var sb strings.Builder
	for _, p := range req.Config.SystemInstruction.Parts {
		if p != nil {
			sb.WriteString(p.Text)
			sb.WriteString("\n")
		}
	}
	return sb.String()
}
