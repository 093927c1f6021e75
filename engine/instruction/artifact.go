package instruction

import (
	"archive/zip"
	"bytes"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"

	"google.golang.org/genai"

	"github.com/adkhost/adkhost/internal/pyfmt"
)

// MIME types Gemini accepts as inline data, and the exceptions it rejects.
var (
	inlineMIMEPrefixes   = []string{"image/", "audio/", "video/"}
	inlineMIMETypes      = map[string]bool{"application/pdf": true}
	inlineUnsupported    = map[string]bool{"image/svg": true, "image/svg+xml": true, "image/xml": true}
	textLikeMIMETypes    = map[string]bool{"application/csv": true, "application/json": true, "application/svg+xml": true, "application/xml": true, "image/svg": true, "image/svg+xml": true, "image/xml": true}
	textLikeExtensions   = []string{".csv", ".txt", ".json", ".xml"}
	docxMIMEType         = "application/vnd.openxmlformats-officedocument.wordprocessingml.document"
	octetStreamMIMEType  = "application/octet-stream"
	docxMaxDocumentBytes = 10 * 1024 * 1024
)

// normalizeMIME drops parameters, surrounding whitespace and case.
func normalizeMIME(mime string) string {
	if mime == "" {
		return ""
	}
	base, _, _ := strings.Cut(mime, ";")
	return strings.ToLower(pyfmt.Strip(base))
}

func inlineMIMESupported(mime string) bool {
	n := normalizeMIME(mime)
	if n == "" || inlineUnsupported[n] {
		return false
	}
	for _, p := range inlineMIMEPrefixes {
		if strings.HasPrefix(n, p) {
			return true
		}
	}
	return inlineMIMETypes[n]
}

// SafePartForLLM returns a part that is safe to send to a model for an
// artifact, as google-adk's load_artifacts_tool.as_safe_part_for_llm does
// (with spreadsheet parsing off, its default):
//
//   - parts without inline data are returned as they are;
//   - inline data Gemini accepts (image/*, audio/*, video/* except SVG/XML
//     images, and application/pdf) is returned as is, or as a copy whose
//     MIME type has its base lower-cased and trimmed;
//   - otherwise the data becomes a text part: "[Artifact: NAME, type: MIME.
//     No inline data was provided.]" when there is no data, the text of a
//     DOCX document, the UTF-8 text (invalid bytes replaced by U+FFFD) for
//     text-like types and names, or "[Binary artifact: NAME, type: MIME,
//     size: N.N KB. Content cannot be displayed inline.]".
//
// The input part is never modified.
func SafePartForLLM(part *genai.Part, name string) *genai.Part {
	p, _ := safePart(part, name)
	return p
}

// safePart implements SafePartForLLM and reports whether the result is a
// text part (Python: its text is not None).
func safePart(part *genai.Part, name string) (*genai.Part, bool) {
	inline := part.InlineData
	if inline == nil {
		return part, part.Text != "" || isEmptyPart(part)
	}
	mime := normalizeMIME(inline.MIMEType)
	if inline.MIMEType != "" && inlineMIMESupported(mime) {
		base, params, hasSep := strings.Cut(inline.MIMEType, ";")
		canonical := strings.ToLower(pyfmt.Strip(base))
		if hasSep {
			canonical += ";" + params
		}
		if canonical == inline.MIMEType {
			return part, part.Text != ""
		}
		cp := *part
		blob := *inline
		blob.MIMEType = canonical
		cp.InlineData = &blob
		return &cp, cp.Text != ""
	}
	if mime == "" {
		mime = octetStreamMIMEType
	}
	data := inline.Data
	if data == nil {
		return genai.NewPartFromText("[Artifact: " + name + ", type: " + mime + ". No inline data was provided.]"), true
	}
	lowerName := strings.ToLower(name)
	if mime == docxMIMEType || mime == octetStreamMIMEType || strings.HasSuffix(lowerName, ".docx") {
		if text, ok := docxText(data); ok {
			return genai.NewPartFromText(text), true
		}
	}
	textLike := strings.HasPrefix(mime, "text/") || textLikeMIMETypes[mime]
	for _, ext := range textLikeExtensions {
		textLike = textLike || strings.HasSuffix(lowerName, ext)
	}
	if textLike {
		return genai.NewPartFromText(decodeUTF8Replace(data)), true
	}
	sizeKB := float64(len(data)) / 1024
	return genai.NewPartFromText("[Binary artifact: " + name + ", type: " + mime + ", size: " +
		strconv.FormatFloat(sizeKB, 'f', 1, 64) + " KB. Content cannot be displayed inline.]"), true
}

