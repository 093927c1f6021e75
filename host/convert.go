package host

// Converters between the engine's types (genai, model, session) and the
// ABI's mirrors of them (abi/types.go). Every field both sides carry is
// converted without loss. The ABI leaves some genai fields out (ABI.md §6);
// the *FromABI functions take the host's own value as base and keep what the
// ABI does not carry from it, and keep a whole content, part or pass-through
// value of base when the guest sent it back unchanged, so an unchanged value
// is the host's value itself, not a copy.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"strconv"

	"google.golang.org/genai"

	"github.com/adkhost/adkhost/abi"
	"github.com/adkhost/adkhost/engine/memory"
	"github.com/adkhost/adkhost/engine/model"
	"github.com/adkhost/adkhost/engine/session"
)

// ContentToABI converts a content for a guest. Fields of genai.Part the ABI
// does not carry (MediaResolution, ToolCall, ToolResponse, PartMetadata,
// AudioTranscription, MediaProcessing, SpeechMetadata, FunctionCall's
// PartialArgs and WillContinue, FunctionResponse's Scheduling and Parts,
// the ids of ExecutableCode and CodeExecutionResult) are left out. Maps
// (function call args, responses) are shared, not copied.
func ContentToABI(c *genai.Content) *abi.Content {
	if c == nil {
		return nil
	}
	out := &abi.Content{Role: c.Role}
	if c.Parts != nil {
		out.Parts = make([]*abi.Part, len(c.Parts))
		for i, p := range c.Parts {
			out.Parts[i] = PartToABI(p)
		}
	}
	return out
}

// ContentFromABI converts a content a guest sent. base is the host's value
// it replaces, or nil: when c is base unchanged, base itself is returned;
// otherwise each part equal to one of base's parts is that part.
func ContentFromABI(c *abi.Content, base *genai.Content) (*genai.Content, error) {
	return newReuse(base).content(c)
}

// PartToABI converts a part for a guest; see ContentToABI.
func PartToABI(p *genai.Part) *abi.Part {
	if p == nil {
		return nil
	}
	out := &abi.Part{
		Text:             p.Text,
		Thought:          p.Thought,
		ThoughtSignature: p.ThoughtSignature,
	}
	if b := p.InlineData; b != nil {
		out.InlineData = &abi.Blob{MIMEType: b.MIMEType, Data: b.Data, DisplayName: b.DisplayName}
	}
	if f := p.FileData; f != nil {
		out.FileData = &abi.FileData{MIMEType: f.MIMEType, FileURI: f.FileURI, DisplayName: f.DisplayName}
	}
	if fc := p.FunctionCall; fc != nil {
		out.FunctionCall = &abi.FunctionCall{ID: fc.ID, Name: fc.Name, Args: fc.Args}
	}
	if fr := p.FunctionResponse; fr != nil {
		out.FunctionResponse = &abi.FunctionResponse{ID: fr.ID, Name: fr.Name, Response: fr.Response, WillContinue: fr.WillContinue}
	}
	if ec := p.ExecutableCode; ec != nil {
		out.ExecutableCode = &abi.ExecutableCode{Code: ec.Code, Language: string(ec.Language)}
	}
	if r := p.CodeExecutionResult; r != nil {
		out.CodeExecutionResult = &abi.CodeExecutionResult{Outcome: string(r.Outcome), Output: r.Output}
	}
	// VideoMetadata holds durations and a float: it always encodes.
	out.VideoMetadata, _ = toRaw(p.VideoMetadata)
	return out
}

// PartFromABI converts a part a guest sent; base is the host's part it
// replaces, or nil, and is returned when p is base unchanged.
func PartFromABI(p *abi.Part, base *genai.Part) (*genai.Part, error) {
	var r *reuse
	if base != nil {
		r = newReuse(&genai.Content{Parts: []*genai.Part{base}})
	}
	return r.part(p)
}

func partFromABI(p *abi.Part) (*genai.Part, error) {
	if p == nil {
		return nil, nil
	}
	out := &genai.Part{
		Text:             p.Text,
		Thought:          p.Thought,
		ThoughtSignature: p.ThoughtSignature,
	}
	if b := p.InlineData; b != nil {
		out.InlineData = &genai.Blob{MIMEType: b.MIMEType, Data: b.Data, DisplayName: b.DisplayName}
	}
	if f := p.FileData; f != nil {
		out.FileData = &genai.FileData{MIMEType: f.MIMEType, FileURI: f.FileURI, DisplayName: f.DisplayName}
	}
	if fc := p.FunctionCall; fc != nil {
		out.FunctionCall = &genai.FunctionCall{ID: fc.ID, Name: fc.Name, Args: fc.Args}
	}
	if fr := p.FunctionResponse; fr != nil {
		out.FunctionResponse = &genai.FunctionResponse{ID: fr.ID, Name: fr.Name, Response: fr.Response, WillContinue: fr.WillContinue}
	}
	if ec := p.ExecutableCode; ec != nil {
		out.ExecutableCode = &genai.ExecutableCode{Code: ec.Code, Language: genai.Language(ec.Language)}
	}
	if r := p.CodeExecutionResult; r != nil {
		out.CodeExecutionResult = &genai.CodeExecutionResult{Outcome: genai.Outcome(r.Outcome), Output: r.Output}
	}
	var err error
	if out.VideoMetadata, err = fromRaw[*genai.VideoMetadata](p.VideoMetadata, nil); err != nil {
		return nil, fmt.Errorf("part videoMetadata: %w", err)
	}
	return out, nil
}

