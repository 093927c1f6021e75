// Package geminitool holds google-adk's Gemini-side tools: google_search,
// url_context, enterprise_web_search and google_maps. They have no function
// declaration and run nothing here: each adds its built-in tool to the
// request's config for the model to use, after google-adk 2.13's model
// check (a Gemini model id, unless ADK_DISABLE_GEMINI_MODEL_ID_CHECK is set).
package geminitool

import (
	"fmt"
	"os"
	"regexp"
	"strings"

	"google.golang.org/genai"

	"github.com/adkhost/adkhost/callbacks"
	"github.com/adkhost/adkhost/engine/model"
	"github.com/adkhost/adkhost/engine/tool"
)

// Tool is one of google-adk's Gemini built-in tools.
type Tool struct {
	name, label string
	tool        func() *genai.Tool
	// env is the process environment lookup (os.LookupEnv), for the
	// model-id check switch.
	env func(string) (string, bool)
}

var (
	_ tool.Tool             = (*Tool)(nil)
	_ tool.RequestProcessor = (*Tool)(nil)
)

// GoogleSearch is google-adk's google_search (GoogleSearchTool).
func GoogleSearch() *Tool {
	return &Tool{name: "google_search", label: "Google search", tool: func() *genai.Tool { return &genai.Tool{GoogleSearch: &genai.GoogleSearch{}} }, env: os.LookupEnv}
}

// URLContext is google-adk's url_context (UrlContextTool).
func URLContext() *Tool {
	return &Tool{name: "url_context", label: "Url context", tool: func() *genai.Tool { return &genai.Tool{URLContext: &genai.URLContext{}} }, env: os.LookupEnv}
}

// EnterpriseWebSearch is google-adk's enterprise_web_search.
func EnterpriseWebSearch() *Tool {
	return &Tool{name: "enterprise_web_search", label: "Enterprise Web Search", tool: func() *genai.Tool { return &genai.Tool{EnterpriseWebSearch: &genai.EnterpriseWebSearch{}} }, env: os.LookupEnv}
}

// GoogleMaps is google-adk's google_maps_grounding (GoogleMapsGroundingTool,
// named google_maps).
func GoogleMaps() *Tool {
	return &Tool{name: "google_maps", label: "Google maps", tool: func() *genai.Tool { return &genai.Tool{GoogleMaps: &genai.GoogleMaps{}} }, env: os.LookupEnv}
}

// Name is the tool's google-adk name; its description is the same.
func (t *Tool) Name() string        { return t.name }
func (t *Tool) Description() string { return t.name }
func (t *Tool) IsLongRunning() bool { return false }

// Declaration is nil: the model uses the tool itself.
func (t *Tool) Declaration() *genai.FunctionDeclaration { return nil }

// Run is never called: the model never calls the tool by name.
func (t *Tool) Run(callbacks.ToolContext, map[string]any) (any, error) {
	return nil, fmt.Errorf("%s is run by the model, not called as a function", t.name)
}

// ProcessRequest adds the built-in tool to the request's config, or fails
// as google-adk does for a model that is not Gemini.
func (t *Tool) ProcessRequest(_ callbacks.ToolContext, req *model.Request) error {
	if !IsGeminiModel(req.Model) && !t.checkDisabled() {
		return &UnsupportedModelError{Msg: fmt.Sprintf("%s tool is not supported for model %s", t.label, req.Model)}
	}
	if req.Config == nil {
		req.Config = &genai.GenerateContentConfig{}
	}
	req.Config.Tools = append(req.Config.Tools, t.tool())
	return nil
}

func (t *Tool) checkDisabled() bool { return ModelIDCheckDisabled(t.env) }

// ModelIDCheckDisabled reports whether ADK_DISABLE_GEMINI_MODEL_ID_CHECK,
// read with lookup (os.LookupEnv), turns google-adk's Gemini model-id
// check off (is_gemini_model_id_check_disabled).
func ModelIDCheckDisabled(lookup func(string) (string, bool)) bool {
	v, ok := lookup("ADK_DISABLE_GEMINI_MODEL_ID_CHECK")
	if !ok {
		return false
	}
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "1", "true", "yes", "on":
		return true
	}
	return false
}

// UnsupportedModelError is google-adk's ValueError for a Gemini tool on
// another model.
type UnsupportedModelError struct{ Msg string }

func (e *UnsupportedModelError) Error() string     { return e.Msg }
func (e *UnsupportedModelError) ErrorCode() string { return "ValueError" }

var (
	vertexPath = regexp.MustCompile(`^projects/[^/]+/locations/[^/]+/publishers/[^/]+/models/(.+)$`)
	apigeePath = regexp.MustCompile(`^apigee/(?:[^/]+/)?(?:[^/]+/)?(.+)$`)
)

// ModelName extracts the model name from a path or prefixed name
// (google-adk's extract_model_name).
func ModelName(s string) string {
	for _, re := range []*regexp.Regexp{vertexPath, apigeePath} {
		if m := re.FindStringSubmatch(s); m != nil {
			return m[1]
		}
	}
	if rest, ok := strings.CutPrefix(s, "models/"); ok {
		return rest
	}
	if strings.HasPrefix(s, "projects/") {
		return s
	}
	if i := strings.LastIndex(s, "/"); i >= 0 && strings.HasPrefix(s[i+1:], "gemini-") {
		return s[i+1:]
	}
	return s
}

// IsGeminiModel reports whether s names a Gemini model (google-adk's
// is_gemini_model).
func IsGeminiModel(s string) bool {
	return s != "" && strings.HasPrefix(ModelName(s), "gemini-")
}

// VertexAISearchConfig is the configuration of google-adk's
// VertexAiSearchTool: exactly one of DataStoreID and SearchEngineID.
type VertexAISearchConfig struct {
	DataStoreID, SearchEngineID, Filter string
	MaxResults                          int
}

// VertexAISearch is google-adk's VertexAiSearchTool: Vertex AI Search as
// the model's retrieval tool. It fails as google-adk's constructor does
// unless exactly one of the data store and the search engine is given.
func VertexAISearch(cfg VertexAISearchConfig) (*Tool, error) {
	if (cfg.DataStoreID == "") == (cfg.SearchEngineID == "") {
		return nil, &UnsupportedModelError{Msg: "Either data_store_id or search_engine_id must be specified."}
	}
	return &Tool{name: "vertex_ai_search", label: "Vertex AI search", env: os.LookupEnv, tool: func() *genai.Tool {
		s := &genai.VertexAISearch{Datastore: cfg.DataStoreID, Engine: cfg.SearchEngineID, Filter: cfg.Filter}
		if cfg.MaxResults > 0 {
			n := int32(cfg.MaxResults)
			s.MaxResults = &n
		}
		return &genai.Tool{Retrieval: &genai.Retrieval{VertexAISearch: s}}
	}}, nil
}
