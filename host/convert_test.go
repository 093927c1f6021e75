package host_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"google.golang.org/genai"

	"github.com/adkhost/adkhost/abi"
	"github.com/adkhost/adkhost/engine/model"
	"github.com/adkhost/adkhost/engine/session"
	"github.com/adkhost/adkhost/host"
)

// The values below set every field both sides carry, with JSON-native
// values (float64 numbers, []any) in the maps, so that a round trip
// through a guest's JSON must give them back exactly.

func parts() map[string]*genai.Part {
	no := false
	return map[string]*genai.Part{
		"text":        {Text: "hello"},
		"thought":     {Text: "hmm", Thought: true, ThoughtSignature: []byte{0, 1, 0xfe}},
		"inline data": {InlineData: &genai.Blob{MIMEType: "image/png", Data: []byte{0x89, 'P', 'N', 'G'}, DisplayName: "p.png"}},
		"file data":   {FileData: &genai.FileData{MIMEType: "application/pdf", FileURI: "gs://b/f.pdf", DisplayName: "f.pdf"}},
		"function call": {FunctionCall: &genai.FunctionCall{ID: "c1", Name: "get", Args: map[string]any{
			"city": "Paris", "n": 2.0, "tags": []any{"a", true, nil}, "nested": map[string]any{"x": 1.5}}}},
		"function response": {FunctionResponse: &genai.FunctionResponse{ID: "c1", Name: "get", Response: map[string]any{"t": 21.5}, WillContinue: &no}},
		"executable code":   {ExecutableCode: &genai.ExecutableCode{Code: "print(1)", Language: genai.LanguagePython}},
		"code result":       {CodeExecutionResult: &genai.CodeExecutionResult{Outcome: genai.OutcomeOK, Output: "1\n"}},
		"video":             {FileData: &genai.FileData{FileURI: "gs://b/v.mp4"}, VideoMetadata: &genai.VideoMetadata{StartOffset: 2 * time.Second, EndOffset: 9 * time.Second, FPS: genai.Ptr(2.5)}},
		"empty":             {},
	}
}

func fullRequest() *model.Request {
	return &model.Request{
		Model: "gemini-2.5-flash",
		Contents: []*genai.Content{
			{Role: "user", Parts: []*genai.Part{{Text: "weather?"}}},
			{Role: "model", Parts: []*genai.Part{parts()["function call"]}},
			{Role: "user", Parts: []*genai.Part{parts()["function response"], nil}},
			{Role: "user", Parts: []*genai.Part{}},
		},
		Config: &genai.GenerateContentConfig{
			SystemInstruction: &genai.Content{Role: "user", Parts: []*genai.Part{{Text: "Be nice."}}},
			Temperature:       genai.Ptr[float32](0.7),
			TopP:              genai.Ptr[float32](0.95),
			TopK:              genai.Ptr[float32](40),
			CandidateCount:    1,
			MaxOutputTokens:   1024,
			StopSequences:     []string{"END"},
			PresencePenalty:   genai.Ptr[float32](0.1),
			FrequencyPenalty:  genai.Ptr[float32](-0.25),
			Seed:              genai.Ptr[int32](42),
			ResponseMIMEType:  "application/json",
			ResponseSchema: &genai.Schema{Type: genai.TypeObject, Required: []string{"n"},
				Properties: map[string]*genai.Schema{"n": {Type: genai.TypeInteger, Minimum: genai.Ptr(0.0), MaxLength: genai.Ptr[int64](3)}}},
			ResponseJsonSchema: map[string]any{"type": "object", "required": []any{"n"}},
			ResponseModalities: []string{"TEXT"},
			Tools: []*genai.Tool{
				{FunctionDeclarations: []*genai.FunctionDeclaration{
					{Name: "get", Description: "Gets.", ParametersJsonSchema: map[string]any{"type": "object"}, Behavior: genai.BehaviorBlocking},
					{Name: "put", Parameters: &genai.Schema{Type: genai.TypeObject}, Response: &genai.Schema{Type: genai.TypeString},
						ResponseJsonSchema: map[string]any{"type": "string"}},
				}},
				{GoogleSearch: &genai.GoogleSearch{}},
				{CodeExecution: &genai.ToolCodeExecution{}},
				{URLContext: &genai.URLContext{}},
			},
			ToolConfig: &genai.ToolConfig{FunctionCallingConfig: &genai.FunctionCallingConfig{
				Mode: genai.FunctionCallingConfigModeAny, AllowedFunctionNames: []string{"get"}}},
			SafetySettings: []*genai.SafetySetting{{Category: genai.HarmCategoryHarassment, Threshold: genai.HarmBlockThresholdBlockOnlyHigh}},
			Labels:         map[string]string{"team": "x"},
			CachedContent:  "cachedContents/1",
			ThinkingConfig: &genai.ThinkingConfig{IncludeThoughts: true, ThinkingBudget: genai.Ptr[int32](256), ThinkingLevel: genai.ThinkingLevelLow},
		},
	}
}

