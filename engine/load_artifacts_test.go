package engine_test

import (
	"archive/zip"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"iter"
	"testing"

	"google.golang.org/genai"

	"github.com/adkhost/adkhost/engine"
	"github.com/adkhost/adkhost/engine/artifact"
	"github.com/adkhost/adkhost/engine/model"
	"github.com/adkhost/adkhost/engine/session"
	"github.com/adkhost/adkhost/engine/tool"
)

func docx(t *testing.T, xml string) []byte {
	t.Helper()
	var b bytes.Buffer
	zw := zip.NewWriter(&b)
	w, err := zw.Create("word/document.xml")
	if err != nil {
		t.Fatal(err)
	}
	w.Write([]byte(xml))
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// TestSafeArtifactPart: artifacts become what google-adk's
// as_safe_part_for_llm makes of them (expected texts from google-adk 2.13).
func TestSafeArtifactPart(t *testing.T) {
	blob := func(mime string, data []byte) *genai.Part {
		return &genai.Part{InlineData: &genai.Blob{MIMEType: mime, Data: data}}
	}
	doc := docx(t, `<w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"><w:body>`+
		`<w:p><w:r><w:t>Hello</w:t></w:r><w:r><w:t xml:space="preserve"> world</w:t></w:r></w:p><w:p></w:p><w:p><w:r><w:t>Bye</w:t></w:r></w:p></w:body></w:document>`)
	for _, tc := range []struct {
		name string
		in   *genai.Part
		want *genai.Part
	}{
		{"a.txt", &genai.Part{Text: "plain"}, &genai.Part{Text: "plain"}},
		{"a.pdf", blob("application/pdf", []byte("%PDF")), blob("application/pdf", []byte("%PDF"))},
		{"a.png", blob("Image/PNG; x=1", []byte{1}), blob("image/png; x=1", []byte{1})},
		{"a.svg", blob("image/svg+xml", []byte("<svg/>")), &genai.Part{Text: "<svg/>"}},
		{"a.docx", blob("application/vnd.openxmlformats-officedocument.wordprocessingml.document", doc), &genai.Part{Text: "Hello world\nBye"}},
		{"upload", blob("application/octet-stream", doc), &genai.Part{Text: "Hello world\nBye"}},
		{"notes.TXT", blob("", []byte("x\xffy")), &genai.Part{Text: "x\uFFFDy"}},
		{"blob.bin", blob("", make([]byte, 1536)), &genai.Part{Text: "[Binary artifact: blob.bin, type: application/octet-stream, size: 1.5 KB. Content cannot be displayed inline.]"}},
		{"empty", blob("text/plain", nil), &genai.Part{Text: "[Artifact: empty, type: text/plain. No inline data was provided.]"}},
	} {
		got := engine.SafeArtifactPart(tc.in, tc.name)
		if !bytes.Equal(mustJSON(t, got), mustJSON(t, tc.want)) {
			t.Errorf("%s: got %s, want %s", tc.name, mustJSON(t, got), mustJSON(t, tc.want))
		}
	}
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestLoadArtifactsBound: a model repeating a name cannot make one request
// carry more than 256 artifacts.
func TestLoadArtifactsBound(t *testing.T) {
	svc := artifact.NewInMemoryService()
	k := artifact.Key{AppName: "app", UserID: "u", SessionID: "s", Name: "a.txt"}
	if _, err := svc.Save(context.Background(), k, &genai.Part{InlineData: &genai.Blob{MIMEType: "text/plain", Data: []byte("hi")}}); err != nil {
		t.Fatal(err)
	}
	names := make([]any, 1000)
	for i := range names {
		names[i] = "a.txt"
	}
	m := &contentsCounter{answers: []*genai.Content{
		{Role: "model", Parts: []*genai.Part{{FunctionCall: &genai.FunctionCall{ID: "c1", Name: "load_artifacts", Args: map[string]any{"artifact_names": names}}}}},
		{Role: "model", Parts: []*genai.Part{{Text: "done"}}},
	}}
	agent, err := engine.NewLlmAgent(engine.LlmAgentConfig{Name: "a", Model: m, Tools: []tool.Tool{engine.LoadArtifactsTool{}}})
	if err != nil {
		t.Fatal(err)
	}
	r, err := engine.NewRunner(engine.RunnerConfig{AppName: "app", Agent: agent, Sessions: session.NewInMemoryService(), Artifacts: svc, AutoCreateSession: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, err := range r.Run(context.Background(), "u", "s", genai.NewContentFromText("read", genai.RoleUser), engine.RunConfig{}) {
		if err != nil {
			t.Fatal(err)
		}
	}
	// user message, call, response, then 256 artifact contents.
	if len(m.sizes) != 2 || m.sizes[0] != 1 || m.sizes[1] != 3+256 {
		t.Errorf("request sizes = %v, want [1 259]", m.sizes)
	}
}

// contentsCounter answers in order and records how many contents each
// request had.
type contentsCounter struct {
	answers []*genai.Content
	sizes   []int
}

func (m *contentsCounter) Name() string { return "gemini-2.5-flash" }

func (m *contentsCounter) GenerateContent(_ context.Context, req *model.Request, _ bool) iter.Seq2[*model.Response, error] {
	return func(yield func(*model.Response, error) bool) {
		m.sizes = append(m.sizes, len(req.Contents))
		if len(m.answers) == 0 {
			yield(nil, errors.New("no answer left"))
			return
		}
		c := m.answers[0]
		m.answers = m.answers[1:]
		yield(&model.Response{Content: c}, nil)
	}
}