// RequestToABI converts a model request for a guest. Config fields the ABI
// does not carry (HTTPOptions, ResponseLogprobs, Logprobs, RoutingConfig,
// ModelSelectionConfig, MediaResolution, SpeechConfig, AudioTimestamp,
// ImageConfig, EnableEnhancedCivicAnswers, ModelArmorConfig, ServiceTier,
// AudioTranscriptionConfig, ContinuationToken, AutomaticContinuation,
// GenerationOutputConfig, Store; and the ParallelAISearch, MCPServers and
// ExaAISearch tools) are left out. It fails only for a schema or other
// pass-through value that does not encode as JSON.
func RequestToABI(r *model.Request) (*abi.LlmRequest, error) {
	if r == nil {
		return nil, nil
	}
	out := &abi.LlmRequest{Model: r.Model, Contents: contentsToABI(r.Contents)}
	if c := r.Config; c != nil {
		cfg, err := configToABI(c)
		if err != nil {
			return nil, fmt.Errorf("request config: %w", err)
		}
		out.Config = cfg
	}
	return out, nil
}

// RequestFromABI converts a request a guest sent. base is the request it
// replaces, or nil: its contents, tools and pass-through values that the
// guest sent back unchanged are kept as they are (the contents shared with
// the session history stay shared), and so are the config fields the ABI
// does not carry. base is not modified.
func RequestFromABI(r *abi.LlmRequest, base *model.Request) (*model.Request, error) {
	if r == nil {
		return nil, nil
	}
	if base == nil {
		base = &model.Request{}
	}
	var rc []*genai.Content
	if base.Config != nil && base.Config.SystemInstruction != nil {
		rc = append(rc, base.Config.SystemInstruction)
	}
	reuse := newReuse(append(rc, base.Contents...)...)
	out := &model.Request{Model: r.Model}
	if r.Contents != nil {
		out.Contents = make([]*genai.Content, len(r.Contents))
		for i, c := range r.Contents {
			var err error
			if out.Contents[i], err = reuse.content(c); err != nil {
				return nil, fmt.Errorf("request contents[%d]: %w", i, err)
			}
		}
	}
	cfg, err := configFromABI(r.Config, base.Config, reuse)
	if err != nil {
		return nil, fmt.Errorf("request config: %w", err)
	}
	out.Config = cfg
	return out, nil
}

func contentsToABI(cs []*genai.Content) []*abi.Content {
	if cs == nil {
		return nil
	}
	out := make([]*abi.Content, len(cs))
	for i, c := range cs {
		out[i] = ContentToABI(c)
	}
	return out
}

func configToABI(c *genai.GenerateContentConfig) (*abi.GenerateContentConfig, error) {
	out := &abi.GenerateContentConfig{
		SystemInstruction:  ContentToABI(c.SystemInstruction),
		Temperature:        f32to64(c.Temperature),
		TopP:               f32to64(c.TopP),
		TopK:               f32to64(c.TopK),
		CandidateCount:     int(c.CandidateCount),
		MaxOutputTokens:    int(c.MaxOutputTokens),
		StopSequences:      c.StopSequences,
		PresencePenalty:    f32to64(c.PresencePenalty),
		FrequencyPenalty:   f32to64(c.FrequencyPenalty),
		ResponseMIMEType:   c.ResponseMIMEType,
		ResponseModalities: c.ResponseModalities,
		Labels:             c.Labels,
		CachedContent:      c.CachedContent,
	}
	if c.Seed != nil {
		s := int(*c.Seed)
		out.Seed = &s
	}
	if t := c.ThinkingConfig; t != nil {
		out.ThinkingConfig = &abi.ThinkingConfig{IncludeThoughts: t.IncludeThoughts, ThinkingLevel: string(t.ThinkingLevel)}
		if t.ThinkingBudget != nil {
			b := int(*t.ThinkingBudget)
			out.ThinkingConfig.ThinkingBudget = &b
		}
	}
	var err error
	raws := []struct {
		dst *json.RawMessage
		v   any
	}{
		{&out.ResponseSchema, c.ResponseSchema},
		{&out.ResponseJSONSchema, c.ResponseJsonSchema},
		{&out.ToolConfig, c.ToolConfig},
		{&out.SafetySettings, c.SafetySettings},
	}
	for _, r := range raws {
		if *r.dst, err = toRaw(r.v); err != nil {
			return nil, err
		}
	}
	if c.Tools != nil {
		out.Tools = make([]*abi.Tool, len(c.Tools))
		for i, t := range c.Tools {
			if out.Tools[i], err = toolToABI(t); err != nil {
				return nil, fmt.Errorf("tools[%d]: %w", i, err)
			}
		}
	}
	return out, nil
}