func fullResponse() *model.Response {
	return &model.Response{
		Content:           &genai.Content{Role: "model", Parts: []*genai.Part{{Text: "Sunny."}, parts()["function call"]}},
		GroundingMetadata: &genai.GroundingMetadata{WebSearchQueries: []string{"paris weather"}},
		Partial:           true,
		TurnComplete:      true,
		FinishReason:      genai.FinishReasonStop,
		ErrorCode:         "SAFETY",
		ErrorMessage:      "blocked",
		Interrupted:       true,
		CustomMetadata:    map[string]any{"k": "v", "n": 1.0},
		UsageMetadata: &genai.GenerateContentResponseUsageMetadata{
			PromptTokenCount: 3, CandidatesTokenCount: 4, TotalTokenCount: 9, CachedContentTokenCount: 1,
			ThoughtsTokenCount: 2, ToolUsePromptTokenCount: 5, TrafficType: genai.TrafficTypeOnDemand,
			PromptTokensDetails:        []*genai.ModalityTokenCount{{Modality: genai.MediaModalityText, TokenCount: 3}},
			CandidatesTokensDetails:    []*genai.ModalityTokenCount{{Modality: genai.MediaModalityText, TokenCount: 4}},
			CacheTokensDetails:         []*genai.ModalityTokenCount{{Modality: genai.MediaModalityText, TokenCount: 1}},
			ToolUsePromptTokensDetails: []*genai.ModalityTokenCount{{Modality: genai.MediaModalityText, TokenCount: 5}},
		},
		InputTranscription:  &genai.Transcription{Text: "in", Finished: true},
		OutputTranscription: &genai.Transcription{Text: "out"},
		AvgLogprobs:         -0.5,
		LogprobsResult:      &genai.LogprobsResult{ChosenCandidates: []*genai.LogprobsResultCandidate{{Token: "a", LogProbability: -0.125}}},
		CacheMetadata:       &model.CacheMetadata{CacheName: "c", ExpireTime: 1.5, FingerPrint: "fp", InvocationsUsed: 2, ContentsCount: 3, CreatedAt: 1.25},
		CitationMetadata:    &genai.CitationMetadata{Citations: []*genai.Citation{{URI: "https://example.com", StartIndex: 1, EndIndex: 2, Title: "t"}}},
		InteractionID:       "int-1",
		ModelVersion:        "v7",
	}
}

func fullEvent() *session.Event {
	return &session.Event{
		Response:           *fullResponse(),
		ID:                 "ev-1",
		InvocationID:       "e-1",
		Author:             "root",
		Branch:             "root.child",
		LongRunningToolIDs: []string{"c1"},
		Timestamp:          time.Unix(1700000000, 123456000),
		Actions: session.EventActions{
			SkipSummarization:          true,
			StateDelta:                 map[string]any{"a": 1.0, "temp:b": nil, "user:c": []any{"x"}},
			ArtifactDelta:              map[string]int{"f.txt": 2},
			TransferToAgent:            "helper",
			TransferReason:             "expertise",
			Escalate:                   true,
			RequestedAuthConfigs:       map[string]any{"c1": map[string]any{"authScheme": "oauth2"}},
			RequestedToolConfirmations: map[string]session.ToolConfirmation{"c1": {Hint: "sure?", Confirmed: true, Payload: map[string]any{"n": 5.0}}},
			Compaction:                 &session.EventCompaction{StartTimestamp: 1.5, EndTimestamp: 2.5, CompactedContent: &genai.Content{Role: "model", Parts: []*genai.Part{{Text: "summary"}}}},
			EndOfAgent:                 true,
			AgentState:                 map[string]any{"step": 2.0},
			RewindBeforeInvocationID:   "e-0",
			SetModelResponse:           map[string]any{"answer": 42.0},
		},
	}
}

