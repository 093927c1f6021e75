package instruction

import (
	"archive/zip"
	"bytes"
	"strings"
	"testing"

	"google.golang.org/genai"
)

func TestDecodeUTF8Replace(t *testing.T) {
	// Expectations from Python's bytes.decode('utf-8', errors='replace').
	cases := []struct {
		in   string
		want string
	}{
		{"\xe2\x82A", "\ufffdA"},
		{"\xe2\x82", "\ufffd"},
		{"\xf0\x9f\x98", "\ufffd"},
		{"\xf0\x9f\x98\x80", "😀"},
		{"\xed\xa0\x80", "\ufffd\ufffd\ufffd"},
		{"\xc0\xaf", "\ufffd\ufffd"},
		{"\xf4\x90\x80\x80", "\ufffd\ufffd\ufffd\ufffd"},
		{"\xe0\x80\x80", "\ufffd\ufffd\ufffd"},
		{"\x80\x80", "\ufffd\ufffd"},
		{"a\xffb\xfe", "a\ufffdb\ufffd"},
		{"\xf1\x80\x80\xe1\x80\xc2", "\ufffd\ufffd\ufffd"},
		{"\xf5", "\ufffd"},
	}
	for _, c := range cases {
		if got := decodeUTF8Replace([]byte(c.in)); got != c.want {
			t.Errorf("decodeUTF8Replace(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func makeZip(t *testing.T, name, content string) []byte {
	t.Helper()
	var b bytes.Buffer
	z := zip.NewWriter(&b)
	w, err := z.Create(name)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write([]byte(content)); err != nil {
		t.Fatal(err)
	}
	if err := z.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func TestSafePartForLLM(t *testing.T) {
	xml := `<?xml version="1.0"?><w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"><w:body>` +
		`<w:p><w:pPr><w:pStyle w:val="x"/></w:pPr><w:r><w:t>Hello</w:t></w:r><w:r><w:t xml:space="preserve"> world</w:t></w:r></w:p>` +
		`<w:p><w:r><w:tab/></w:r></w:p><w:p><w:r><w:t></w:t></w:r></w:p><w:p><w:r><w:t>Second &amp; last</w:t></w:r></w:p></w:body></w:document>`
	xml2 := strings.ReplaceAll(strings.ReplaceAll(xml, "w:", "x:"), "xmlns:w=", "xmlns:x=")
	blob := func(data []byte, mime string) *genai.Part {
		return &genai.Part{InlineData: &genai.Blob{Data: data, MIMEType: mime}}
	}
	// Expected texts from google-adk 2.13's as_safe_part_for_llm.
	cases := []struct {
		name string
		part *genai.Part
		want string
	}{
		{"a.docx", blob(makeZip(t, "word/document.xml", xml), "application/x-unknown"), "Hello world\n\nSecond &amp; last"},
		{"doc", blob(makeZip(t, "word/document.xml", xml2), "application/octet-stream"), "Hello world\n\nSecond &amp; last"},
		{"doc.bin", blob(bytes.Repeat([]byte{1}, 120), "application/octet-stream"), "[Binary artifact: doc.bin, type: application/octet-stream, size: 0.1 KB. Content cannot be displayed inline.]"},
		{"notzip", blob([]byte("PK\x03\x04garbage"), "application/vnd.openxmlformats-officedocument.wordprocessingml.document"), "[Binary artifact: notzip, type: application/vnd.openxmlformats-officedocument.wordprocessingml.document, size: 0.0 KB. Content cannot be displayed inline.]"},
		{"e", blob([]byte{}, "text/csv"), ""},
		{"big", blob(bytes.Repeat([]byte{1}, 1587), ""), "[Binary artifact: big, type: application/octet-stream, size: 1.5 KB. Content cannot be displayed inline.]"},
		{"X.JSON", blob([]byte(`{"a":1}`), "application/x-foo"), `{"a":1}`},
		{"x", blob([]byte(`<a/>`), "Image/SVG+XML; charset=utf-8"), `<a/>`},
	}
	for _, c := range cases {
		got := SafePartForLLM(c.part, c.name)
		if got.Text != c.want || got.InlineData != nil {
			t.Errorf("SafePartForLLM(%s) = %+v, want text %q", c.name, got, c.want)
		}
	}

	// Supported inline data is kept; its MIME base is canonicalised in a copy.
	img := blob([]byte("x"), " Image/PNG ;q=1")
	got := SafePartForLLM(img, "i")
	if got == img || got.InlineData.MIMEType != "image/png;q=1" || img.InlineData.MIMEType != " Image/PNG ;q=1" {
		t.Errorf("canonical copy: got %q (orig %q)", got.InlineData.MIMEType, img.InlineData.MIMEType)
	}
	if img2 := blob([]byte("x"), "image/png"); SafePartForLLM(img2, "i") != img2 {
		t.Error("canonical image part not returned as is")
	}
	if p := (&genai.Part{Text: "t"}); SafePartForLLM(p, "t") != p {
		t.Error("text part not returned as is")
	}
}

func TestArtifactTextEmptyThought(t *testing.T) {
	p := &genai.Part{InlineData: &genai.Blob{MIMEType: "audio/wav"}, Thought: true, ThoughtSignature: []byte("s'")}
	want := "media_resolution=None code_execution_result=None executable_code=None file_data=None function_call=None function_response=None inline_data=Blob(\n  mime_type='audio/wav'\n) text=None thought=True thought_signature=b\"s'\" video_metadata=None tool_call=None tool_response=None part_metadata=None audio_transcription=None media_processing=None speech_metadata=None"
	if got := ArtifactText(p, "a"); got != want {
		t.Errorf("ArtifactText =\n%q\nwant\n%q", got, want)
	}
	if got := ArtifactText(&genai.Part{}, "a"); got != "" {
		t.Errorf("ArtifactText(empty) = %q", got)
	}
}
