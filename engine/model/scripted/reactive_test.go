package scripted

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"google.golang.org/genai"

	"github.com/adkhost/adkhost/engine/model"
)

const weatherRules = `
name: weather-demo
rules:
  - when: {user_matches: '(?i)weather in (?P<city>[a-z ]+)'}
    respond:
      function_calls: [{name: get_weather, args: {city: '{{city}}', raw: '{{0}}', n: 2}}]
  - when: {function_response: get_weather}
    respond: {text: 'It is {{response.summary}} in {{response.city}} ({{response.days.1}}, {{tool}}).'}
  - when: {user_contains: HELLO, instruction_contains: polite}
    respond: {text: 'Good day!'}
  - when: {function_response: '*'}
    respond: {text: 'Got {{response}} from {{tool}}'}
  - when: {user_contains: fail}
    respond: {error: backend down}
  - respond: {text: 'You said: {{text}}'}
`

func userReq(text string) *model.Request {
	return &model.Request{Contents: []*genai.Content{genai.NewContentFromText(text, genai.RoleUser)}}
}

func responseReq(name string, resp map[string]any) *model.Request {
	return &model.Request{Contents: []*genai.Content{
		genai.NewContentFromText("q", genai.RoleUser),
		{Role: genai.RoleModel, Parts: []*genai.Part{{FunctionCall: &genai.FunctionCall{Name: name}}}},
		{Role: genai.RoleUser, Parts: []*genai.Part{{FunctionResponse: &genai.FunctionResponse{Name: name, Response: resp}}}},
	}}
}

// one runs a request and returns the final response as JSON, or the error.
func one(t *testing.T, m model.Model, req *model.Request) (string, error) {
	t.Helper()
	var last *model.Response
	for r, err := range m.GenerateContent(context.Background(), req, false) {
		if err != nil {
			return "", err
		}
		last = r
	}
	data, err := json.Marshal(last)
	if err != nil {
		t.Fatal(err)
	}
	return string(data), nil
}

