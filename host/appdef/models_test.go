package appdef_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"google.golang.org/genai"

	"github.com/adkhost/adkhost/engine/model/anthropic"
	"github.com/adkhost/adkhost/engine/model/gemini"
	"github.com/adkhost/adkhost/engine/model/openai"
	"github.com/adkhost/adkhost/engine/model/scripted"
	"github.com/adkhost/adkhost/host/appdef"
)

func TestModelRegistry(t *testing.T) {
	full := &appdef.ModelRegistry{
		Gemini:    &gemini.Config{APIKey: "k", Backend: genai.BackendGeminiAPI},
		OpenAI:    &openai.Config{APIKey: "k", BaseURL: "http://localhost:11434/v1"},
		Anthropic: &anthropic.Config{APIKey: "k"},
		Scripted:  true,
	}
	fs := files(
		"scripted_model.yaml", "responses: [{text: hi}]\n",
		"models/reactive.yaml", "rules: [{respond: {text: hi}}]\n",
		"bad.yaml", "rules: [{when: {user_matches: '('}, respond: {text: x}}]\n")
	tests := []struct {
		name, model string
		reg         *appdef.ModelRegistry
		wantName    string // the model's Name()
		wantErr     string
		noBackend   bool // errors.Is(err, ErrNoBackend)
	}{
		{name: "gemini", model: "gemini-2.5-flash", reg: full, wantName: "gemini-2.5-flash"},
		{name: "vertex endpoint", model: "projects/p/locations/l/endpoints/e", reg: full, wantName: "projects/p/locations/l/endpoints/e"},
		{name: "openai", model: "openai/gpt-4o-mini", reg: full},
		{name: "scripted in order", model: "scripted", reg: full, wantName: "scripted"},
		{name: "scripted from a named file", model: "scripted/models/reactive.yaml", reg: full, wantName: "scripted"},
		{name: "gemini unconfigured", model: "gemini-2.5-flash", reg: &appdef.ModelRegistry{}, wantErr: "GOOGLE_API_KEY", noBackend: true},
		{name: "openai unconfigured", model: "openai/gpt-4o", reg: &appdef.ModelRegistry{}, wantErr: "OPENAI_API_KEY", noBackend: true},
		{name: "openai without a model", model: "openai/", reg: full, wantErr: "needs a model name"},
		{name: "scripted disabled", model: "scripted", reg: &appdef.ModelRegistry{}, wantErr: "disabled", noBackend: true},
		{name: "scripted file missing", model: "scripted/nope.yaml", reg: full, wantErr: "plays the definition's file nope.yaml, which it does not have"},
		{name: "scripted file outside", model: "scripted/../x.yaml", reg: full, wantErr: "not a file of the definition"},
		{name: "scripted file invalid", model: "scripted/bad.yaml", reg: full, wantErr: "bad.yaml: scripted: rule 0: user_matches"},
		{name: "claude", model: "claude-sonnet-4-5", reg: full, wantName: "claude-sonnet-4-5"},
		{name: "anthropic prefix", model: "anthropic/claude-3-5-haiku", reg: full, wantName: "anthropic/claude-3-5-haiku"},
		{name: "claude unconfigured", model: "claude-sonnet-4-5", reg: &appdef.ModelRegistry{}, wantErr: "ANTHROPIC_API_KEY", noBackend: true},
		{name: "anthropic without a model", model: "anthropic/", reg: full, wantErr: "needs a model name"},
		{name: "unknown", model: "mistral/large", reg: full, wantErr: "names served: gemini-* (Gemini), openai/<model> (OpenAI-compatible), claude-*, anthropic/<model> (Anthropic), scripted (scripted)", noBackend: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m, err := tc.reg.ResolveModel(context.Background(), tc.model, fs)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want it to contain %q", err, tc.wantErr)
				}
				if got := errors.Is(err, appdef.ErrNoBackend); got != tc.noBackend {
					t.Errorf("errors.Is(err, ErrNoBackend) = %v, want %v", got, tc.noBackend)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if tc.wantName != "" && m.Name() != tc.wantName {
				t.Errorf("Name() = %q, want %q", m.Name(), tc.wantName)
			}
		})
	}
	m, err := full.ResolveModel(context.Background(), "scripted/models/reactive.yaml", fs)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := m.(*scripted.Reactive); !ok {
		t.Errorf("a script of rules gives %T, want *scripted.Reactive", m)
	}
}

func TestModelRegistryFromEnv(t *testing.T) {
	envOf := func(kv ...string) func(string) string {
		m := map[string]string{}
		for i := 0; i+1 < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return func(k string) string { return m[k] }
	}
	r := appdef.NewModelRegistryFromEnv(envOf())
	if r.Gemini != nil || r.OpenAI != nil || r.Anthropic != nil || !r.Scripted {
		t.Errorf("empty environment: %+v, want the scripted model only", r)
	}
	r = appdef.NewModelRegistryFromEnv(envOf("GEMINI_API_KEY", "g", "OPENAI_API_BASE", "http://h/v1"))
	if r.Gemini == nil || r.Gemini.APIKey != "g" || r.Gemini.Backend != genai.BackendGeminiAPI {
		t.Errorf("Gemini = %+v", r.Gemini)
	}
	if r.OpenAI == nil || r.OpenAI.BaseURL != "http://h/v1" || r.OpenAI.APIKey != "" {
		t.Errorf("OpenAI = %+v", r.OpenAI)
	}
	r = appdef.NewModelRegistryFromEnv(envOf("ANTHROPIC_API_KEY", "sk-ant", "ANTHROPIC_BASE_URL", "http://gw/"))
	if a := r.Anthropic; a == nil || a.APIKey != "sk-ant" || a.BaseURL != "http://gw/" || a.AuthToken != "" {
		t.Errorf("Anthropic = %+v", a)
	}
	r = appdef.NewModelRegistryFromEnv(envOf("GOOGLE_API_KEY", "a", "GEMINI_API_KEY", "b",
		"GOOGLE_GENAI_USE_VERTEXAI", "TRUE", "GOOGLE_CLOUD_PROJECT", "p", "GOOGLE_CLOUD_LOCATION", "l"))
	if g := r.Gemini; g == nil || g.Backend != genai.BackendVertexAI || g.APIKey != "a" || g.Project != "p" || g.Location != "l" {
		t.Errorf("Vertex Gemini = %+v", g)
	}
}
