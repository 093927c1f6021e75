package engine

import (
	"archive/zip"
	"bytes"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strings"
	"unicode/utf8"

	"google.golang.org/genai"

	"github.com/adkhost/adkhost/callbacks"
	"github.com/adkhost/adkhost/engine/artifact"
	"github.com/adkhost/adkhost/engine/model"
	"github.com/adkhost/adkhost/engine/tool"
	"github.com/adkhost/adkhost/internal/pyfmt"
)

// LoadArtifactsTool is google-adk's load_artifacts (LoadArtifactsTool).
// While the session has artifacts it lists their names in the system
// instruction; when the model calls it with names, the call only answers
// which were asked for, and the next request carries those artifacts, as
// user contents after the history (never stored in the session), converted
// as google-adk's as_safe_part_for_llm converts them.
type LoadArtifactsTool struct{}

var (
	_ tool.Tool             = LoadArtifactsTool{}
	_ tool.RequestProcessor = LoadArtifactsTool{}
)

const loadArtifactsName = "load_artifacts"

func (LoadArtifactsTool) Name() string { return loadArtifactsName }
func (LoadArtifactsTool) Description() string {
	return "Loads artifacts into the session for this request.\n\nNOTE: Call when you need access to artifacts (for example, uploads saved by the\nweb UI)."
}
func (LoadArtifactsTool) IsLongRunning() bool { return false }

// Declaration is google-adk's JSON-schema declaration.
func (t LoadArtifactsTool) Declaration() *genai.FunctionDeclaration {
	return &genai.FunctionDeclaration{
		Name:        loadArtifactsName,
		Description: t.Description(),
		ParametersJsonSchema: map[string]any{
			"type": "object",
			"properties": map[string]any{
				"artifact_names": map[string]any{"type": "array", "items": map[string]any{"type": "string"}},
			},
		},
	}
}

// Run answers the names asked for; the artifacts themselves go into the
// next request.
func (LoadArtifactsTool) Run(_ callbacks.ToolContext, args map[string]any) (any, error) {
	names, ok := stringList(args, "artifact_names")
	if !ok {
		return map[string]any{"error": "'artifact_names' must be a list of strings.", "error_code": "INVALID_ARGUMENTS"}, nil
	}
	list := make([]any, len(names))
	for i, n := range names {
		list[i] = n
	}
	return map[string]any{
		"artifact_names": list,
		"status":         "artifact contents temporarily inserted and removed. to access these artifacts, call load_artifacts tool again.",
	}, nil
}

// stringList reads m[key] as a list of strings; absent is empty.
func stringList(m map[string]any, key string) ([]string, bool) {
	v, present := m[key]
	if !present {
		return nil, true
	}
	items, ok := v.([]any)
	if !ok {
		if s, ok := v.([]string); ok {
			return s, true
		}
		return nil, false
	}
	out := make([]string, 0, len(items))
	for _, it := range items {
		s, ok := it.(string)
		if !ok {
			return nil, false
		}
		out = append(out, s)
	}
	return out, true
}

// dynamicInstructor is the engine's tool context while the tools change a
// request: instructions a tool gives through it go into the system
// instruction after every tool has run (google-adk's dynamic
// instructions).
type dynamicInstructor interface {
	appendDynamicInstruction(text string) bool
}

