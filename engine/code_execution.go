package engine

import (
	"os"
	"strings"
	"time"

	"google.golang.org/genai"

	"github.com/adkhost/adkhost/engine/model"
	"github.com/adkhost/adkhost/engine/session"
	"github.com/adkhost/adkhost/engine/tool/geminitool"
)

// BuiltInCodeExecutor is google-adk's BuiltInCodeExecutor: the model runs
// the code it writes with its own code execution tool (Gemini's), so
// nothing runs on the host. An agent with it gets the tool in every
// request (a model that is not Gemini fails the call with google-adk's
// ValueError, unless ADK_DISABLE_GEMINI_MODEL_ID_CHECK is set), its
// history's code parts sent back as text, and images the code produced
// saved as artifacts.
type BuiltInCodeExecutor struct{}

// Delimiters google-adk's BaseCodeExecutor formats code and results with.
const (
	codeBlockStart   = "```tool_code\n"
	codeBlockEnd     = "\n```"
	codeResultStart  = "```tool_output\n"
	codeResultEnd    = "\n```"
	savedAsArtifactF = "Saved as artifact: %s. "
)

// processRequest adds the code execution tool and turns the history's
// trailing code parts into text (google-adk's _CodeExecutionRequestProcessor
// with a BuiltInCodeExecutor). Contents are replaced, never changed in
// place: the session shares them.
func (*BuiltInCodeExecutor) processRequest(req *model.Request) error {
	if !geminitool.IsGeminiModel(req.Model) && !geminitool.ModelIDCheckDisabled(os.LookupEnv) {
		return &geminitool.UnsupportedModelError{Msg: "Gemini code execution tool is not supported for model " + req.Model}
	}
	cfg := req.EnsureConfig()
	cfg.Tools = append(cfg.Tools, &genai.Tool{CodeExecution: &genai.ToolCodeExecution{}})
	for i, c := range req.Contents {
		if nc := convertCodeExecutionParts(c); nc != nil {
			req.Contents[i] = nc
		}
	}
	return nil
}

// convertCodeExecutionParts is google-adk's
// CodeExecutionUtils.convert_code_execution_parts on a copy: a content
// ending in executable code gets it as a fenced tool_code text; a content
// holding only a code result becomes a user content with the output as a
// fenced tool_output text (an empty text without output; Python tells an
// empty output from none, Go's genai does not). It returns nil when c is
// left as it is.
func convertCodeExecutionParts(c *genai.Content) *genai.Content {
	if c == nil || len(c.Parts) == 0 || c.Parts[len(c.Parts)-1] == nil {
		return nil
	}
	last := c.Parts[len(c.Parts)-1]
	switch {
	case last.ExecutableCode != nil:
		out := &genai.Content{Role: c.Role, Parts: append([]*genai.Part(nil), c.Parts...)}
		out.Parts[len(out.Parts)-1] = &genai.Part{Text: codeBlockStart + last.ExecutableCode.Code + codeBlockEnd}
		return out
	case len(c.Parts) == 1 && last.CodeExecutionResult != nil:
		text := ""
		if out := last.CodeExecutionResult.Output; out != "" {
			text = codeResultStart + out + codeResultEnd
		}
		return &genai.Content{Role: genai.RoleUser, Parts: []*genai.Part{{Text: text}}}
	}
	return nil
}

// processResponse is google-adk's _CodeExecutionResponseProcessor with a
// BuiltInCodeExecutor, for a complete response with content: each image
// in it is saved as an artifact (under its display name, else the local
// time and the MIME subtype) and replaced by a note naming it, and an event
// carrying the artifact versions (often no actions at all) goes before the
// model's response, as in google-adk.
func (*BuiltInCodeExecutor) processResponse(ctx *InvocationContext, resp *model.Response) (*session.Event, error) {
	ev := ctx.newEvent()
	cc := newCallbackContext(ctx, &ev.Actions)
	var parts []*genai.Part
	for i, p := range resp.Content.Parts {
		if p == nil || p.InlineData == nil || !strings.HasPrefix(p.InlineData.MIMEType, "image/") {
			continue
		}
		blob := p.InlineData
		name := blob.DisplayName
		if name == "" {
			ext := blob.MIMEType
			if j := strings.LastIndex(ext, "/"); j >= 0 {
				ext = ext[j+1:]
			}
			name = time.Now().Format("20060102_150405") + "." + ext
		}
		if _, err := cc.SaveArtifact(name, &genai.Part{InlineData: &genai.Blob{Data: blob.Data, MIMEType: blob.MIMEType}}); err != nil {
			return nil, err
		}
		if parts == nil {
			parts = append([]*genai.Part(nil), resp.Content.Parts...)
		}
		cp := *p
		cp.InlineData = nil
		cp.Text = strings.Replace(savedAsArtifactF, "%s", name, 1)
		parts[i] = &cp
	}
	if parts != nil {
		resp.Content = &genai.Content{Role: resp.Content.Role, Parts: parts}
	}
	return ev, nil
}
