package contents

import (
	"strings"

	"google.golang.org/genai"

	"github.com/adkhost/adkhost/engine/session"
)

// copyContent returns a copy of c for a request, clearing "adk-" function
// call and response ids when strip is set. Parts and the structs they point
// to are copied, args and response maps deeply; byte payloads other than
// thought signatures are shared. A nil part becomes an empty part.
func copyContent(c *genai.Content, strip bool) *genai.Content {
	out := &genai.Content{Role: c.Role}
	if c.Parts == nil {
		return out
	}
	out.Parts = make([]*genai.Part, len(c.Parts))
	for i, p := range c.Parts {
		out.Parts[i] = copyPart(p, strip)
	}
	return out
}

func copyPart(p *genai.Part, strip bool) *genai.Part {
	if p == nil {
		return &genai.Part{}
	}
	np := *p
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
	return &np
}

// copyMap deep-copies a JSON-like map, keeping nil nil.
func copyMap(m map[string]any) map[string]any {
	if m == nil {
		return nil
	}
	return session.DeepCopy(m).(map[string]any)
}

// clonePtr returns a pointer to a shallow copy of *p, or nil.
func clonePtr[T any](p *T) *T {
	if p == nil {
		return nil
	}
	c := *p
	return &c
}