// ProcessRequest lists the session's artifacts in the instruction and,
// when the last content answers a load_artifacts call, appends the
// artifacts it names.
func (LoadArtifactsTool) ProcessRequest(ctx callbacks.ToolContext, req *model.Request) error {
	names, err := ctx.ListArtifacts()
	if err != nil {
		return err
	}
	if len(names) == 0 {
		return nil
	}
	listed, err := pyfmt.JSONDumpsASCII(names)
	if err != nil {
		return err
	}
	text := "You have a list of artifacts:\n  " + listed + "\n\n  When the user asks questions about any of the artifacts, you should call the\n  `load_artifacts` function to load the artifact. Always call load_artifacts\n  before answering questions related to the artifacts, regardless of whether the\n  artifacts have been loaded before. Do not depend on prior answers about the\n  artifacts.\n  "
	if d, ok := ctx.(dynamicInstructor); !ok || !d.appendDynamicInstruction(text) {
		req.AppendInstructions(text)
	}

	if len(req.Contents) == 0 || req.Contents[len(req.Contents)-1] == nil {
		return nil
	}
	available := map[string]bool{}
	for _, n := range names {
		available[n] = true
	}
	// The names come from the model, which may repeat them: what one
	// request carries is bounded (google-adk loads them all).
	loaded, loadedBytes := 0, 0
	for _, p := range req.Contents[len(req.Contents)-1].Parts {
		if p == nil || p.FunctionResponse == nil || p.FunctionResponse.Name != loadArtifactsName {
			continue
		}
		requested, ok := stringList(p.FunctionResponse.Response, "artifact_names")
		if !ok {
			logger(ctx).Warn("Ignoring invalid artifact_names in load_artifacts response.")
			continue
		}
		for _, asked := range requested {
			name := resolveArtifactName(asked, available)
			if name == "" {
				logger(ctx).Warn("artifact is not available in this session, skipping", "artifact", asked)
				continue
			}
			if loaded >= maxLoadedArtifacts || loadedBytes >= maxLoadedArtifactBytes {
				logger(ctx).Warn("load_artifacts: request already carries the most artifacts it may, skipping", "artifact", asked, "artifacts", loaded, "bytes", loadedBytes)
				continue
			}
			part, err := loadListedArtifact(ctx, name)
			if err != nil {
				return err
			}
			if part == nil {
				logger(ctx).Warn("artifact not found, skipping", "artifact", name)
				continue
			}
			loaded++
			if part.InlineData != nil {
				loadedBytes += len(part.InlineData.Data)
			}
			loadedBytes += len(part.Text)
			req.Contents = append(req.Contents, &genai.Content{Role: genai.RoleUser, Parts: []*genai.Part{
				{Text: "Artifact " + asked + " is:"},
				SafeArtifactPart(part, asked),
			}})
		}
	}
	return nil
}

// Bounds on the artifacts one request carries: their number and their
// bytes (the artifact that crosses the byte bound is still sent).
const (
	maxLoadedArtifacts     = 256
	maxLoadedArtifactBytes = 64 << 20
)

// loadListedArtifact loads the newest version of name, trying the user's
// scope when a backend listed a user artifact under its bare name; nil for
// none.
func loadListedArtifact(ctx callbacks.ToolContext, name string) (*genai.Part, error) {
	part, err := ctx.LoadArtifact(name, artifact.Latest)
	if errors.Is(err, artifact.ErrNotFound) && !artifact.IsUserScoped(name) {
		part, err = ctx.LoadArtifact("user:"+name, artifact.Latest)
	}
	if errors.Is(err, artifact.ErrNotFound) {
		return nil, nil
	}
	return part, err
}

// resolveArtifactName maps a name the model asked for onto one the session
// listed (the model's word is untrusted): the name itself, or it with or
// without the "user:" prefix models tend to drop; "" for none.
func resolveArtifactName(asked string, available map[string]bool) string {
	if available[asked] {
		return asked
	}
	if bare, ok := strings.CutPrefix(asked, "user:"); ok {
		if available[bare] {
			return asked
		}
		return ""
	}
	if available["user:"+asked] {
		return "user:" + asked
	}
	return ""
}

// MIME types Gemini takes as inline data, and image types it refuses.
var (
	inlineMIMEPrefixes    = []string{"image/", "audio/", "video/"}
	unsupportedInlineMIME = map[string]bool{"image/svg": true, "image/svg+xml": true, "image/xml": true}
	textLikeMIME          = map[string]bool{"application/csv": true, "application/json": true, "application/svg+xml": true, "application/xml": true, "image/svg": true, "image/svg+xml": true, "image/xml": true}
)

