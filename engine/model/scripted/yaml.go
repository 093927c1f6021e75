package scripted

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"unicode/utf8"

	"github.com/goccy/go-yaml"
	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/parser"
	"google.golang.org/genai"

	"github.com/adkhost/adkhost/engine/model"
	"github.com/adkhost/adkhost/internal/yamlscan"
)

// DefaultName is the model name FromYAML uses when the script names none.
const DefaultName = "scripted"

// Script is the YAML form of a scripted model:
//
//	name: my-model          # optional
//	responses:
//	  - text: Hello!
//	  - thought: The user wants the weather.
//	    function_calls:
//	      - {name: get_weather, args: {city: Paris}, id: call-1}
//	  - error: backend unavailable      # GenerateContent yields this error
//	  - {error_code: SAFETY, error_message: blocked}
//
// A document that is just the list of responses is accepted too.
//
// A script with rules instead of responses is reactive (see Reactive and
// Rule): each request is answered by the first rule it matches, so the
// model serves any number of concurrent sessions forever:
//
//	name: weather-demo
//	rules:
//	  - when: {user_matches: '(?i)weather in (?P<city>[a-z ]+)'}
//	    respond:
//	      function_calls: [{name: get_weather, args: {city: '{{city}}'}}]
//	  - when: {function_response: get_weather}
//	    respond: {text: 'It is {{response.days.0.summary}} in {{response.city}}.'}
//	  - respond: {text: 'You said: {{text}}'}   # no conditions: the default
//
// Scripts are read with github.com/goccy/go-yaml: it is actively maintained
// (gopkg.in/yaml.v3 is archived), pure Go, reports errors with line and
// column, and can reject unknown keys, which catches typos in scripts. The
// conformance runner uses the same library.
type Script struct {
	Name      string         `yaml:"name,omitempty"`
	Responses []ResponseSpec `yaml:"responses,omitempty"`
	// Rules make the script reactive; they exclude Responses.
	Rules []Rule `yaml:"rules,omitempty"`
}

// ResponseSpec is one scripted answer in YAML. Parts are built in the order
// thought, text, function calls. Content, when set, is a genai.Content in its
// JSON form (camelCase keys) and replaces those three. Error makes the step
// an error and may not be combined with anything else.
type ResponseSpec struct {
	Text          string             `yaml:"text,omitempty"`
	Thought       string             `yaml:"thought,omitempty"`
	FunctionCalls []FunctionCallSpec `yaml:"function_calls,omitempty"`
	Content       map[string]any     `yaml:"content,omitempty"`

	Error        string `yaml:"error,omitempty"`
	ErrorCode    string `yaml:"error_code,omitempty"`
	ErrorMessage string `yaml:"error_message,omitempty"`

	FinishReason string `yaml:"finish_reason,omitempty"`
	// UsageMetadata is a genai.GenerateContentResponseUsageMetadata in its
	// JSON form, e.g. {promptTokenCount: 10, candidatesTokenCount: 3}.
	UsageMetadata  map[string]any `yaml:"usage_metadata,omitempty"`
	CustomMetadata map[string]any `yaml:"custom_metadata,omitempty"`
	ModelVersion   string         `yaml:"model_version,omitempty"`
	TurnComplete   bool           `yaml:"turn_complete,omitempty"`
	Interrupted    bool           `yaml:"interrupted,omitempty"`
}

// FunctionCallSpec is a function call the model asks for.
type FunctionCallSpec struct {
	Name string         `yaml:"name"`
	Args map[string]any `yaml:"args,omitempty"`
	ID   string         `yaml:"id,omitempty"`
}

// Limits on a script's YAML, the same as on an app definition's files: a
// script comes with the definition and is as hostile. The parser's memory
// grows faster than the file with nesting, and aliases of aliases grow
// what the decoder builds exponentially (nine levels of nine aliases, 521
// bytes, took 700 MB and 7 s).
const (
	maxScriptDepth   = 500
	maxScriptAliases = 100
)