func TestReactive(t *testing.T) {
	m, err := Parse([]byte(weatherRules))
	if err != nil {
		t.Fatal(err)
	}
	if m.Name() != "weather-demo" {
		t.Errorf("Name() = %q", m.Name())
	}
	polite := userReq("hello there")
	polite.Config = &genai.GenerateContentConfig{SystemInstruction: genai.NewContentFromText("Be polite.", genai.RoleUser)}
	tests := []struct {
		name    string
		req     *model.Request
		want    string
		wantErr string
	}{
		{
			name: "regex on user text, groups in args",
			req:  userReq("What's the weather in Paris"),
			want: `{"content":{"parts":[{"functionCall":{"args":{"city":"Paris","n":2,"raw":"weather in Paris"},"name":"get_weather"}}],"role":"model"}}`,
		},
		{
			name: "function response, paths into it",
			req:  responseReq("get_weather", map[string]any{"city": "Paris", "summary": "sunny", "days": []any{1, "two"}}),
			want: `{"content":{"parts":[{"text":"It is sunny in Paris (two, get_weather)."}],"role":"model"}}`,
		},
		{
			name: "substring, case-insensitive, with the system instruction",
			req:  polite,
			want: `{"content":{"parts":[{"text":"Good day!"}],"role":"model"}}`,
		},
		{
			name: "the instruction condition fails: next rule",
			req:  userReq("hello there"),
			want: `{"content":{"parts":[{"text":"You said: hello there"}],"role":"model"}}`,
		},
		{
			name: "any function response, whole response as JSON",
			req:  responseReq("get_time", map[string]any{"time": "12:00"}),
			want: `{"content":{"parts":[{"text":"Got {\"time\":\"12:00\"} from get_time"}],"role":"model"}}`,
		},
		{
			name:    "error response",
			req:     userReq("please fail"),
			wantErr: "backend down",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := one(t, m, tc.req)
			if tc.wantErr != "" {
				if err == nil || err.Error() != tc.wantErr {
					t.Fatalf("err = %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got != tc.want {
				t.Errorf("response\n got %s\nwant %s", got, tc.want)
			}
		})
	}
}

// TestReactiveTypedTemplates: an argument that is one placeholder keeps the
// variable's type, and | int, | number, | bool turn a regexp group's text
// into a number or a boolean, so tools with such parameters can be driven.
func TestReactiveTypedTemplates(t *testing.T) {
	m, err := Parse([]byte(`
rules:
  - when: {user_matches: '(?P<n>\S+) days in (?P<city>\w+), metric (?P<metric>\w+), temp (?P<t>\S+)'}
    respond:
      function_calls: [{name: forecast, args: {days: '{{n | int}}', city: '{{city}}', metric: '{{metric | bool}}', t: '{{t | number}}', note: 'for {{n | int}} days', list: ['{{n | int}}']}}]
  - when: {function_response: forecast}
    respond:
      function_calls: [{name: echo, args: {count: '{{response.count}}', label: 'n={{response.count}}'}}]
`))
	if err != nil {
		t.Fatal(err)
	}
	got, err := one(t, m, userReq("3 days in Paris, metric yes, temp -2.5"))
	if err != nil {
		t.Fatal(err)
	}
	want := `{"content":{"parts":[{"functionCall":{"args":{"city":"Paris","days":3,"list":[3],"metric":true,"note":"for 3 days","t":-2.5},"name":"forecast"}}],"role":"model"}}`
	if got != want {
		t.Errorf("typed args\n got %s\nwant %s", got, want)
	}
	got, err = one(t, m, responseReq("forecast", map[string]any{"count": 4.0}))
	if err != nil {
		t.Fatal(err)
	}
	want = `{"content":{"parts":[{"functionCall":{"args":{"count":4,"label":"n=4"},"name":"echo"}}],"role":"model"}}`
	if got != want {
		t.Errorf("a whole placeholder keeps the value's type\n got %s\nwant %s", got, want)
	}
	for text, wantErr := range map[string]string{
		"x days in Paris, metric yes, temp 1":   `template {{n | int}}: x is not an integer`,
		"2 days in Paris, metric maybe, temp 1": `template {{metric | bool}}: maybe is not a boolean`,
		"2 days in Paris, metric no, temp warm": `template {{t | number}}: warm is not a number`,
	} {
		if _, err := one(t, m, userReq(text)); err == nil || !strings.Contains(err.Error(), wantErr) {
			t.Errorf("%q: err = %v, want it to contain %q", text, err, wantErr)
		}
	}
}

func TestReactiveNoRule(t *testing.T) {
	m, err := NewReactive("r", Rule{When: Match{UserContains: "hi"}, Respond: ResponseSpec{Text: "hello"}})
	if err != nil {
		t.Fatal(err)
	}
	_, err = one(t, m, responseReq("f", nil))
	if !errors.Is(err, ErrNoRule) || !strings.Contains(err.Error(), "function responses of f") {
		t.Errorf("err = %v, want ErrNoRule naming the last content", err)
	}
}

func TestReactiveStreams(t *testing.T) {
	m, err := NewReactive("r", Rule{Respond: ResponseSpec{Text: "one two three four"}})
	if err != nil {
		t.Fatal(err)
	}
	var texts []string
	var partial []bool
	for r, err := range m.GenerateContent(context.Background(), userReq("x"), true) {
		if err != nil {
			t.Fatal(err)
		}
		texts = append(texts, r.Content.Parts[0].Text)
		partial = append(partial, r.Partial)
	}
	if fmt.Sprint(texts) != "[one two  three four one two three four]" || fmt.Sprint(partial) != "[true true false]" {
		t.Errorf("stream = %q, partial %v", texts, partial)
	}
}

// The model is stateless: concurrent callers each get the answer to their
// own request, forever, and responses are not shared.
func TestReactiveConcurrent(t *testing.T) {
	m, err := Parse([]byte(weatherRules))
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for i := range 16 {
		wg.Go(func() {
			for j := range 50 {
				city := "Town " + letters(i) + " " + letters(j) // the regexp takes letters and spaces
				for r, err := range m.GenerateContent(context.Background(), userReq("weather in "+city), j%2 == 0) {
					if err != nil {
						t.Error(err)
						return
					}
					if r.Partial {
						continue
					}
					args := r.Content.Parts[0].FunctionCall.Args
					if args["city"] != strings.TrimSpace(city) {
						t.Errorf("city = %v, want %q", args["city"], city)
					}
					args["city"] = "changed" // the engine may edit what it gets
				}
			}
		})
	}
	wg.Wait()
}

func TestReactiveScriptErrors(t *testing.T) {
	tests := []struct{ name, yaml, want string }{
		{"bad regexp", "rules: [{when: {user_matches: '('}, respond: {text: x}}]", "rule 0: user_matches"},
		{"unknown variable", "rules: [{when: {user_contains: a}, respond: {text: '{{city}}'}}]", "unknown template variable {{city}}"},
		{"group of no regexp", "rules: [{respond: {text: '{{1}}'}}]", "unknown template variable {{1}}"},
		{"path on text", "rules: [{respond: {text: '{{text.x}}'}}]", "unknown template variable {{text.x}}"},
		{"unknown conversion", "rules: [{when: {user_matches: '(\\d+)'}, respond: {text: '{{1 | float}}'}}]", "unknown conversion in {{1 | float}}"},
		{"empty respond", "rules: [{when: {user_contains: a}}]", "rule 0: respond is empty"},
		{"bad respond", "rules: [{respond: {error: x, text: y}}]", "error cannot be combined"},
		{"unknown key", "rules: [{when: {user_contain: a}, respond: {text: y}}]", "unknown field"},
		{"both modes", "responses: [{text: a}]\nrules: [{respond: {text: y}}]", "not both"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse([]byte(tc.yaml))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %v, want it to contain %q", err, tc.want)
			}
		})
	}
	if _, err := FromYAML([]byte("rules: [{respond: {text: y}}]")); err == nil {
		t.Error("FromYAML accepted a script of rules")
	}
	m, err := Parse([]byte("responses: [{text: a}]"))
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := m.(*Model); !ok {
		t.Errorf("a script of responses gives %T, want *Model", m)
	}
}

