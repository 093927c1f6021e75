package appdef

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"

	"google.golang.org/genai"

	"github.com/adkhost/adkhost/engine/model"
	"github.com/adkhost/adkhost/engine/model/anthropic"
	"github.com/adkhost/adkhost/engine/model/gemini"
	"github.com/adkhost/adkhost/engine/model/openai"
	"github.com/adkhost/adkhost/engine/model/scripted"
)

// ErrNoBackend is wrapped by ModelRegistry's error for a model name no
// configured backend serves.
var ErrNoBackend = errors.New("no backend serves this model")

// Model names of the scripted backend.
const (
	// ScriptedModel is the model name of the scripted backend; it plays
	// the definition's ScriptedFile.
	ScriptedModel = "scripted"
	// ScriptedFile is the script "scripted" reads; "scripted/<path>" reads
	// the definition's file <path> instead.
	ScriptedFile = "scripted_model.yaml"
	// OpenAIPrefix starts the names the OpenAI-compatible backend serves,
	// "openai/<model>", as LiteLLM names them in google-adk.
	OpenAIPrefix = "openai/"
	// AnthropicPrefix starts LiteLLM's names for Claude models,
	// "anthropic/<model>", which the Anthropic backend serves beside
	// google-adk's claude-*.
	AnthropicPrefix = "anthropic/"
)

// claudeNames are the names google-adk's Claude class claims.
var claudeNames = regexp.MustCompile(`^claude-.*$`)

// geminiNames are the names google-adk's Gemini class claims.
var geminiNames = regexp.MustCompile(`^(gemini-.*|gemma-4.*|model-optimizer-.*|projects/.+/locations/.+/endpoints/.+|projects/.+/locations/.+/publishers/google/models/gemini.+)$`)

// ModelRegistry is the default Models. It serves Gemini names (gemini-*,
// Vertex AI endpoint paths) through engine/model/gemini, "openai/<model>"
// through engine/model/openai, claude-* and "anthropic/<model>" through
// engine/model/anthropic (Anthropic's API; google-adk sends a bare claude-*
// name to Claude on Vertex AI instead), and "scripted" through
// engine/model/scripted. It reads no environment variable itself:
// NewModelRegistryFromEnv builds one from the server's.
type ModelRegistry struct {
	// Gemini enables the Gemini backend; nil disables it. It must carry an
	// API key or Vertex AI settings (with an empty APIKey the genai client
	// would read the process environment). Its Model is replaced by the
	// agent's model name.
	Gemini *gemini.Config
	// OpenAI enables the OpenAI-compatible backend; nil disables it. Its
	// Model is replaced by the name after "openai/".
	OpenAI *openai.Config
	// Anthropic enables the Anthropic backend; nil disables it. Its Model
	// is replaced by the agent's model name.
	Anthropic *anthropic.Config
	// Scripted enables the scripted model (see ScriptedModel).
	Scripted bool
}

var _ Models = (*ModelRegistry)(nil)

// NewModelRegistryFromEnv configures a registry from environment variables
// read with getenv (os.Getenv in a server), as google-adk and genai read
// them:
//   - Vertex AI when GOOGLE_GENAI_USE_VERTEXAI is true or 1, with
//     GOOGLE_CLOUD_PROJECT and GOOGLE_CLOUD_LOCATION (and GOOGLE_API_KEY for
//     express mode);
//   - else the Gemini API when GOOGLE_API_KEY or GEMINI_API_KEY is set;
//   - the OpenAI-compatible backend when OPENAI_API_KEY or OPENAI_BASE_URL
//     (LiteLLM's OPENAI_API_BASE too) is set;
//   - the Anthropic backend when ANTHROPIC_API_KEY (or ANTHROPIC_AUTH_TOKEN)
//     is set, at ANTHROPIC_BASE_URL when that is set;
//   - the scripted model always.
func NewModelRegistryFromEnv(getenv func(string) string) *ModelRegistry {
	r := &ModelRegistry{Scripted: true}
	key := getenv("GOOGLE_API_KEY")
	if key == "" {
		key = getenv("GEMINI_API_KEY")
	}
	vertex := strings.ToLower(getenv("GOOGLE_GENAI_USE_VERTEXAI"))
	project, location := getenv("GOOGLE_CLOUD_PROJECT"), getenv("GOOGLE_CLOUD_LOCATION")
	switch {
	case (vertex == "true" || vertex == "1") && (key != "" || (project != "" && location != "")):
		r.Gemini = &gemini.Config{Backend: genai.BackendVertexAI, APIKey: key, Project: project, Location: location}
	case key != "":
		r.Gemini = &gemini.Config{Backend: genai.BackendGeminiAPI, APIKey: key}
	}
	base := getenv("OPENAI_BASE_URL")
	if base == "" {
		base = getenv("OPENAI_API_BASE")
	}
	if okey := getenv("OPENAI_API_KEY"); okey != "" || base != "" {
		r.OpenAI = &openai.Config{APIKey: okey, BaseURL: base}
	}
	akey, atoken := getenv("ANTHROPIC_API_KEY"), getenv("ANTHROPIC_AUTH_TOKEN")
	if akey != "" || atoken != "" {
		r.Anthropic = &anthropic.Config{APIKey: akey, AuthToken: atoken, BaseURL: getenv("ANTHROPIC_BASE_URL")}
	}
	return r
}