// viaJSON sends v to a guest and back: encoded, then strictly decoded as
// the host decodes what a guest sends.
func viaJSON[T any](t *testing.T, v *T) *T {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	out := new(T)
	if err := abi.DecodeValue(b, out, 0); err != nil {
		t.Fatalf("decoding %s: %v", b, err)
	}
	return out
}

func TestPartRoundTrip(t *testing.T) {
	for name, p := range parts() {
		t.Run(name, func(t *testing.T) {
			a := host.PartToABI(p)
			for _, via := range []struct {
				name string
				a    *abi.Part
			}{{"direct", a}, {"json", viaJSON(t, a)}} {
				got, err := host.PartFromABI(via.a, nil)
				if err != nil {
					t.Fatal(err)
				}
				if !sameJSON(got, p) {
					t.Errorf("%s: got %+v, want %+v", via.name, got, p)
				}
			}
		})
	}
}

// TestPartWire pins what a guest sees of a part: google-adk's camelCase
// names, base64 bytes, genai's durations.
func TestPartWire(t *testing.T) {
	for _, tc := range []struct{ part, want string }{
		{"thought", `{"text":"hmm","thought":true,"thoughtSignature":"AAH+"}`},
		{"inline data", `{"inlineData":{"mimeType":"image/png","data":"iVBORw==","displayName":"p.png"}}`},
		{"function response", `{"functionResponse":{"id":"c1","name":"get","response":{"t":21.5},"willContinue":false}}`},
		{"code result", `{"codeExecutionResult":{"outcome":"OUTCOME_OK","output":"1\n"}}`},
		{"video", `{"fileData":{"fileUri":"gs://b/v.mp4"},"videoMetadata":{"endOffset":"9s","startOffset":"2s","fps":2.5}}`},
		{"empty", `{}`},
	} {
		b, _ := json.Marshal(host.PartToABI(parts()[tc.part]))
		if string(b) != tc.want {
			t.Errorf("%s: %s, want %s", tc.part, b, tc.want)
		}
	}
}

// TestUncarriedPartFields: what the ABI does not carry is not sent, and is
// kept when the guest sends the part back unchanged.
func TestUncarriedPartFields(t *testing.T) {
	base := &genai.Content{Role: "model", Parts: []*genai.Part{
		{Text: "a", PartMetadata: map[string]any{"k": "v"}},
		{FunctionCall: &genai.FunctionCall{Name: "f", PartialArgs: []*genai.PartialArg{{JsonPath: "$.x"}}}},
	}}
	a := host.ContentToABI(base)
	if b, _ := json.Marshal(a); string(b) != `{"role":"model","parts":[{"text":"a"},{"functionCall":{"name":"f"}}]}` {
		t.Errorf("sent %s", b)
	}
	got, err := host.ContentFromABI(viaJSON(t, a), base)
	if err != nil || got != base {
		t.Errorf("unchanged content: %p %v, want base %p", got, err, base)
	}
	a.Parts[0].Text = "b"
	got, err = host.ContentFromABI(a, base)
	if err != nil {
		t.Fatal(err)
	}
	if got == base || got.Parts[0].PartMetadata != nil || got.Parts[0].Text != "b" || got.Parts[1] != base.Parts[1] {
		t.Errorf("changed content: %+v", got)
	}
	if base.Parts[0].Text != "a" {
		t.Errorf("base modified")
	}
}

func TestRequestRoundTrip(t *testing.T) {
	req := fullRequest()
	a, err := host.RequestToABI(req)
	if err != nil {
		t.Fatal(err)
	}
	for _, via := range []struct {
		name string
		a    *abi.LlmRequest
	}{{"direct", a}, {"json", viaJSON(t, a)}} {
		got, err := host.RequestFromABI(via.a, nil)
		if err != nil {
			t.Fatal(err)
		}
		// Without a base an empty parts list is absent, as on the wire.
		want := fullRequest()
		if via.name == "json" {
			want.Contents[3].Parts = nil
		}
		if !sameJSON(got, want) {
			gb, _ := json.Marshal(got)
			wb, _ := json.Marshal(want)
			t.Errorf("%s:\n got %s\nwant %s", via.name, gb, wb)
		}
	}
	b, _ := json.Marshal(a.Config)
	for _, s := range []string{`"temperature":0.7,`, `"topP":0.95,`, `"frequencyPenalty":-0.25,`, `"seed":42,`,
		`"googleSearch":{}`, `"parametersJsonSchema":{"type":"object"}`, `"behavior":"BLOCKING"`, `"thinkingBudget":256`} {
		if !strings.Contains(string(b), s) {
			t.Errorf("config sent lacks %s: %s", s, b)
		}
	}
}