func isEmptyPart(p *genai.Part) bool {
	return p.MediaResolution == nil && p.CodeExecutionResult == nil && p.ExecutableCode == nil &&
		p.FileData == nil && p.FunctionCall == nil && p.FunctionResponse == nil && p.InlineData == nil &&
		p.Text == "" && !p.Thought && p.ThoughtSignature == nil && p.VideoMetadata == nil &&
		p.ToolCall == nil && p.ToolResponse == nil && p.PartMetadata == nil && p.AudioTranscription == nil &&
		p.MediaProcessing == "" && p.SpeechMetadata == nil
}

// ArtifactText is the text google-adk substitutes for {artifact.NAME}: the
// text of SafePartForLLM's result, or else Python's str() of the part.
func ArtifactText(part *genai.Part, name string) string {
	if part == nil {
		return "None"
	}
	safe, isText := safePart(part, name)
	if isText {
		return safe.Text
	}
	return pyPartStr(part)
}

// pyPartStr renders Python's str(types.Part) for google-genai 2.34 (the
// version google-adk 2.13 installs): every field in declaration order as
// name=repr. Exact for the fields artifacts use (file_data, inline_data,
// text, thought, thought_signature); other set fields are rendered with Go
// formatting.
func pyPartStr(p *genai.Part) string {
	var b strings.Builder
	field := func(name, val string) {
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(name)
		b.WriteByte('=')
		b.WriteString(val)
	}
	other := func(v any, isNil bool) string {
		if isNil {
			return "None"
		}
		return fmt.Sprintf("%+v", v)
	}
	field("media_resolution", other(p.MediaResolution, p.MediaResolution == nil))
	field("code_execution_result", other(p.CodeExecutionResult, p.CodeExecutionResult == nil))
	field("executable_code", other(p.ExecutableCode, p.ExecutableCode == nil))
	if fd := p.FileData; fd != nil {
		field("file_data", prettyModel("FileData", [][2]string{
			{"display_name", prettyStr(fd.DisplayName)},
			{"file_uri", prettyStr(fd.FileURI)},
			{"mime_type", prettyStr(fd.MIMEType)},
		}))
	} else {
		field("file_data", "None")
	}
	field("function_call", other(p.FunctionCall, p.FunctionCall == nil))
	field("function_response", other(p.FunctionResponse, p.FunctionResponse == nil))
	if bl := p.InlineData; bl != nil {
		data := ""
		if bl.Data != nil {
			data = prettyBytes(bl.Data)
		}
		field("inline_data", prettyModel("Blob", [][2]string{
			{"data", data},
			{"display_name", prettyStr(bl.DisplayName)},
			{"mime_type", prettyStr(bl.MIMEType)},
		}))
	} else {
		field("inline_data", "None")
	}
	if p.Text != "" {
		field("text", pyfmt.StringRepr(p.Text))
	} else {
		field("text", "None")
	}
	if p.Thought {
		field("thought", "True")
	} else {
		field("thought", "None")
	}
	if p.ThoughtSignature != nil {
		field("thought_signature", pyfmt.BytesRepr(p.ThoughtSignature))
	} else {
		field("thought_signature", "None")
	}
	field("video_metadata", other(p.VideoMetadata, p.VideoMetadata == nil))
	field("tool_call", other(p.ToolCall, p.ToolCall == nil))
	field("tool_response", other(p.ToolResponse, p.ToolResponse == nil))
	field("part_metadata", other(p.PartMetadata, p.PartMetadata == nil))
	field("audio_transcription", other(p.AudioTranscription, p.AudioTranscription == nil))
	field("media_processing", other(p.MediaProcessing, p.MediaProcessing == ""))
	field("speech_metadata", other(p.SpeechMetadata, p.SpeechMetadata == nil))
	return b.String()
}

// prettyModel renders google-genai's pretty repr of a model at the top
// level; fields with an empty value are None and left out.
func prettyModel(cls string, fields [][2]string) string {
	var items []string
	for _, f := range fields {
		if f[1] != "" {
			items = append(items, "  "+f[0]+"="+f[1])
		}
	}
	if len(items) == 0 {
		return cls + "()"
	}
	return cls + "(\n" + strings.Join(items, ",\n") + "\n)"
}

