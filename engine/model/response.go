package model

import (
	"encoding/json"

	"google.golang.org/genai"
)

// Response is one answer, or one streamed piece of an answer, from a model
// (google-adk's LlmResponse). Its JSON is google-adk's camelCase wire format.
type Response struct {
	Content           *genai.Content           `json:"content,omitempty"`
	GroundingMetadata *genai.GroundingMetadata `json:"groundingMetadata,omitempty"`
	Partial           bool                     `json:"partial,omitempty"`
	// Aggregated marks the final response of a streamed call, which holds
	// what its partial responses streamed: google-adk's explicit
	// partial=False, which its JSON writes as "partial": false (Partial
	// is then false). A response that was not streamed has neither flag.
	Aggregated          bool                                        `json:"-"`
	TurnComplete        bool                                        `json:"turnComplete,omitempty"`
	FinishReason        genai.FinishReason                          `json:"finishReason,omitempty"`
	ErrorCode           string                                      `json:"errorCode,omitempty"`
	ErrorMessage        string                                      `json:"errorMessage,omitempty"`
	Interrupted         bool                                        `json:"interrupted,omitempty"`
	CustomMetadata      map[string]any                              `json:"customMetadata,omitzero"`
	UsageMetadata       *genai.GenerateContentResponseUsageMetadata `json:"usageMetadata,omitempty"`
	InputTranscription  *genai.Transcription                        `json:"inputTranscription,omitempty"`
	OutputTranscription *genai.Transcription                        `json:"outputTranscription,omitempty"`
	AvgLogprobs         float64                                     `json:"avgLogprobs,omitempty"`
	LogprobsResult      *genai.LogprobsResult                       `json:"logprobsResult,omitempty"`
	CacheMetadata       *CacheMetadata                              `json:"cacheMetadata,omitempty"`
	CitationMetadata    *genai.CitationMetadata                     `json:"citationMetadata,omitempty"`
	InteractionID       string                                      `json:"interactionId,omitempty"`
	ModelVersion        string                                      `json:"modelVersion,omitempty"`
	// KeyOrder keeps, by index in Content.Parts, the order of the dict keys
	// of a function call's args or a function response's response, which
	// their Go maps lost: the skeleton of the JSON they were decoded from
	// (keys and nesting, scalars 0), nil for a part whose objects all have
	// sorted keys, or whose order is unknown. google-adk formats these
	// dicts into text in their order (another agent's calls relayed as
	// context). It is advisory: a dict whose keys no longer match prints
	// sorted. session.Event's JSON writes the maps in this order and reads
	// it back.
	KeyOrder []json.RawMessage `json:"-"`
}

// PartKeyOrder returns the key-order hint of part i, or nil.
func (r *Response) PartKeyOrder(i int) json.RawMessage {
	if r == nil || i < 0 || i >= len(r.KeyOrder) {
		return nil
	}
	return r.KeyOrder[i]
}

// SetPartKeyOrder sets the key-order hint of part i.
func (r *Response) SetPartKeyOrder(i int, hint json.RawMessage) {
	if hint == nil && i >= len(r.KeyOrder) {
		return
	}
	if i >= len(r.KeyOrder) {
		r.KeyOrder = append(r.KeyOrder, make([]json.RawMessage, i+1-len(r.KeyOrder))...)
	}
	r.KeyOrder[i] = hint
}

// CacheMetadata describes a context cache used for a response.
type CacheMetadata struct {
	CacheName       string  `json:"cacheName,omitempty"`
	ExpireTime      float64 `json:"expireTime,omitempty"`
	FingerPrint     string  `json:"fingerprint,omitempty"`
	InvocationsUsed int     `json:"invocationsUsed,omitempty"`
	ContentsCount   int     `json:"contentsCount,omitempty"`
	CreatedAt       float64 `json:"createdAt,omitempty"`
}

// FromGenerateContentResponse converts a genai response the way google-adk's
// LlmResponse.create does: the first candidate's content, or an error code
// and message taken from the finish reason or prompt feedback, or an empty
// model content when there is neither a candidate nor prompt feedback.
func FromGenerateContentResponse(r *genai.GenerateContentResponse) *Response {
	if r == nil {
		r = &genai.GenerateContentResponse{}
	}
	out := &Response{UsageMetadata: r.UsageMetadata, ModelVersion: r.ModelVersion}
	if len(r.Candidates) > 0 && r.Candidates[0] != nil {
		c := r.Candidates[0]
		out.FinishReason = c.FinishReason
		out.CitationMetadata = c.CitationMetadata
		out.AvgLogprobs = c.AvgLogprobs
		out.LogprobsResult = c.LogprobsResult
		if (c.Content != nil && len(c.Content.Parts) > 0) || c.FinishReason == genai.FinishReasonStop {
			out.Content = c.Content
			out.GroundingMetadata = c.GroundingMetadata
			return out
		}
		// google-adk leaves grounding metadata out of the error response.
		out.ErrorCode = string(c.FinishReason)
		out.ErrorMessage = c.FinishMessage
		return out
	}
	if r.PromptFeedback != nil {
		out.ErrorCode = string(r.PromptFeedback.BlockReason)
		out.ErrorMessage = r.PromptFeedback.BlockReasonMessage
		return out
	}
	// No candidates and no prompt feedback: google-adk 2.13 treats this as a
	// successful empty turn (e.g. tool-driven turns with no text), not an error.
	out.Content = &genai.Content{Role: genai.RoleModel, Parts: []*genai.Part{}}
	return out
}