// TestRequestFromABIKeepsHostValues: a guest's edited request keeps the
// host's contents, parts and tools it did not change (the same pointers),
// and the config fields the ABI does not carry; base is not modified.
func TestRequestFromABIKeepsHostValues(t *testing.T) {
	base := fullRequest()
	base.Config.ServiceTier = "flex"
	base.Config.Store = genai.Ptr(true)
	base.Config.Tools = append(base.Config.Tools, &genai.Tool{MCPServers: []*genai.MCPServer{{Name: "mcp"}}})
	base.Contents[0].Parts[0].PartMetadata = map[string]any{"k": "v"}
	before, _ := json.Marshal(base)

	a, err := host.RequestToABI(base)
	if err != nil {
		t.Fatal(err)
	}
	a = viaJSON(t, a)
	a.Model = "other"
	a.Contents = append(a.Contents[:2], &abi.Content{Role: "user", Parts: []*abi.Part{a.Contents[2].Parts[0], {Text: "new"}}})
	*a.Config.Temperature = 0.2
	a.Config.Tools = a.Config.Tools[1:]

	got, err := host.RequestFromABI(a, base)
	if err != nil {
		t.Fatal(err)
	}
	if got.Model != "other" || *got.Config.Temperature != 0.2 || got.Config.ServiceTier != "flex" || got.Config.Store != base.Config.Store {
		t.Errorf("config: %+v", got.Config)
	}
	if len(got.Contents) != 3 || got.Contents[0] != base.Contents[0] || got.Contents[1] != base.Contents[1] ||
		got.Contents[2] == base.Contents[2] || got.Contents[2].Parts[0] != base.Contents[2].Parts[0] || got.Contents[2].Parts[1].Text != "new" {
		t.Errorf("contents: %+v", got.Contents)
	}
	if got.Config.SystemInstruction != base.Config.SystemInstruction {
		t.Errorf("system instruction copied")
	}
	if len(got.Config.Tools) != 4 || got.Config.Tools[0] != base.Config.Tools[1] || got.Config.Tools[3] != base.Config.Tools[4] {
		t.Errorf("tools: %+v", got.Config.Tools)
	}
	if got.Config.ResponseSchema != base.Config.ResponseSchema || got.Config.ToolConfig != base.Config.ToolConfig {
		t.Errorf("unchanged pass-through values copied")
	}
	if after, _ := json.Marshal(base); string(after) != string(before) {
		t.Errorf("base modified:\n%s\n%s", before, after)
	}
}

func TestResponseRoundTrip(t *testing.T) {
	a, err := host.ResponseToABI(fullResponse())
	if err != nil {
		t.Fatal(err)
	}
	for _, via := range []struct {
		name string
		a    *abi.LlmResponse
	}{{"direct", a}, {"json", viaJSON(t, a)}} {
		got, err := host.ResponseFromABI(via.a, nil)
		if err != nil {
			t.Fatal(err)
		}
		if want := fullResponse(); !sameJSON(got, want) {
			gb, _ := json.Marshal(got)
			wb, _ := json.Marshal(want)
			t.Errorf("%s:\n got %s\nwant %s", via.name, gb, wb)
		}
	}
	// Every field of model.Response reaches the guest: its ABI JSON is
	// google-adk's JSON of the response.
	want, _ := json.Marshal(fullResponse())
	if b, _ := json.Marshal(a); canon(t, string(b)) != canon(t, string(want)) {
		t.Errorf("wire:\n got %s\nwant %s", b, want)
	}
}

