package engine_test

import (
	"archive/zip"
	"bytes"
	"encoding/json"
	"testing"

	"google.golang.org/genai"

	"github.com/adkhost/adkhost/engine"
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