// ParseScript reads a script from YAML, rejecting unknown keys. The YAML
// is checked before it is decoded: nesting at most 500 deep, at most 100
// aliases and none inside an anchor's value, no tag that changes what a
// value means (internal/yamlscan), one document.
func ParseScript(data []byte) (*Script, error) {
	body, err := parseYAML(data)
	if err != nil {
		return nil, err
	}
	s := &Script{}
	if body == nil {
		return s, nil
	}
	var top any
	if err := yaml.NodeToValue(body, &top); err != nil {
		return nil, fmt.Errorf("scripted: parse YAML: %w", err)
	}
	switch top.(type) {
	case []any:
		err = yaml.NodeToValue(body, &s.Responses, yaml.DisallowUnknownField())
	case map[string]any:
		err = yaml.NodeToValue(body, s, yaml.DisallowUnknownField())
	case nil:
	default:
		err = errors.New("want a mapping with responses or a list of responses")
	}
	if err != nil {
		return nil, fmt.Errorf("scripted: parse YAML: %w", err)
	}
	if len(s.Rules) > 0 && len(s.Responses) > 0 {
		return nil, errors.New("scripted: a script has responses (played in order) or rules (reactive), not both")
	}
	return s, nil
}

// parseYAML checks data's shape and parses it, returning its one
// document's body (nil for an empty script).
func parseYAML(data []byte) (ast.Node, error) {
	at := func(p *yamlscan.Problem) error {
		return fmt.Errorf("scripted: line %d, column %d: %s", p.Line, p.Column, p.Msg)
	}
	if p := yamlscan.Check(data, maxScriptDepth); p != nil {
		return nil, at(p)
	}
	f, err := parser.ParseBytes(data, 0)
	if err != nil {
		return nil, fmt.Errorf("scripted: parse YAML: %w", err)
	}
	var body ast.Node
	for _, d := range f.Docs {
		if d == nil || d.Body == nil {
			continue
		}
		if body != nil {
			return nil, errors.New("scripted: a script is one YAML document, this one has several")
		}
		body = d.Body
	}
	if p := yamlscan.CheckTree(body, maxScriptAliases, "a script is plain YAML"); p != nil {
		return nil, at(p)
	}
	return body, nil
}

// Parse builds a model from a YAML script: a Reactive model when the script
// has rules, else a Model playing its responses in order.
func Parse(data []byte) (model.Model, error) {
	s, err := ParseScript(data)
	if err != nil {
		return nil, err
	}
	name := s.Name
	if name == "" {
		name = DefaultName
	}
	if len(s.Rules) > 0 {
		return NewReactive(name, s.Rules...)
	}
	steps, err := s.Steps()
	if err != nil {
		return nil, err
	}
	return fromScript(name, steps), nil
}

// fromScript is the Model of a script: it records only the first
// MaxRecordedRequests requests.
func fromScript(name string, steps []Step) *Model {
	m := FromSteps(name, steps...)
	m.keep = MaxRecordedRequests
	return m
}

// Steps converts the script's responses to steps.
func (s *Script) Steps() ([]Step, error) {
	return StepsFromSpecs(s.Responses)
}

// StepsFromSpecs converts specs to steps, naming the index of a bad one.
func StepsFromSpecs(specs []ResponseSpec) ([]Step, error) {
	steps := make([]Step, 0, len(specs))
	for i, spec := range specs {
		st, err := spec.Step()
		if err != nil {
			return nil, fmt.Errorf("scripted: response %d: %w", i, err)
		}
		steps = append(steps, st)
	}
	return steps, nil
}

// FromYAML builds a Model from a YAML script of responses (see Script).
func FromYAML(data []byte) (*Model, error) {
	s, err := ParseScript(data)
	if err != nil {
		return nil, err
	}
	if len(s.Rules) > 0 {
		return nil, errors.New("scripted: FromYAML plays responses in order; a script of rules needs Parse")
	}
	steps, err := s.Steps()
	if err != nil {
		return nil, err
	}
	name := s.Name
	if name == "" {
		name = DefaultName
	}
	return fromScript(name, steps), nil
}