func TestEventRoundTrip(t *testing.T) {
	a, err := host.EventToABI(fullEvent())
	if err != nil {
		t.Fatal(err)
	}
	for _, via := range []struct {
		name string
		a    *abi.Event
	}{{"direct", a}, {"json", viaJSON(t, a)}} {
		got, err := host.EventFromABI(via.a, nil)
		if err != nil {
			t.Fatal(err)
		}
		if want := fullEvent(); !sameJSON(got, want) {
			gb, _ := json.Marshal(got)
			wb, _ := json.Marshal(want)
			t.Errorf("%s:\n got %s\nwant %s", via.name, gb, wb)
		}
	}
	want, _ := json.Marshal(fullEvent())
	if b, _ := json.Marshal(a); canon(t, string(b)) != canon(t, string(want)) {
		t.Errorf("wire:\n got %s\nwant %s", b, want)
	}

	// With a base: node info and the exact time are the host's.
	base := fullEvent()
	base.NodeInfo = &session.NodeInfo{Path: "root@1"}
	base.Timestamp = time.Unix(1700000000, 123456789)
	a, _ = host.EventToABI(base)
	got, err := host.EventFromABI(viaJSON(t, a), base)
	if err != nil {
		t.Fatal(err)
	}
	if got.NodeInfo != base.NodeInfo || !got.Timestamp.Equal(base.Timestamp) || got.Content != base.Content ||
		got.Actions.Compaction.CompactedContent != base.Actions.Compaction.CompactedContent {
		t.Errorf("event with base: %+v", got)
	}
}

// TestFromABIErrors: a pass-through value of the wrong shape is an error,
// not a silent loss.
func TestFromABIErrors(t *testing.T) {
	for name, f := range map[string]func() error{
		"grounding": func() error {
			_, err := host.ResponseFromABI(&abi.LlmResponse{GroundingMetadata: json.RawMessage(`"x"`)}, nil)
			return err
		},
		"video offset": func() error {
			_, err := host.PartFromABI(&abi.Part{VideoMetadata: json.RawMessage(`{"startOffset":"soon"}`)}, nil)
			return err
		},
		"schema": func() error {
			_, err := host.RequestFromABI(&abi.LlmRequest{Config: &abi.GenerateContentConfig{ResponseSchema: json.RawMessage(`[1]`)}}, nil)
			return err
		},
		"event usage": func() error {
			_, err := host.EventFromABI(&abi.Event{LlmResponse: abi.LlmResponse{UsageMetadata: &abi.UsageMetadata{PromptTokensDetails: json.RawMessage(`{}`)}}}, nil)
			return err
		},
	} {
		if err := f(); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

// TestFloat32 shows genai's float32 fields to guests in their shortest
// decimal form and takes them back exactly.
func TestFloat32(t *testing.T) {
	for _, f := range []float32{0, 0.7, 0.1, -0.25, 1e-8, 3.4028235e38, 1.0000001, 16777217} {
		a, err := host.RequestToABI(&model.Request{Config: &genai.GenerateContentConfig{Temperature: &f}})
		if err != nil {
			t.Fatal(err)
		}
		b, _ := json.Marshal(a.Config.Temperature)
		g, _ := json.Marshal(f)
		if string(b) != string(g) {
			t.Errorf("%v: guest sees %s, genai writes %s", f, b, g)
		}
		back, err := host.RequestFromABI(viaJSON(t, a), nil)
		if err != nil {
			t.Fatal(err)
		}
		if *back.Config.Temperature != f {
			t.Errorf("%v came back as %v", f, *back.Config.Temperature)
		}
	}
}

func TestNil(t *testing.T) {
	if host.ContentToABI(nil) != nil || host.PartToABI(nil) != nil {
		t.Error("nil to ABI")
	}
	if c, err := host.ContentFromABI(nil, nil); c != nil || err != nil {
		t.Error("nil content")
	}
	if r, err := host.RequestToABI(nil); r != nil || err != nil {
		t.Error("nil request")
	}
	if r, err := host.ResponseFromABI(nil, fullResponse()); r != nil || err != nil {
		t.Error("nil response")
	}
	if e, err := host.EventFromABI(nil, nil); e != nil || err != nil {
		t.Error("nil event")
	}
}

// sameJSON compares values by their JSON: the ABI codec decodes integers
// as int64 where a Go literal or encoding/json may hold float64, and both
// mean the same number on the wire.
func sameJSON(a, b any) bool {
	x, err1 := json.Marshal(a)
	y, err2 := json.Marshal(b)
	return err1 == nil && err2 == nil && string(x) == string(y)
}
