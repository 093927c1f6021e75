package abi

import "encoding/json"

// The types in this file mirror the engine's types in google-adk's camelCase
// wire format (the JSON google-adk writes for an Event or an LlmRequest), so
// a guest that knows google-adk's JSON knows these. They carry the fields a
// v1 guest can read and write; a field of genai that is not named here is not
// sent to the guest, and when a guest returns a replacement value the host
// keeps its own value of such fields. Shapes the ABI passes through without
// interpreting (schemas, grounding metadata) are json.RawMessage.

// Content is a message of the conversation (genai.Content).
type Content struct {
	// Role is "user" or "model".
	Role  string  `json:"role,omitempty"`
	Parts []*Part `json:"parts,omitempty"`
}

// Part is one piece of a Content (genai.Part); one of its data fields is set.
type Part struct {
	Text                string               `json:"text,omitempty"`
	Thought             bool                 `json:"thought,omitempty"`
	ThoughtSignature    []byte               `json:"thoughtSignature,omitempty"`
	InlineData          *Blob                `json:"inlineData,omitempty"`
	FileData            *FileData            `json:"fileData,omitempty"`
	FunctionCall        *FunctionCall        `json:"functionCall,omitempty"`
	FunctionResponse    *FunctionResponse    `json:"functionResponse,omitempty"`
	ExecutableCode      *ExecutableCode      `json:"executableCode,omitempty"`
	CodeExecutionResult *CodeExecutionResult `json:"codeExecutionResult,omitempty"`
	VideoMetadata       json.RawMessage      `json:"videoMetadata,omitempty"`
}

// Blob is inline binary data; Data is base64 in JSON.
type Blob struct {
	MIMEType    string `json:"mimeType,omitempty"`
	Data        []byte `json:"data,omitempty"`
	DisplayName string `json:"displayName,omitempty"`
}

// FileData refers to data by URI.
type FileData struct {
	MIMEType    string `json:"mimeType,omitempty"`
	FileURI     string `json:"fileUri,omitempty"`
	DisplayName string `json:"displayName,omitempty"`
}

// FunctionCall is the model asking for a tool.
type FunctionCall struct {
	ID   string         `json:"id,omitempty"`
	Name string         `json:"name,omitempty"`
	Args map[string]any `json:"args,omitempty"`
}

// FunctionResponse is a tool's answer.
type FunctionResponse struct {
	ID           string         `json:"id,omitempty"`
	Name         string         `json:"name,omitempty"`
	Response     map[string]any `json:"response,omitempty"`
	WillContinue *bool          `json:"willContinue,omitempty"`
}

// ExecutableCode is code the model generated for a code executor.
type ExecutableCode struct {
	Code     string `json:"code,omitempty"`
	Language string `json:"language,omitempty"`
}

// CodeExecutionResult is the outcome of running ExecutableCode.
type CodeExecutionResult struct {
	Outcome string `json:"outcome,omitempty"`
	Output  string `json:"output,omitempty"`
}

// InvocationInfo says which invocation a call belongs to (google-adk's
// ReadonlyContext). Every hook input carries it as "context"; the
// invocation_info host function returns it too.
type InvocationInfo struct {
	AppName      string `json:"appName"`
	UserID       string `json:"userId"`
	SessionID    string `json:"sessionId"`
	InvocationID string `json:"invocationId"`
	// AgentName is the agent running; Branch its dot-separated path.
	AgentName string `json:"agentName"`
	Branch    string `json:"branch,omitempty"`
	// FunctionCallID is set in tool calls and tool hooks.
	FunctionCallID string `json:"functionCallId,omitempty"`
	// UserContent is the user message that started the invocation.
	UserContent *Content `json:"userContent,omitempty"`
}

// LlmRequest is one call to a model (google-adk's LlmRequest).
type LlmRequest struct {
	Model    string                 `json:"model,omitempty"`
	Contents []*Content             `json:"contents,omitempty"`
	Config   *GenerateContentConfig `json:"config,omitempty"`
}

