package model

import (
	"encoding/json"
	"reflect"
	"testing"

	"google.golang.org/genai"
)

func TestAppendInstructions(t *testing.T) {
	tests := []struct {
		name  string
		start *genai.Content
		calls [][]string
		want  string // system instruction as JSON, "null" for none
	}{
		{"first", nil, [][]string{{"A"}}, `{"role":"user","parts":[{"text":"A"}]}`},
		{"joined with blank lines", nil, [][]string{{"A", "B"}, {"C"}}, `{"role":"user","parts":[{"text":"A\n\nB\n\nC"}]}`},
		{"empty texts are kept like a string join", nil, [][]string{{"A"}, {""}}, `{"role":"user","parts":[{"text":"A\n\n"}]}`},
		{"empty first append leaves none", nil, [][]string{{""}}, `null`},
		{"empty then text", nil, [][]string{{""}, {"B"}}, `{"role":"user","parts":[{"text":"B"}]}`},
		{"blank existing is replaced", &genai.Content{Parts: []*genai.Part{{}}}, [][]string{{"B"}}, `{"role":"user","parts":[{"text":"B"}]}`},
		{"after a non-text part", &genai.Content{Role: "user", Parts: []*genai.Part{{FileData: &genai.FileData{FileURI: "gs://x"}}}}, [][]string{{"B"}},
			`{"role":"user","parts":[{"fileData":{"fileUri":"gs://x"}},{"text":"B"}]}`},
		{"no texts", nil, [][]string{{}}, `null`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := &Request{}
			if tt.start != nil {
				r.EnsureConfig().SystemInstruction = tt.start
			}
			for _, c := range tt.calls {
				r.AppendInstructions(c...)
			}
			var si *genai.Content
			if r.Config != nil {
				si = r.Config.SystemInstruction
			}
			got, _ := json.Marshal(si)
			var g, w any
			json.Unmarshal(got, &g)
			json.Unmarshal([]byte(tt.want), &w)
			if !reflect.DeepEqual(g, w) {
				t.Errorf("system instruction = %s, want %s", got, tt.want)
			}
		})
	}
}

func TestAppendFunctionDeclarations(t *testing.T) {
	r := &Request{}
	r.EnsureConfig().Tools = []*genai.Tool{{GoogleSearch: &genai.GoogleSearch{}}, {FunctionDeclarations: []*genai.FunctionDeclaration{}}}
	r.AppendFunctionDeclarations(&genai.FunctionDeclaration{Name: "a"})
	r.AppendFunctionDeclarations(&genai.FunctionDeclaration{Name: "b"})
	if n := len(r.Config.Tools); n != 3 {
		t.Fatalf("%d tools, want 3 (an empty declaration list is not reused, as in google-adk)", n)
	}
	if got := r.Config.Tools[2].FunctionDeclarations; len(got) != 2 || got[1].Name != "b" {
		t.Fatalf("declarations = %+v", got)
	}
	if r.FunctionDeclaration("b") == nil || r.FunctionDeclaration("c") != nil {
		t.Error("FunctionDeclaration lookup is wrong")
	}
}

func TestFromGenerateContentResponse(t *testing.T) {
	grounding := &genai.GroundingMetadata{WebSearchQueries: []string{"q"}}
	usage := &genai.GenerateContentResponseUsageMetadata{TotalTokenCount: 5}
	text := genai.NewContentFromText("hi", genai.RoleModel)
	tests := []struct {
		name string
		in   *genai.GenerateContentResponse
		want *Response
	}{
		{
			name: "content",
			in: &genai.GenerateContentResponse{ModelVersion: "v", UsageMetadata: usage, Candidates: []*genai.Candidate{{
				Content: text, FinishReason: genai.FinishReasonStop, GroundingMetadata: grounding, AvgLogprobs: -1,
			}}},
			want: &Response{Content: text, FinishReason: genai.FinishReasonStop, GroundingMetadata: grounding, UsageMetadata: usage, ModelVersion: "v", AvgLogprobs: -1},
		},
		{
			name: "stop without parts is not an error",
			in:   &genai.GenerateContentResponse{Candidates: []*genai.Candidate{{FinishReason: genai.FinishReasonStop}}},
			want: &Response{FinishReason: genai.FinishReasonStop},
		},
		{
			name: "error drops grounding",
			in: &genai.GenerateContentResponse{UsageMetadata: usage, Candidates: []*genai.Candidate{{
				FinishReason: genai.FinishReasonSafety, FinishMessage: "unsafe", GroundingMetadata: grounding,
			}}},
			want: &Response{FinishReason: genai.FinishReasonSafety, ErrorCode: "SAFETY", ErrorMessage: "unsafe", UsageMetadata: usage},
		},
		{
			name: "prompt feedback",
			in:   &genai.GenerateContentResponse{PromptFeedback: &genai.GenerateContentResponsePromptFeedback{BlockReason: genai.BlockedReasonSafety, BlockReasonMessage: "no"}},
			want: &Response{ErrorCode: "SAFETY", ErrorMessage: "no"},
		},
		{
			name: "nothing is an empty model turn",
			in:   &genai.GenerateContentResponse{UsageMetadata: usage},
			want: &Response{Content: &genai.Content{Role: genai.RoleModel, Parts: []*genai.Part{}}, UsageMetadata: usage},
		},
		{
			name: "nil",
			in:   nil,
			want: &Response{Content: &genai.Content{Role: genai.RoleModel, Parts: []*genai.Part{}}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := FromGenerateContentResponse(tt.in); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got  %+v\nwant %+v", got, tt.want)
			}
		})
	}
}