// ResolveModel implements Models.
func (r *ModelRegistry) ResolveModel(ctx context.Context, name string, files map[string][]byte) (model.Model, error) {
	switch {
	case name == ScriptedModel || strings.HasPrefix(name, ScriptedModel+"/"):
		if !r.Scripted {
			return nil, fmt.Errorf("the scripted model is disabled on this server: %w", ErrNoBackend)
		}
		return scriptedModel(name, files)
	case strings.HasPrefix(name, OpenAIPrefix):
		if r.OpenAI == nil {
			return nil, fmt.Errorf("openai/ models need an OpenAI-compatible backend, which this server has not configured (OPENAI_API_KEY or OPENAI_BASE_URL): %w", ErrNoBackend)
		}
		cfg := *r.OpenAI
		cfg.Model = strings.TrimPrefix(name, OpenAIPrefix)
		if cfg.Model == "" {
			return nil, errors.New("openai/ needs a model name after the slash, e.g. openai/gpt-4o-mini")
		}
		return openai.New(cfg)
	case claudeNames.MatchString(name) || strings.HasPrefix(name, AnthropicPrefix):
		if r.Anthropic == nil {
			return nil, fmt.Errorf("Claude models need an Anthropic API key, which this server has not configured (ANTHROPIC_API_KEY): %w", ErrNoBackend)
		}
		if name == AnthropicPrefix {
			return nil, errors.New("anthropic/ needs a model name after the slash, e.g. anthropic/claude-sonnet-4-5")
		}
		cfg := *r.Anthropic
		cfg.Model = name
		return anthropic.New(cfg)
	case geminiNames.MatchString(name):
		if r.Gemini == nil {
			return nil, fmt.Errorf("Gemini models need a Gemini API key or Vertex AI settings, which this server has not configured (GOOGLE_API_KEY or GEMINI_API_KEY; or GOOGLE_GENAI_USE_VERTEXAI with GOOGLE_CLOUD_PROJECT and GOOGLE_CLOUD_LOCATION): %w", ErrNoBackend)
		}
		cfg := *r.Gemini
		cfg.Model = name
		return gemini.New(ctx, cfg)
	default:
		return nil, fmt.Errorf("%w; names served: %s", ErrNoBackend, strings.Join(r.served(), ", "))
	}
}

// served lists the names r can serve, for error messages.
func (r *ModelRegistry) served() []string {
	var out []string
	if r.Gemini != nil {
		out = append(out, "gemini-* (Gemini)")
	}
	if r.OpenAI != nil {
		out = append(out, OpenAIPrefix+"<model> (OpenAI-compatible)")
	}
	if r.Anthropic != nil {
		out = append(out, "claude-*, "+AnthropicPrefix+"<model> (Anthropic)")
	}
	if r.Scripted {
		out = append(out, ScriptedModel+" (scripted)")
	}
	if len(out) == 0 {
		out = append(out, "none (the server has no model backend configured)")
	}
	return out
}

// scriptedModel builds the scripted model name names from the definition's
// files.
func scriptedModel(name string, files map[string][]byte) (model.Model, error) {
	file := ScriptedFile
	if p, ok := strings.CutPrefix(name, ScriptedModel+"/"); ok {
		file = cleanPath(p)
		if file == "." || file == ".." || strings.HasPrefix(file, "../") {
			return nil, fmt.Errorf("scripted/%s: not a file of the definition", p)
		}
	}
	data, ok := files[file]
	if !ok {
		return nil, fmt.Errorf("model %s plays the definition's file %s, which it does not have", name, file)
	}
	m, err := scripted.Parse(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	return m, nil
}