// GenerateContentConfig is the part of genai.GenerateContentConfig a v1
// guest sees and may change.
type GenerateContentConfig struct {
	SystemInstruction  *Content          `json:"systemInstruction,omitempty"`
	Temperature        *float64          `json:"temperature,omitempty"`
	TopP               *float64          `json:"topP,omitempty"`
	TopK               *float64          `json:"topK,omitempty"`
	CandidateCount     int               `json:"candidateCount,omitempty"`
	MaxOutputTokens    int               `json:"maxOutputTokens,omitempty"`
	StopSequences      []string          `json:"stopSequences,omitempty"`
	PresencePenalty    *float64          `json:"presencePenalty,omitempty"`
	FrequencyPenalty   *float64          `json:"frequencyPenalty,omitempty"`
	Seed               *int              `json:"seed,omitempty"`
	ResponseMIMEType   string            `json:"responseMimeType,omitempty"`
	ResponseSchema     json.RawMessage   `json:"responseSchema,omitempty"`
	ResponseJSONSchema json.RawMessage   `json:"responseJsonSchema,omitempty"`
	ResponseModalities []string          `json:"responseModalities,omitempty"`
	Tools              []*Tool           `json:"tools,omitempty"`
	ToolConfig         json.RawMessage   `json:"toolConfig,omitempty"`
	SafetySettings     json.RawMessage   `json:"safetySettings,omitempty"`
	Labels             map[string]string `json:"labels,omitempty"`
	CachedContent      string            `json:"cachedContent,omitempty"`
	ThinkingConfig     *ThinkingConfig   `json:"thinkingConfig,omitempty"`
}

// ThinkingConfig controls the model's thinking.
type ThinkingConfig struct {
	IncludeThoughts bool   `json:"includeThoughts,omitempty"`
	ThinkingBudget  *int   `json:"thinkingBudget,omitempty"`
	ThinkingLevel   string `json:"thinkingLevel,omitempty"`
}

// Tool is one entry of GenerateContentConfig.Tools: function declarations,
// or one of the model's built-in tools, passed through as genai writes it.
type Tool struct {
	FunctionDeclarations  []*FunctionDeclaration `json:"functionDeclarations,omitempty"`
	GoogleSearch          json.RawMessage        `json:"googleSearch,omitempty"`
	GoogleSearchRetrieval json.RawMessage        `json:"googleSearchRetrieval,omitempty"`
	CodeExecution         json.RawMessage        `json:"codeExecution,omitempty"`
	URLContext            json.RawMessage        `json:"urlContext,omitempty"`
	Retrieval             json.RawMessage        `json:"retrieval,omitempty"`
	EnterpriseWebSearch   json.RawMessage        `json:"enterpriseWebSearch,omitempty"`
	GoogleMaps            json.RawMessage        `json:"googleMaps,omitempty"`
	ComputerUse           json.RawMessage        `json:"computerUse,omitempty"`
	FileSearch            json.RawMessage        `json:"fileSearch,omitempty"`
}

// FunctionDeclaration is what the model sees of a tool.
type FunctionDeclaration struct {
	Name                 string          `json:"name,omitempty"`
	Description          string          `json:"description,omitempty"`
	Parameters           json.RawMessage `json:"parameters,omitempty"`
	ParametersJSONSchema json.RawMessage `json:"parametersJsonSchema,omitempty"`
	Response             json.RawMessage `json:"response,omitempty"`
	ResponseJSONSchema   json.RawMessage `json:"responseJsonSchema,omitempty"`
	Behavior             string          `json:"behavior,omitempty"`
}

// LlmResponse is a model's answer or one streamed piece of it (google-adk's
// LlmResponse).
type LlmResponse struct {
	Content             *Content        `json:"content,omitempty"`
	GroundingMetadata   json.RawMessage `json:"groundingMetadata,omitempty"`
	Partial             bool            `json:"partial,omitempty"`
	TurnComplete        bool            `json:"turnComplete,omitempty"`
	FinishReason        string          `json:"finishReason,omitempty"`
	ErrorCode           string          `json:"errorCode,omitempty"`
	ErrorMessage        string          `json:"errorMessage,omitempty"`
	Interrupted         bool            `json:"interrupted,omitempty"`
	CustomMetadata      map[string]any  `json:"customMetadata,omitzero"`
	UsageMetadata       *UsageMetadata  `json:"usageMetadata,omitempty"`
	InputTranscription  json.RawMessage `json:"inputTranscription,omitempty"`
	OutputTranscription json.RawMessage `json:"outputTranscription,omitempty"`
	AvgLogprobs         float64         `json:"avgLogprobs,omitempty"`
	LogprobsResult      json.RawMessage `json:"logprobsResult,omitempty"`
	CacheMetadata       *CacheMetadata  `json:"cacheMetadata,omitempty"`
	CitationMetadata    json.RawMessage `json:"citationMetadata,omitempty"`
	InteractionID       string          `json:"interactionId,omitempty"`
	ModelVersion        string          `json:"modelVersion,omitempty"`
}