// prettyStr is google-genai's pretty repr of a string field; "" stands for
// None (Go cannot tell them apart).
func prettyStr(s string) string {
	if s == "" {
		return ""
	}
	if strings.Contains(s, "\n") {
		return `"""` + strings.ReplaceAll(s, `"""`, `\"\"\"`) + `"""`
	}
	return pyfmt.StringRepr(s)
}

// prettyBytes is google-genai's pretty repr of bytes: repr, cut to 97 bytes
// plus "..." when longer than 100.
func prettyBytes(p []byte) string {
	if len(p) > 100 {
		s := pyfmt.BytesRepr(p[:97])
		return s[:len(s)-1] + "...'"
	}
	return pyfmt.BytesRepr(p)
}

var docxNamespaceRe = regexp.MustCompile(`xmlns:([\p{L}\p{N}_]+)="http://schemas.openxmlformats.org/wordprocessingml/2006/main"`)

// docxText extracts the paragraphs of a DOCX document the way google-adk
// does: a regular-expression scan of word/document.xml (at most 10 MB,
// invalid UTF-8 dropped), one line per paragraph that has text runs.
func docxText(data []byte) (string, bool) {
	zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		return "", false
	}
	var doc *zip.File
	for _, f := range zr.File {
		if f.Name == "word/document.xml" {
			doc = f
		}
	}
	if doc == nil {
		return "", false
	}
	rc, err := doc.Open()
	if err != nil {
		return "", false
	}
	defer rc.Close()
	raw, err := io.ReadAll(io.LimitReader(rc, int64(docxMaxDocumentBytes)))
	if err != nil {
		return "", false
	}
	xml := strings.ToValidUTF8(string(raw), "")
	prefix := "w"
	if m := docxNamespaceRe.FindStringSubmatch(xml); m != nil {
		prefix = m[1]
	}
	pRe, err1 := regexp.Compile(`<` + prefix + `:p(?:[^>]*)>`)
	tRe, err2 := regexp.Compile(`<` + prefix + `:t(?:[^>]*)>([^<]*)</` + prefix + `:t>`)
	if err1 != nil || err2 != nil {
		return "", false
	}
	var paragraphs []string
	for _, para := range pRe.Split(xml, -1) {
		ms := tRe.FindAllStringSubmatch(para, -1)
		if len(ms) == 0 {
			continue
		}
		var sb strings.Builder
		for _, m := range ms {
			sb.WriteString(m[1])
		}
		paragraphs = append(paragraphs, sb.String())
	}
	return strings.Join(paragraphs, "\n"), true
}

// decodeUTF8Replace decodes p as Python's bytes.decode('utf-8',
// errors='replace'): each maximal invalid subsequence becomes one U+FFFD.
func decodeUTF8Replace(p []byte) string {
	if utf8.Valid(p) {
		return string(p)
	}
	var b strings.Builder
	for len(p) > 0 {
		r, n := utf8.DecodeRune(p)
		if r != utf8.RuneError || n > 1 {
			b.Write(p[:n])
			p = p[n:]
			continue
		}
		b.WriteRune(utf8.RuneError)
		p = p[maximalSubpart(p):]
	}
	return b.String()
}

// maximalSubpart returns the length of the longest prefix of p that starts a
// well-formed UTF-8 sequence (at least 1), for an invalid sequence at p[0].
func maximalSubpart(p []byte) int {
	lo, hi := byte(0x80), byte(0xBF)
	var need int
	switch c := p[0]; {
	case 0xC2 <= c && c <= 0xDF:
		need = 1
	case c == 0xE0:
		need, lo = 2, 0xA0
	case 0xE1 <= c && c <= 0xEC, c == 0xEE, c == 0xEF:
		need = 2
	case c == 0xED:
		need, hi = 2, 0x9F
	case c == 0xF0:
		need, lo = 3, 0x90
	case 0xF1 <= c && c <= 0xF3:
		need = 3
	case c == 0xF4:
		need, hi = 3, 0x8F
	default:
		return 1
	}
	n := 1
	for i := 1; i <= need && i < len(p); i++ {
		if p[i] < lo || p[i] > hi {
			break
		}
		n++
		lo, hi = 0x80, 0xBF
	}
	return n
}