// letters spells n in letters (base 26), for names a regexp of letters matches.
func letters(n int) string {
	s := string(rune('a' + n%26))
	if n >= 26 {
		s = letters(n/26-1) + s
	}
	return s
}

// A placeholder writes its whole value each time it appears: a rule
// repeating {{text}} multiplied the user's message (20,000 times 50 KB made
// a 1 GB answer and 6.8 GB of allocations). Past MaxFilledBytes the call
// fails naming the rule; within it the answer is whole.
func TestReactiveFilledResponseBounded(t *testing.T) {
	t.Parallel()
	script := "rules:\n" +
		"  - when: {user_contains: text}\n    respond: {text: '" + strings.Repeat("{{text}}", 20000) + "'}\n" +
		"  - when: {user_contains: args}\n    respond: {function_calls: [{name: f, args: {" + strings.Repeat("a: '{{text}}', ", 1) + "b: ['{{text}}'" + strings.Repeat(", '{{text}}'", 999) + "]}}]}\n" +
		"  - respond: {text: '{{text}}{{text}}'}\n"
	m, err := Parse([]byte(script))
	if err != nil {
		t.Fatal(err)
	}
	big := strings.Repeat("x", 50_000)
	for _, tc := range []struct{ msg, rule string }{{"text " + big, "rule 0"}, {"args " + big, "rule 1"}} {
		_, err := one(t, m, userReq(tc.msg))
		var tl *FilledTooLargeError
		if !errors.As(err, &tl) || tl.Limit != MaxFilledBytes || !strings.Contains(err.Error(), tc.rule+": its placeholders") {
			t.Errorf("%.10s...: err = %v, want a FilledTooLargeError naming %s", tc.msg, err, tc.rule)
		}
	}
	// Two copies of a message of 2 MiB are exactly the bound.
	msg := strings.Repeat("y", MaxFilledBytes/2)
	got, err := one(t, m, userReq(msg))
	if err != nil || !strings.Contains(got, msg+msg) {
		t.Errorf("a response of exactly MaxFilledBytes: err = %v, got %d bytes", err, len(got))
	}
	if _, err := one(t, m, userReq(msg+"z")); !errors.As(err, new(*FilledTooLargeError)) {
		t.Errorf("one byte past the bound: err = %v, want a FilledTooLargeError", err)
	}
}