func configFromABI(a *abi.GenerateContentConfig, base *genai.GenerateContentConfig, reuse *reuse) (*genai.GenerateContentConfig, error) {
	if a == nil && base == nil {
		return nil, nil
	}
	out := &genai.GenerateContentConfig{}
	if base != nil {
		// The fields the ABI does not carry stay the host's.
		out.HTTPOptions = base.HTTPOptions
		out.ResponseLogprobs = base.ResponseLogprobs
		out.Logprobs = base.Logprobs
		out.RoutingConfig = base.RoutingConfig
		out.ModelSelectionConfig = base.ModelSelectionConfig
		out.MediaResolution = base.MediaResolution
		out.SpeechConfig = base.SpeechConfig
		out.AudioTimestamp = base.AudioTimestamp
		out.ImageConfig = base.ImageConfig
		out.EnableEnhancedCivicAnswers = base.EnableEnhancedCivicAnswers
		out.ModelArmorConfig = base.ModelArmorConfig
		out.ServiceTier = base.ServiceTier
		out.AudioTranscriptionConfig = base.AudioTranscriptionConfig
		out.ContinuationToken = base.ContinuationToken
		out.AutomaticContinuation = base.AutomaticContinuation
		out.GenerationOutputConfig = base.GenerationOutputConfig
		out.Store = base.Store
	} else {
		base = &genai.GenerateContentConfig{}
	}
	if a == nil {
		return out, nil
	}
	var err error
	if out.SystemInstruction, err = reuse.content(a.SystemInstruction); err != nil {
		return nil, fmt.Errorf("systemInstruction: %w", err)
	}
	out.Temperature = f64to32(a.Temperature)
	out.TopP = f64to32(a.TopP)
	out.TopK = f64to32(a.TopK)
	out.CandidateCount = int32(a.CandidateCount)
	out.MaxOutputTokens = int32(a.MaxOutputTokens)
	out.StopSequences = a.StopSequences
	out.PresencePenalty = f64to32(a.PresencePenalty)
	out.FrequencyPenalty = f64to32(a.FrequencyPenalty)
	if a.Seed != nil {
		s := int32(*a.Seed)
		out.Seed = &s
	}
	out.ResponseMIMEType = a.ResponseMIMEType
	out.ResponseModalities = a.ResponseModalities
	out.Labels = a.Labels
	out.CachedContent = a.CachedContent
	if t := a.ThinkingConfig; t != nil {
		out.ThinkingConfig = &genai.ThinkingConfig{IncludeThoughts: t.IncludeThoughts, ThinkingLevel: genai.ThinkingLevel(t.ThinkingLevel)}
		if t.ThinkingBudget != nil {
			b := int32(*t.ThinkingBudget)
			out.ThinkingConfig.ThinkingBudget = &b
		}
	}
	if out.ResponseSchema, err = fromRaw(a.ResponseSchema, base.ResponseSchema); err != nil {
		return nil, fmt.Errorf("responseSchema: %w", err)
	}
	if out.ResponseJsonSchema, err = fromRaw(a.ResponseJSONSchema, base.ResponseJsonSchema); err != nil {
		return nil, fmt.Errorf("responseJsonSchema: %w", err)
	}
	if out.ToolConfig, err = fromRaw(a.ToolConfig, base.ToolConfig); err != nil {
		return nil, fmt.Errorf("toolConfig: %w", err)
	}
	if out.SafetySettings, err = fromRaw(a.SafetySettings, base.SafetySettings); err != nil {
		return nil, fmt.Errorf("safetySettings: %w", err)
	}
	if a.Tools != nil {
		out.Tools = make([]*genai.Tool, len(a.Tools))
		for i, t := range a.Tools {
			if out.Tools[i], err = toolFromABI(t, base.Tools); err != nil {
				return nil, fmt.Errorf("tools[%d]: %w", i, err)
			}
		}
	}
	return out, nil
}

