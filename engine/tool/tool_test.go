package tool_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/adkhost/adkhost/callbacks"
	"github.com/adkhost/adkhost/engine/tool"
)

func noop(callbacks.ToolContext, map[string]any) (any, error) { return "ran", nil }

func TestNewFunctionValidates(t *testing.T) {
	for _, tc := range []struct {
		name string
		cfg  tool.FunctionConfig
		want string
	}{
		{"no name", tool.FunctionConfig{Fn: noop}, "a name is required"},
		{"no fn", tool.FunctionConfig{Name: "t"}, `"t": Fn is required`},
		{"bad required", tool.FunctionConfig{Name: "t", Fn: noop, Parameters: map[string]any{"required": "x"}}, "required must be a list"},
		{"bad required entry", tool.FunctionConfig{Name: "t", Fn: noop, Parameters: map[string]any{"required": []any{1}}}, "required entries must be strings"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := tool.NewFunction(tc.cfg)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want it to contain %q", err, tc.want)
			}
		})
	}
}

func TestFunctionDeclarationAndDescription(t *testing.T) {
	params := map[string]any{"type": "object", "properties": map[string]any{"city": map[string]any{"type": "string"}}, "required": []any{"city"}}
	for _, tc := range []struct {
		name, desc string
		long       bool
		wantDesc   string
	}{
		{"plain", "Gets weather.", false, "Gets weather."},
		{"long running", "Books.", true, "Books.\n\nNOTE: This is a long-running operation. Do not call this tool again if it has already returned some intermediate or pending status."},
		// google-adk strips the leading blank line when there is no description.
		{"long running, no description", "", true, "NOTE: This is a long-running operation. Do not call this tool again if it has already returned some intermediate or pending status."},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, err := tool.NewFunction(tool.FunctionConfig{Name: "t", Description: tc.desc, Parameters: params, LongRunning: tc.long, Fn: noop})
			if err != nil {
				t.Fatal(err)
			}
			d := f.Declaration()
			if d.Name != "t" || d.Description != tc.wantDesc || f.Description() != tc.wantDesc || f.IsLongRunning() != tc.long {
				t.Fatalf("declaration = %+v", d)
			}
			got, _ := json.Marshal(d.ParametersJsonSchema)
			want, _ := json.Marshal(params)
			if string(got) != string(want) {
				t.Fatalf("parameters = %s, want %s", got, want)
			}
		})
	}
	f, _ := tool.NewFunction(tool.FunctionConfig{Name: "noparams", Fn: noop})
	if f.Declaration().ParametersJsonSchema != nil {
		t.Fatal("a tool without parameters must send no parameters schema, as google-adk does")
	}
}

func TestMissingMandatoryArguments(t *testing.T) {
	ran := false
	f, err := tool.NewFunction(tool.FunctionConfig{
		Name:       "book",
		Parameters: map[string]any{"type": "object", "required": []string{"city", "guests"}},
		Fn:         func(callbacks.ToolContext, map[string]any) (any, error) { ran = true; return nil, nil },
	})
	if err != nil {
		t.Fatal(err)
	}
	got, err := f.Run(nil, map[string]any{"nights": 2})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"error": "Invoking `book()` failed as the following mandatory input parameters are not present:\ncity\nguests\nYou could retry calling this tool, but it is IMPORTANT for you to provide all the mandatory parameters."}
	if g, _ := json.Marshal(got); string(g) != mustJSON(want) || ran {
		t.Fatalf("Run = %s (ran=%v), want %s without running", g, ran, mustJSON(want))
	}
	if got, _ := f.Run(nil, map[string]any{"city": "Oslo", "guests": 2}); !ran || got != nil {
		t.Fatalf("with all arguments: ran=%v got=%v", ran, got)
	}
}

func mustJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