// SafeArtifactPart converts an artifact to a part a model accepts, as
// google-adk's as_safe_part_for_llm does: media Gemini takes inline stay as
// they are (their MIME type's base lowercased); a DOCX document becomes its
// text; text-like data its text; anything else a placeholder naming it.
// Spreadsheets are not parsed (google-adk's default).
func SafeArtifactPart(p *genai.Part, name string) *genai.Part {
	if p == nil || p.InlineData == nil {
		return p
	}
	blob := p.InlineData
	mime := normalizeMIME(blob.MIMEType)
	if blob.MIMEType != "" && inlineSupported(mime) {
		base, params, hasParams := strings.Cut(blob.MIMEType, ";")
		canonical := strings.ToLower(strings.TrimSpace(base))
		if hasParams {
			canonical += ";" + params
		}
		if canonical == blob.MIMEType {
			return p
		}
		cp := *p
		b := *blob
		b.MIMEType = canonical
		cp.InlineData = &b
		return &cp
	}
	if mime == "" {
		mime = "application/octet-stream"
	}
	if blob.Data == nil {
		return &genai.Part{Text: fmt.Sprintf("[Artifact: %s, type: %s. No inline data was provided.]", name, mime)}
	}
	lower := strings.ToLower(name)
	if mime == "application/vnd.openxmlformats-officedocument.wordprocessingml.document" || mime == "application/octet-stream" || strings.HasSuffix(lower, ".docx") {
		if text, ok := docxText(blob.Data); ok {
			return &genai.Part{Text: text}
		}
	}
	if strings.HasPrefix(mime, "text/") || textLikeMIME[mime] || hasAnySuffix(lower, ".csv", ".txt", ".json", ".xml") {
		return &genai.Part{Text: strings.ToValidUTF8(string(blob.Data), string(utf8.RuneError))}
	}
	return &genai.Part{Text: fmt.Sprintf("[Binary artifact: %s, type: %s, size: %.1f KB. Content cannot be displayed inline.]", name, mime, float64(len(blob.Data))/1024)}
}

func normalizeMIME(m string) string {
	base, _, _ := strings.Cut(m, ";")
	return strings.ToLower(strings.TrimSpace(base))
}

func inlineSupported(mime string) bool {
	if mime == "" || unsupportedInlineMIME[mime] {
		return false
	}
	return mime == "application/pdf" || hasAnyPrefix(mime, inlineMIMEPrefixes...)
}

func hasAnyPrefix(s string, prefixes ...string) bool {
	for _, p := range prefixes {
		if strings.HasPrefix(s, p) {
			return true
		}
	}
	return false
}

func hasAnySuffix(s string, suffixes ...string) bool {
	for _, x := range suffixes {
		if strings.HasSuffix(s, x) {
			return true
		}
	}
	return false
}

// maxDocxXML bounds how much of word/document.xml is read, against zip
// bombs (google-adk's 10 MB).
const maxDocxXML = 10 << 20

var docxNamespace = regexp.MustCompile(`xmlns:(\w+)="http://schemas.openxmlformats.org/wordprocessingml/2006/main"`)

// docxText extracts a DOCX document's paragraphs, one a line, with
// google-adk's regular expressions (not an XML parser, which an XML bomb
// could exhaust); false when data is not a DOCX.
func docxText(data []byte) (string, bool) {
	zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		return "", false
	}
	var doc *zip.File
	for _, f := range zr.File {
		if f.Name == "word/document.xml" {
			doc = f
			break
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
	raw, err := io.ReadAll(io.LimitReader(rc, maxDocxXML))
	if err != nil {
		return "", false
	}
	xml := strings.ToValidUTF8(string(raw), "")
	prefix := "w"
	if m := docxNamespace.FindStringSubmatch(xml); m != nil {
		prefix = m[1]
	}
	pq, tq := regexp.QuoteMeta(prefix+":p"), regexp.QuoteMeta(prefix+":t")
	split := regexp.MustCompile(`<` + pq + `(?:[^>]*)>`)
	texts := regexp.MustCompile(`<` + tq + `(?:[^>]*)>([^<]*)</` + tq + `>`)
	var paragraphs []string
	for _, p := range split.Split(xml, -1) {
		var b strings.Builder
		ms := texts.FindAllStringSubmatch(p, -1)
		for _, m := range ms {
			b.WriteString(m[1])
		}
		if len(ms) > 0 {
			paragraphs = append(paragraphs, b.String())
		}
	}
	return strings.Join(paragraphs, "\n"), true
}