func toolToABI(t *genai.Tool) (*abi.Tool, error) {
	if t == nil {
		return nil, nil
	}
	out := &abi.Tool{}
	if t.FunctionDeclarations != nil {
		out.FunctionDeclarations = make([]*abi.FunctionDeclaration, len(t.FunctionDeclarations))
		for i, d := range t.FunctionDeclarations {
			if d == nil {
				continue
			}
			fd := &abi.FunctionDeclaration{Name: d.Name, Description: d.Description, Behavior: string(d.Behavior)}
			var err error
			if fd.Parameters, err = toRaw(d.Parameters); err != nil {
				return nil, err
			}
			if fd.ParametersJSONSchema, err = toRaw(d.ParametersJsonSchema); err != nil {
				return nil, err
			}
			if fd.Response, err = toRaw(d.Response); err != nil {
				return nil, err
			}
			if fd.ResponseJSONSchema, err = toRaw(d.ResponseJsonSchema); err != nil {
				return nil, err
			}
			out.FunctionDeclarations[i] = fd
		}
	}
	var err error
	raws := []struct {
		dst *json.RawMessage
		v   any
	}{
		{&out.GoogleSearch, t.GoogleSearch},
		{&out.GoogleSearchRetrieval, t.GoogleSearchRetrieval},
		{&out.CodeExecution, t.CodeExecution},
		{&out.URLContext, t.URLContext},
		{&out.Retrieval, t.Retrieval},
		{&out.EnterpriseWebSearch, t.EnterpriseWebSearch},
		{&out.GoogleMaps, t.GoogleMaps},
		{&out.ComputerUse, t.ComputerUse},
		{&out.FileSearch, t.FileSearch},
	}
	for _, r := range raws {
		if *r.dst, err = toRaw(r.v); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// toolFromABI converts a tool entry; an entry equal to one of base's is
// that entry, with the tools the ABI does not carry.
func toolFromABI(t *abi.Tool, base []*genai.Tool) (*genai.Tool, error) {
	if t == nil {
		return nil, nil
	}
	if key, err := json.Marshal(t); err == nil {
		for _, b := range base {
			if b == nil {
				continue
			}
			if bt, err := toolToABI(b); err == nil {
				if bk, err := json.Marshal(bt); err == nil && bytes.Equal(key, bk) {
					return b, nil
				}
			}
		}
	}
	out := &genai.Tool{}
	if t.FunctionDeclarations != nil {
		out.FunctionDeclarations = make([]*genai.FunctionDeclaration, len(t.FunctionDeclarations))
		for i, d := range t.FunctionDeclarations {
			if d == nil {
				continue
			}
			fd := &genai.FunctionDeclaration{Name: d.Name, Description: d.Description, Behavior: genai.Behavior(d.Behavior)}
			var err error
			if fd.Parameters, err = fromRaw[*genai.Schema](d.Parameters, nil); err != nil {
				return nil, fmt.Errorf("%s parameters: %w", d.Name, err)
			}
			if fd.ParametersJsonSchema, err = fromRaw[any](d.ParametersJSONSchema, nil); err != nil {
				return nil, fmt.Errorf("%s parametersJsonSchema: %w", d.Name, err)
			}
			if fd.Response, err = fromRaw[*genai.Schema](d.Response, nil); err != nil {
				return nil, fmt.Errorf("%s response: %w", d.Name, err)
			}
			if fd.ResponseJsonSchema, err = fromRaw[any](d.ResponseJSONSchema, nil); err != nil {
				return nil, fmt.Errorf("%s responseJsonSchema: %w", d.Name, err)
			}
			out.FunctionDeclarations[i] = fd
		}
	}
	var err error
	if out.GoogleSearch, err = fromRaw[*genai.GoogleSearch](t.GoogleSearch, nil); err != nil {
		return nil, fmt.Errorf("googleSearch: %w", err)
	}
	if out.GoogleSearchRetrieval, err = fromRaw[*genai.GoogleSearchRetrieval](t.GoogleSearchRetrieval, nil); err != nil {
		return nil, fmt.Errorf("googleSearchRetrieval: %w", err)
	}
	if out.CodeExecution, err = fromRaw[*genai.ToolCodeExecution](t.CodeExecution, nil); err != nil {
		return nil, fmt.Errorf("codeExecution: %w", err)
	}
	if out.URLContext, err = fromRaw[*genai.URLContext](t.URLContext, nil); err != nil {
		return nil, fmt.Errorf("urlContext: %w", err)
	}
	if out.Retrieval, err = fromRaw[*genai.Retrieval](t.Retrieval, nil); err != nil {
		return nil, fmt.Errorf("retrieval: %w", err)
	}
	if out.EnterpriseWebSearch, err = fromRaw[*genai.EnterpriseWebSearch](t.EnterpriseWebSearch, nil); err != nil {
		return nil, fmt.Errorf("enterpriseWebSearch: %w", err)
	}
	if out.GoogleMaps, err = fromRaw[*genai.GoogleMaps](t.GoogleMaps, nil); err != nil {
		return nil, fmt.Errorf("googleMaps: %w", err)
	}
	if out.ComputerUse, err = fromRaw[*genai.ComputerUse](t.ComputerUse, nil); err != nil {
		return nil, fmt.Errorf("computerUse: %w", err)
	}
	if out.FileSearch, err = fromRaw[*genai.FileSearch](t.FileSearch, nil); err != nil {
		return nil, fmt.Errorf("fileSearch: %w", err)
	}
	return out, nil
}

// ResponseToABI converts a model response for a guest. Every field of
// model.Response is carried; only the parts lose what ContentToABI leaves
// out. It fails only for a value that does not encode as JSON.
func ResponseToABI(r *model.Response) (*abi.LlmResponse, error) {
	if r == nil {
		return nil, nil
	}
	out := &abi.LlmResponse{}
	if err := responseToABI(r, out); err != nil {
		return nil, err
	}
	return out, nil
}

func responseToABI(r *model.Response, out *abi.LlmResponse) error {
	*out = abi.LlmResponse{
		Content:        ContentToABI(r.Content),
		Partial:        r.Partial,
		TurnComplete:   r.TurnComplete,
		FinishReason:   string(r.FinishReason),
		ErrorCode:      r.ErrorCode,
		ErrorMessage:   r.ErrorMessage,
		Interrupted:    r.Interrupted,
		CustomMetadata: r.CustomMetadata,
		AvgLogprobs:    r.AvgLogprobs,
		InteractionID:  r.InteractionID,
		ModelVersion:   r.ModelVersion,
	}
	if u := r.UsageMetadata; u != nil {
		out.UsageMetadata = &abi.UsageMetadata{
			PromptTokenCount:        int(u.PromptTokenCount),
			CandidatesTokenCount:    int(u.CandidatesTokenCount),
			TotalTokenCount:         int(u.TotalTokenCount),
			CachedContentTokenCount: int(u.CachedContentTokenCount),
			ThoughtsTokenCount:      int(u.ThoughtsTokenCount),
			ToolUsePromptTokenCount: int(u.ToolUsePromptTokenCount),
			TrafficType:             string(u.TrafficType),
		}
		var err error
		for _, d := range []struct {
			dst *json.RawMessage
			v   []*genai.ModalityTokenCount
		}{
			{&out.UsageMetadata.PromptTokensDetails, u.PromptTokensDetails},
			{&out.UsageMetadata.CandidatesTokensDetails, u.CandidatesTokensDetails},
			{&out.UsageMetadata.CacheTokensDetails, u.CacheTokensDetails},
			{&out.UsageMetadata.ToolUsePromptTokensDetails, u.ToolUsePromptTokensDetails},
		} {
			if *d.dst, err = toRaw(d.v); err != nil {
				return fmt.Errorf("usageMetadata: %w", err)
			}
		}
	}
	if c := r.CacheMetadata; c != nil {
		out.CacheMetadata = &abi.CacheMetadata{
			CacheName:       c.CacheName,
			ExpireTime:      c.ExpireTime,
			Fingerprint:     c.FingerPrint,
			InvocationsUsed: c.InvocationsUsed,
			ContentsCount:   c.ContentsCount,
			CreatedAt:       c.CreatedAt,
		}
	}
	var err error
	for _, f := range []struct {
		name string
		dst  *json.RawMessage
		v    any
	}{
		{"groundingMetadata", &out.GroundingMetadata, r.GroundingMetadata},
		{"inputTranscription", &out.InputTranscription, r.InputTranscription},
		{"outputTranscription", &out.OutputTranscription, r.OutputTranscription},
		{"logprobsResult", &out.LogprobsResult, r.LogprobsResult},
		{"citationMetadata", &out.CitationMetadata, r.CitationMetadata},
	} {
		if *f.dst, err = toRaw(f.v); err != nil {
			return fmt.Errorf("%s: %w", f.name, err)
		}
	}
	return nil
}

// ResponseFromABI converts a response a guest sent. base is the response
// it replaces, or nil; its content, parts and pass-through values that the
// guest sent back unchanged are kept as they are. base is not modified.
func ResponseFromABI(r *abi.LlmResponse, base *model.Response) (*model.Response, error) {
	if r == nil {
		return nil, nil
	}
	out := &model.Response{}
	var rc *genai.Content
	if base != nil {
		rc = base.Content
	}
	if err := responseFromABI(r, base, newReuse(rc), out); err != nil {
		return nil, err
	}
	return out, nil
}

func responseFromABI(r *abi.LlmResponse, base *model.Response, reuse *reuse, out *model.Response) error {
	if base == nil {
		base = &model.Response{}
	}
	content, err := reuse.content(r.Content)
	if err != nil {
		return fmt.Errorf("content: %w", err)
	}
	*out = model.Response{
		Content:        content,
		Partial:        r.Partial,
		TurnComplete:   r.TurnComplete,
		FinishReason:   genai.FinishReason(r.FinishReason),
		ErrorCode:      r.ErrorCode,
		ErrorMessage:   r.ErrorMessage,
		Interrupted:    r.Interrupted,
		CustomMetadata: r.CustomMetadata,
		AvgLogprobs:    r.AvgLogprobs,
		InteractionID:  r.InteractionID,
		ModelVersion:   r.ModelVersion,
	}
	if u := r.UsageMetadata; u != nil {
		um := &genai.GenerateContentResponseUsageMetadata{
			PromptTokenCount:        int32(u.PromptTokenCount),
			CandidatesTokenCount:    int32(u.CandidatesTokenCount),
			TotalTokenCount:         int32(u.TotalTokenCount),
			CachedContentTokenCount: int32(u.CachedContentTokenCount),
			ThoughtsTokenCount:      int32(u.ThoughtsTokenCount),
			ToolUsePromptTokenCount: int32(u.ToolUsePromptTokenCount),
			TrafficType:             genai.TrafficType(u.TrafficType),
		}
		bu := base.UsageMetadata
		if bu == nil {
			bu = &genai.GenerateContentResponseUsageMetadata{}
		}
		for _, d := range []struct {
			name string
			raw  json.RawMessage
			base []*genai.ModalityTokenCount
			dst  *[]*genai.ModalityTokenCount
		}{
			{"promptTokensDetails", u.PromptTokensDetails, bu.PromptTokensDetails, &um.PromptTokensDetails},
			{"candidatesTokensDetails", u.CandidatesTokensDetails, bu.CandidatesTokensDetails, &um.CandidatesTokensDetails},
			{"cacheTokensDetails", u.CacheTokensDetails, bu.CacheTokensDetails, &um.CacheTokensDetails},
			{"toolUsePromptTokensDetails", u.ToolUsePromptTokensDetails, bu.ToolUsePromptTokensDetails, &um.ToolUsePromptTokensDetails},
		} {
			if *d.dst, err = fromRaw(d.raw, d.base); err != nil {
				return fmt.Errorf("usageMetadata %s: %w", d.name, err)
			}
		}
		out.UsageMetadata = um
	}
	if c := r.CacheMetadata; c != nil {
		out.CacheMetadata = &model.CacheMetadata{
			CacheName:       c.CacheName,
			ExpireTime:      c.ExpireTime,
			FingerPrint:     c.Fingerprint,
			InvocationsUsed: c.InvocationsUsed,
			ContentsCount:   c.ContentsCount,
			CreatedAt:       c.CreatedAt,
		}
	}
	if out.GroundingMetadata, err = fromRaw(r.GroundingMetadata, base.GroundingMetadata); err != nil {
		return fmt.Errorf("groundingMetadata: %w", err)
	}
	if out.InputTranscription, err = fromRaw(r.InputTranscription, base.InputTranscription); err != nil {
		return fmt.Errorf("inputTranscription: %w", err)
	}
	if out.OutputTranscription, err = fromRaw(r.OutputTranscription, base.OutputTranscription); err != nil {
		return fmt.Errorf("outputTranscription: %w", err)
	}
	if out.LogprobsResult, err = fromRaw(r.LogprobsResult, base.LogprobsResult); err != nil {
		return fmt.Errorf("logprobsResult: %w", err)
	}
	if out.CitationMetadata, err = fromRaw(r.CitationMetadata, base.CitationMetadata); err != nil {
		return fmt.Errorf("citationMetadata: %w", err)
	}
	return nil
}

// EventToABI converts an event for a guest. NodeInfo is not carried; the
// timestamp becomes float seconds, to the microsecond as google-adk stores
// it. It fails only for a value that does not encode as JSON.
func EventToABI(e *session.Event) (*abi.Event, error) {
	if e == nil {
		return nil, nil
	}
	out := &abi.Event{
		ID:                 e.ID,
		InvocationID:       e.InvocationID,
		Author:             e.Author,
		Branch:             e.Branch,
		LongRunningToolIDs: e.LongRunningToolIDs,
		Timestamp:          session.TimeToFloat(e.Timestamp),
	}
	if err := responseToABI(&e.Response, &out.LlmResponse); err != nil {
		return nil, err
	}
	a := &e.Actions
	out.Actions = abi.EventActions{
		SkipSummarization:        a.SkipSummarization,
		StateDelta:               a.StateDelta,
		ArtifactDelta:            a.ArtifactDelta,
		TransferToAgent:          a.TransferToAgent,
		TransferReason:           a.TransferReason,
		Escalate:                 a.Escalate,
		RequestedAuthConfigs:     a.RequestedAuthConfigs,
		EndOfAgent:               a.EndOfAgent,
		AgentState:               a.AgentState,
		RewindBeforeInvocationID: a.RewindBeforeInvocationID,
		SetModelResponse:         a.SetModelResponse,
	}
	if a.RequestedToolConfirmations != nil {
		m := make(map[string]abi.ToolConfirmation, len(a.RequestedToolConfirmations))
		for k, c := range a.RequestedToolConfirmations {
			m[k] = abi.ToolConfirmation{Hint: c.Hint, Confirmed: c.Confirmed, Payload: c.Payload}
		}
		out.Actions.RequestedToolConfirmations = m
	}
	if c := a.Compaction; c != nil {
		out.Actions.Compaction = &abi.EventCompaction{StartTimestamp: c.StartTimestamp, EndTimestamp: c.EndTimestamp, CompactedContent: ContentToABI(c.CompactedContent)}
	}
	return out, nil
}

// EventFromABI converts an event a guest sent. base is the event it
// replaces, or nil: its NodeInfo is kept, and so is its exact timestamp
// when the guest sent it back unchanged, with the content and pass-through
// values as ResponseFromABI keeps them. base is not modified.
func EventFromABI(e *abi.Event, base *session.Event) (*session.Event, error) {
	if e == nil {
		return nil, nil
	}
	if base == nil {
		base = &session.Event{}
	}
	reuse := newReuse(base.Content)
	if base.Actions.Compaction != nil {
		reuse = newReuse(base.Content, base.Actions.Compaction.CompactedContent)
	}
	out := &session.Event{
		ID:                 e.ID,
		InvocationID:       e.InvocationID,
		Author:             e.Author,
		Branch:             e.Branch,
		LongRunningToolIDs: e.LongRunningToolIDs,
		NodeInfo:           base.NodeInfo,
		Timestamp:          session.FloatToTime(e.Timestamp),
	}
	if e.Timestamp == session.TimeToFloat(base.Timestamp) {
		out.Timestamp = base.Timestamp
	}
	if err := responseFromABI(&e.LlmResponse, &base.Response, reuse, &out.Response); err != nil {
		return nil, fmt.Errorf("event: %w", err)
	}
	a := &e.Actions
	out.Actions = session.EventActions{
		SkipSummarization:        a.SkipSummarization,
		StateDelta:               a.StateDelta,
		ArtifactDelta:            a.ArtifactDelta,
		TransferToAgent:          a.TransferToAgent,
		TransferReason:           a.TransferReason,
		Escalate:                 a.Escalate,
		RequestedAuthConfigs:     a.RequestedAuthConfigs,
		EndOfAgent:               a.EndOfAgent,
		AgentState:               a.AgentState,
		RewindBeforeInvocationID: a.RewindBeforeInvocationID,
		SetModelResponse:         a.SetModelResponse,
	}
	if a.RequestedToolConfirmations != nil {
		m := make(map[string]session.ToolConfirmation, len(a.RequestedToolConfirmations))
		for k, c := range a.RequestedToolConfirmations {
			m[k] = session.ToolConfirmation{Hint: c.Hint, Confirmed: c.Confirmed, Payload: c.Payload}
		}
		out.Actions.RequestedToolConfirmations = m
	}
	if c := a.Compaction; c != nil {
		content, err := reuse.content(c.CompactedContent)
		if err != nil {
			return nil, fmt.Errorf("event compaction: %w", err)
		}
		out.Actions.Compaction = &session.EventCompaction{StartTimestamp: c.StartTimestamp, EndTimestamp: c.EndTimestamp, CompactedContent: content}
	}
	return out, nil
}

// reuse finds the host's own content or part for one a guest sent back
// unchanged, by comparing their ABI encodings. The index is built on first
// use; a nil *reuse finds nothing.
type reuse struct {
	base     []*genai.Content
	built    bool
	contents map[string]*genai.Content
	parts    map[string]*genai.Part
}

func newReuse(base ...*genai.Content) *reuse {
	var bs []*genai.Content
	for _, c := range base {
		if c != nil {
			bs = append(bs, c)
		}
	}
	if len(bs) == 0 {
		return nil
	}
	return &reuse{base: bs}
}

func (r *reuse) build() {
	if r.built {
		return
	}
	r.built = true
	r.contents = map[string]*genai.Content{}
	r.parts = map[string]*genai.Part{}
	for _, c := range r.base {
		if k, err := json.Marshal(ContentToABI(c)); err == nil {
			r.contents[string(k)] = c
		}
		for _, p := range c.Parts {
			if p == nil {
				continue
			}
			if k, err := json.Marshal(PartToABI(p)); err == nil {
				r.parts[string(k)] = p
			}
		}
	}
}

func (r *reuse) content(c *abi.Content) (*genai.Content, error) {
	if c == nil {
		return nil, nil
	}
	if r != nil {
		r.build()
		if k, err := json.Marshal(c); err == nil {
			if orig, ok := r.contents[string(k)]; ok {
				return orig, nil
			}
		}
	}
	out := &genai.Content{Role: c.Role}
	if c.Parts != nil {
		out.Parts = make([]*genai.Part, len(c.Parts))
		for i, p := range c.Parts {
			var err error
			if out.Parts[i], err = r.part(p); err != nil {
				return nil, fmt.Errorf("parts[%d]: %w", i, err)
			}
		}
	}
	return out, nil
}

func (r *reuse) part(p *abi.Part) (*genai.Part, error) {
	if p == nil {
		return nil, nil
	}
	if r != nil {
		r.build()
		if k, err := json.Marshal(p); err == nil {
			if orig, ok := r.parts[string(k)]; ok {
				return orig, nil
			}
		}
	}
	return partFromABI(p)
}

// toRaw encodes a pass-through value; nil (JSON null) becomes absent.
func toRaw(v any) (json.RawMessage, error) {
	if nilPassThrough(v) {
		return nil, nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	if string(b) == "null" {
		return nil, nil
	}
	return b, nil
}

// fromRaw decodes a pass-through value a guest sent: base, the host's value,
// when raw is what base encodes to, so an unchanged value keeps what JSON
// cannot carry (Go types of an any, sub-second durations); otherwise a new
// value. Absent or null is the zero T.
func fromRaw[T any](raw json.RawMessage, base T) (T, error) {
	var zero T
	if len(raw) == 0 || string(raw) == "null" {
		return zero, nil
	}
	if b, err := json.Marshal(base); err == nil && string(b) != "null" {
		var compact bytes.Buffer
		if json.Compact(&compact, raw) == nil && bytes.Equal(b, compact.Bytes()) {
			return base, nil
		}
	}
	var v T
	if err := json.Unmarshal(raw, &v); err != nil {
		return zero, err
	}
	return v, nil
}

// f32to64 widens genai's float32 through its shortest decimal form, so a
// guest sees 0.7, not 0.699999988079071; f64to32 narrows it back exactly.
func f32to64(f *float32) *float64 {
	if f == nil {
		return nil
	}
	v, _ := strconv.ParseFloat(strconv.FormatFloat(float64(*f), 'g', -1, 32), 64)
	return &v
}

func f64to32(f *float64) *float32 {
	if f == nil {
		return nil
	}
	v, _ := strconv.ParseFloat(strconv.FormatFloat(*f, 'g', -1, 64), 32)
	r := float32(v)
	return &r
}

// MemoryToABI converts a memory search result for a guest: the same JSON
// as memory.SearchResponse's, with each content as ContentToABI has it. A
// nil response is one without memories.
func MemoryToABI(r *memory.SearchResponse) *abi.SearchMemoryResponse {
	out := &abi.SearchMemoryResponse{Memories: []abi.MemoryEntry{}}
	if r == nil {
		return out
	}
	for _, e := range r.Memories {
		out.Memories = append(out.Memories, abi.MemoryEntry{
			Content:        ContentToABI(e.Content),
			CustomMetadata: e.CustomMetadata,
			ID:             e.ID,
			Author:         e.Author,
			Timestamp:      e.Timestamp,
		})
	}
	return out
}

// nilPassThrough reports whether json.Marshal encodes v as null without
// calling anything of v's: nil, a nil pointer (encoding/json writes null
// for one without calling its MarshalJSON), or a nil slice or map whose
// type has no MarshalJSON. Most pass-through fields of a part, a request's
// config, a tool or a response are nil, and each was a reflective Marshal
// and an allocation: for every part of every content a callback is sent.
func nilPassThrough(v any) bool {
	if v == nil {
		return true
	}
	rv := reflect.ValueOf(v)
	switch rv.Kind() {
	case reflect.Pointer:
		return rv.IsNil()
	case reflect.Slice, reflect.Map:
		return rv.IsNil() && !rv.Type().Implements(jsonMarshaler)
	}
	return false
}

var jsonMarshaler = reflect.TypeFor[json.Marshaler]()
