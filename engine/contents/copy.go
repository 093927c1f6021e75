package contents

import (
	"maps"
	"strings"

	"google.golang.org/genai"

	"github.com/adkhost/adkhost/engine/session"
)

// copyContent returns a copy of c for a request, clearing "adk-" function
// call and response ids when strip is set. Parts and the structs they point
// to are copied, args and response maps deeply; byte payloads other than
// thought signatures are shared. A nil part becomes an empty part.
func copyContent(c *genai.Content, strip bool) *genai.Content {
	if len(c.Parts) == 1 {
		// The common case, in one allocation.
		b := new(struct {
			content genai.Content
			parts   [1]*genai.Part
			part    genai.Part
		})
		b.content.Role = c.Role
		copyPartTo(&b.part, c.Parts[0], strip)
		b.parts[0] = &b.part
		b.content.Parts = b.parts[:]
		return &b.content
	}
	out := &genai.Content{Role: c.Role}
	if c.Parts == nil {
		return out
	}
	out.Parts = make([]*genai.Part, len(c.Parts))
	ps := make([]genai.Part, len(c.Parts))
	for i, p := range c.Parts {
		copyPartTo(&ps[i], p, strip)
		out.Parts[i] = &ps[i]
	}
	return out
}

// copyPartTo sets *dst to a copy of p (an empty part for nil).
func copyPartTo(dst *genai.Part, p *genai.Part, strip bool) {
	if p == nil {
		*dst = genai.Part{}
		return
	}
	*dst = *p
	np := dst
	if p.FunctionCall != nil {
		fc := *p.FunctionCall
		if strip && strings.HasPrefix(fc.ID, clientFunctionCallIDPrefix) {
			fc.ID = ""
		}
		fc.Args = copyMap(fc.Args)
		if fc.PartialArgs != nil {
			fc.PartialArgs = make([]*genai.PartialArg, len(p.FunctionCall.PartialArgs))
			for i, a := range p.FunctionCall.PartialArgs {
				if a != nil {
					ca := *a
					ca.BoolValue = clonePtr(a.BoolValue)
					ca.NumberValue = clonePtr(a.NumberValue)
					ca.WillContinue = clonePtr(a.WillContinue)
					fc.PartialArgs[i] = &ca
				}
			}
		}
		fc.WillContinue = clonePtr(fc.WillContinue)
		np.FunctionCall = &fc
	}
	if p.FunctionResponse != nil {
		fr := *p.FunctionResponse
		if strip && strings.HasPrefix(fr.ID, clientFunctionCallIDPrefix) {
			fr.ID = ""
		}
		fr.Response = copyMap(fr.Response)
		fr.WillContinue = clonePtr(fr.WillContinue)
		if fr.Parts != nil {
			fr.Parts = make([]*genai.FunctionResponsePart, len(p.FunctionResponse.Parts))
			for i, rp := range p.FunctionResponse.Parts {
				if rp != nil {
					c := *rp
					c.InlineData = clonePtr(rp.InlineData)
					c.FileData = clonePtr(rp.FileData)
					fr.Parts[i] = &c
				}
			}
		}
		np.FunctionResponse = &fr
	}
	np.InlineData = clonePtr(p.InlineData)
	np.FileData = clonePtr(p.FileData)
	np.ExecutableCode = clonePtr(p.ExecutableCode)
	np.CodeExecutionResult = clonePtr(p.CodeExecutionResult)
	np.VideoMetadata = clonePtr(p.VideoMetadata)
	if p.VideoMetadata != nil {
		np.VideoMetadata.FPS = clonePtr(p.VideoMetadata.FPS)
	}
	np.MediaResolution = clonePtr(p.MediaResolution)
	if p.MediaResolution != nil {
		np.MediaResolution.NumTokens = clonePtr(p.MediaResolution.NumTokens)
	}
	np.AudioTranscription = clonePtr(p.AudioTranscription)
	if t := p.AudioTranscription; t != nil && t.Words != nil {
		np.AudioTranscription.Words = make([]*genai.WordInfo, len(t.Words))
		for i, w := range t.Words {
			np.AudioTranscription.Words[i] = clonePtr(w)
		}
	}
	np.SpeechMetadata = clonePtr(p.SpeechMetadata)
	if p.ToolCall != nil {
		tc := *p.ToolCall
		tc.Args = copyMap(tc.Args)
		np.ToolCall = &tc
	}
	if p.ToolResponse != nil {
		tr := *p.ToolResponse
		tr.Response = copyMap(tr.Response)
		np.ToolResponse = &tr
	}
	if p.ThoughtSignature != nil {
		np.ThoughtSignature = append([]byte{}, p.ThoughtSignature...)
	}
	np.PartMetadata = copyMap(p.PartMetadata)
}

// copyMap deep-copies a JSON-like map, keeping nil nil, as
// session.DeepCopy does: the map is cloned whole, then the values that are
// not scalars are copied one by one.
func copyMap(m map[string]any) map[string]any {
	if m == nil {
		return nil
	}
	out := maps.Clone(m)
	for k, v := range out {
		switch v.(type) {
		case nil, string, bool, float64, int, int64:
		default:
			out[k] = session.DeepCopy(v)
		}
	}
	return out
}

// clonePtr returns a pointer to a shallow copy of *p, or nil.
func clonePtr[T any](p *T) *T {
	if p == nil {
		return nil
	}
	c := *p
	return &c
}