// UsageMetadata counts the tokens of a model call.
type UsageMetadata struct {
	PromptTokenCount           int             `json:"promptTokenCount,omitempty"`
	CandidatesTokenCount       int             `json:"candidatesTokenCount,omitempty"`
	TotalTokenCount            int             `json:"totalTokenCount,omitempty"`
	CachedContentTokenCount    int             `json:"cachedContentTokenCount,omitempty"`
	ThoughtsTokenCount         int             `json:"thoughtsTokenCount,omitempty"`
	ToolUsePromptTokenCount    int             `json:"toolUsePromptTokenCount,omitempty"`
	PromptTokensDetails        json.RawMessage `json:"promptTokensDetails,omitempty"`
	CandidatesTokensDetails    json.RawMessage `json:"candidatesTokensDetails,omitempty"`
	CacheTokensDetails         json.RawMessage `json:"cacheTokensDetails,omitempty"`
	ToolUsePromptTokensDetails json.RawMessage `json:"toolUsePromptTokensDetails,omitempty"`
	TrafficType                string          `json:"trafficType,omitempty"`
}

// CacheMetadata describes a context cache used for a response.
type CacheMetadata struct {
	CacheName       string  `json:"cacheName,omitempty"`
	ExpireTime      float64 `json:"expireTime,omitempty"`
	Fingerprint     string  `json:"fingerprint,omitempty"`
	InvocationsUsed int     `json:"invocationsUsed,omitempty"`
	ContentsCount   int     `json:"contentsCount,omitempty"`
	CreatedAt       float64 `json:"createdAt,omitempty"`
}

// Event is one entry of a session's history (google-adk's Event, which
// extends LlmResponse). Timestamp is float seconds since the Unix epoch.
type Event struct {
	LlmResponse
	ID           string       `json:"id"`
	InvocationID string       `json:"invocationId"`
	Author       string       `json:"author"`
	Branch       string       `json:"branch,omitempty"`
	Actions      EventActions `json:"actions"`
	// LongRunningToolIDs lists the function call ids of long-running tools.
	LongRunningToolIDs []string `json:"longRunningToolIds,omitempty"`
	Timestamp          float64  `json:"timestamp"`
}

// EventActions are the side effects an event carries (google-adk's
// EventActions).
type EventActions struct {
	SkipSummarization          bool                        `json:"skipSummarization,omitempty"`
	StateDelta                 map[string]any              `json:"stateDelta,omitzero"`
	ArtifactDelta              map[string]int              `json:"artifactDelta,omitempty"`
	TransferToAgent            string                      `json:"transferToAgent,omitempty"`
	TransferReason             string                      `json:"transferReason,omitempty"`
	Escalate                   bool                        `json:"escalate,omitempty"`
	RequestedAuthConfigs       map[string]any              `json:"requestedAuthConfigs,omitzero"`
	RequestedToolConfirmations map[string]ToolConfirmation `json:"requestedToolConfirmations,omitempty"`
	Compaction                 *EventCompaction            `json:"compaction,omitempty"`
	EndOfAgent                 bool                        `json:"endOfAgent,omitempty"`
	AgentState                 map[string]any              `json:"agentState,omitzero"`
	RewindBeforeInvocationID   string                      `json:"rewindBeforeInvocationId,omitempty"`
	SetModelResponse           any                         `json:"setModelResponse,omitempty"`
}

// ToolConfirmation is a tool's request for, or the user's answer to, a
// confirmation prompt.
type ToolConfirmation struct {
	Hint      string `json:"hint"`
	Confirmed bool   `json:"confirmed"`
	Payload   any    `json:"payload,omitempty"`
}

// EventCompaction replaces the events between two timestamps with a summary.
type EventCompaction struct {
	StartTimestamp   float64  `json:"startTimestamp"`
	EndTimestamp     float64  `json:"endTimestamp"`
	CompactedContent *Content `json:"compactedContent"`
}