// Step converts the spec to a step.
func (r ResponseSpec) Step() (Step, error) {
	if r.Error != "" {
		other := r
		other.Error = ""
		if !other.isZero() {
			return Step{}, errors.New("error cannot be combined with other fields")
		}
		return Step{Err: errors.New(r.Error)}, nil
	}
	resp := &model.Response{
		ErrorCode:    r.ErrorCode,
		ErrorMessage: r.ErrorMessage,
		FinishReason: genai.FinishReason(r.FinishReason),
		ModelVersion: r.ModelVersion,
		TurnComplete: r.TurnComplete,
		Interrupted:  r.Interrupted,
	}
	if r.CustomMetadata != nil {
		// Through JSON, so numbers are float64 as after a round trip.
		if err := viaJSON(r.CustomMetadata, &resp.CustomMetadata); err != nil {
			return Step{}, fmt.Errorf("custom_metadata: %w", err)
		}
	}
	if r.UsageMetadata != nil {
		resp.UsageMetadata = &genai.GenerateContentResponseUsageMetadata{}
		if err := viaJSON(r.UsageMetadata, resp.UsageMetadata); err != nil {
			return Step{}, fmt.Errorf("usage_metadata: %w", err)
		}
	}
	if r.Content != nil {
		if r.Text != "" || r.Thought != "" || len(r.FunctionCalls) > 0 {
			return Step{}, errors.New("content cannot be combined with text, thought or function_calls")
		}
		resp.Content = &genai.Content{}
		if err := viaJSON(r.Content, resp.Content); err != nil {
			return Step{}, fmt.Errorf("content: %w", err)
		}
		if resp.Content.Role == "" {
			resp.Content.Role = genai.RoleModel
		}
		return Step{Response: resp}, nil
	}
	var parts []*genai.Part
	if r.Thought != "" {
		parts = append(parts, &genai.Part{Text: r.Thought, Thought: true})
	}
	if r.Text != "" {
		parts = append(parts, &genai.Part{Text: r.Text})
	}
	for j, fc := range r.FunctionCalls {
		if fc.Name == "" {
			return Step{}, fmt.Errorf("function_calls[%d]: name is required", j)
		}
		call := &genai.FunctionCall{Name: fc.Name, ID: fc.ID}
		if args, ok := plainJSON(fc.Args); ok {
			call.Args, _ = args.(map[string]any)
		} else if fc.Args != nil {
			// Through JSON, so numbers are float64 as from a real backend.
			if err := viaJSON(fc.Args, &call.Args); err != nil {
				return Step{}, fmt.Errorf("function_calls[%d].args: %w", j, err)
			}
		}
		parts = append(parts, &genai.Part{FunctionCall: call})
	}
	if len(parts) > 0 {
		resp.Content = &genai.Content{Role: genai.RoleModel, Parts: parts}
	}
	return Step{Response: resp}, nil
}

func (r ResponseSpec) isZero() bool {
	return r.Text == "" && r.Thought == "" && len(r.FunctionCalls) == 0 && r.Content == nil &&
		r.ErrorCode == "" && r.ErrorMessage == "" && r.FinishReason == "" && r.UsageMetadata == nil &&
		r.CustomMetadata == nil && r.ModelVersion == "" && !r.TurnComplete && !r.Interrupted
}

// plainJSON returns a copy of v as a JSON round trip gives it back
// (objects map[string]any, lists []any, every number float64) without the
// round trip, which cost a reactive model a tenth of a served turn. ok is
// false for anything else, which the caller sends through viaJSON.
func plainJSON(v any) (any, bool) {
	switch v := v.(type) {
	case nil, bool:
		return v, true
	case string:
		return v, utf8.ValidString(v) // encoding/json replaces invalid bytes
	case float64:
		return v, !math.IsInf(v, 0) && !math.IsNaN(v)
	case int:
		return float64(v), true
	case int64:
		return float64(v), true
	case map[string]any:
		if v == nil {
			return nil, true
		}
		out := make(map[string]any, len(v))
		for k, e := range v {
			c, ok := plainJSON(e)
			if !ok || !utf8.ValidString(k) {
				return nil, false
			}
			out[k] = c
		}
		return out, true
	case []any:
		if v == nil {
			return nil, true
		}
		out := make([]any, len(v))
		for i, e := range v {
			c, ok := plainJSON(e)
			if !ok {
				return nil, false
			}
			out[i] = c
		}
		return out, true
	}
	return nil, false
}

// viaJSON converts YAML-decoded data to a typed value through JSON,
// rejecting unknown fields.
func viaJSON(in, out any) error {
	data, err := json.Marshal(in)
	if err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	return dec.Decode(out)
}
