package geminitool

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/adkhost/adkhost/engine/model"
)

func TestIsGeminiModel(t *testing.T) {
	for name, want := range map[string]bool{
		"gemini-2.5-flash": true, "models/gemini-2.0-pro": true,
		"projects/p/locations/l/publishers/google/models/gemini-2.5-pro": true,
		"gemini/gemini-2.5-flash": true, "openrouter/google/gemini-2.5-pro:online": true,
		"gpt-4o": false, "scripted-model": false, "": false, "projects/x": false,
	} {
		if got := IsGeminiModel(name); got != want {
			t.Errorf("IsGeminiModel(%q) = %v", name, got)
		}
	}
}

func TestProcessRequest(t *testing.T) {
	req := &model.Request{Model: "gemini-2.5-flash"}
	for _, tl := range []*Tool{GoogleSearch(), URLContext(), EnterpriseWebSearch(), GoogleMaps()} {
		if err := tl.ProcessRequest(nil, req); err != nil {
			t.Fatal(err)
		}
	}
	if ts := req.Config.Tools; len(ts) != 4 || ts[0].GoogleSearch == nil || ts[1].URLContext == nil || ts[2].EnterpriseWebSearch == nil || ts[3].GoogleMaps == nil {
		t.Errorf("tools = %+v", req.Config.Tools)
	}
	err := GoogleSearch().ProcessRequest(nil, &model.Request{Model: "gpt-4o"})
	var um *UnsupportedModelError
	if !errors.As(err, &um) || err.Error() != "Google search tool is not supported for model gpt-4o" || um.ErrorCode() != "ValueError" {
		t.Errorf("err = %v", err)
	}
	off := GoogleSearch()
	off.env = func(string) (string, bool) { return "true", true }
	if err := off.ProcessRequest(nil, &model.Request{Model: "gpt-4o"}); err != nil {
		t.Errorf("with ADK_DISABLE_GEMINI_MODEL_ID_CHECK: %v", err)
	}
}

// TestVertexAISearch: the request's tool as google-adk 2.13 builds it
// ({"retrieval":{"vertexAiSearch":{"datastore":...,"filter":"a=1","maxResults":5}}}),
// and its constructor's and model check's errors.
func TestVertexAISearch(t *testing.T) {
	ds := "projects/p/locations/global/collections/default_collection/dataStores/ds"
	tl, err := VertexAISearch(VertexAISearchConfig{DataStoreID: ds, Filter: "a=1", MaxResults: 5})
	if err != nil {
		t.Fatal(err)
	}
	req := &model.Request{Model: "gemini-2.5-flash"}
	if err := tl.ProcessRequest(nil, req); err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(req.Config.Tools[0])
	if want := `{"retrieval":{"vertexAiSearch":{"datastore":"` + ds + `","filter":"a=1","maxResults":5}}}`; string(b) != want {
		t.Errorf("tool %s\nwant %s", b, want)
	}
	if _, err := VertexAISearch(VertexAISearchConfig{}); err == nil || err.Error() != "Either data_store_id or search_engine_id must be specified." {
		t.Errorf("no data store: %v", err)
	}
	if err := tl.ProcessRequest(nil, &model.Request{Model: "gpt-4"}); err == nil || err.Error() != "Vertex AI search tool is not supported for model gpt-4" {
		t.Errorf("gpt-4: %v", err)
	}
}
