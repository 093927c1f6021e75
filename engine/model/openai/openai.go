// Package openai is a model.Model backed by an OpenAI-compatible
// chat-completions endpoint: OpenAI itself, Ollama, vLLM, the llama.cpp
// server and the like.
//
// It talks to the server through the official client library,
// github.com/openai/openai-go/v3: it is maintained by OpenAI against the
// published API, handles the SSE framing, retries and auth, and keeps the
// wire types in step with the API, which a third-party client or our own
// HTTP code would have to chase. Only its chat-completions service is used,
// built directly so that no OPENAI_* environment variable changes where
// requests go or which key they carry.
package openai

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"net/http"

	oai "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"google.golang.org/genai"

	"github.com/adkhost/adkhost/engine/model"
	"github.com/adkhost/adkhost/engine/model/streaming"
)

// DefaultBaseURL is OpenAI's API, used when Config.BaseURL is empty.
const DefaultBaseURL = "https://api.openai.com/v1"

// Config says which model to call and how to reach it.
type Config struct {
	// Model is the default model name, used when a Request names none,
	// e.g. "gpt-4o-mini" or "llama3.2". Required.
	Model string
	// BaseURL is the API root the "/chat/completions" path is added to,
	// e.g. "http://localhost:11434/v1" for Ollama. Empty means
	// DefaultBaseURL.
	BaseURL string
	// APIKey is sent as a bearer token. Empty sends none, which local
	// servers accept; it is not read from the environment.
	APIKey string
	// HTTPClient sends the requests; nil means a client without timeout
	// (calls are bounded by their context).
	HTTPClient *http.Client
	// Headers are added to every request.
	Headers http.Header
	// MaxRetries is how often a failed call (connection error, 408, 409,
	// 429, 5xx) is retried with backoff; 0 means never, as in google-adk.
	MaxRetries int
	// UseMaxCompletionTokens sends max_output_tokens as
	// max_completion_tokens, which OpenAI's reasoning models require,
	// instead of max_tokens, which every compatible server understands.
	UseMaxCompletionTokens bool
	// NewFunctionCallID makes ids for function calls the server sent
	// without one; nil means streaming.NewClientFunctionCallID.
	NewFunctionCallID func() string
}

// Model calls a chat-completions endpoint. It is safe for concurrent use.
type Model struct {
	name                string
	chat                oai.ChatCompletionService
	newID               func() string
	maxCompletionTokens bool
}

var _ model.Model = (*Model)(nil)

// New returns a Model for cfg.
func New(cfg Config) (*Model, error) {
	if cfg.Model == "" {
		return nil, errors.New("openai: Config.Model is required")
	}
	if cfg.MaxRetries < 0 {
		return nil, fmt.Errorf("openai: Config.MaxRetries is negative (%d)", cfg.MaxRetries)
	}
	base := cfg.BaseURL
	if base == "" {
		base = DefaultBaseURL
	}
	client := cfg.HTTPClient
	if client == nil {
		client = &http.Client{}
	}
	opts := []option.RequestOption{
		option.WithBaseURL(base),
		option.WithHTTPClient(client),
		option.WithMaxRetries(cfg.MaxRetries),
	}
	if cfg.APIKey != "" {
		opts = append(opts, option.WithAPIKey(cfg.APIKey))
	}
	for k, vs := range cfg.Headers {
		for _, v := range vs {
			opts = append(opts, option.WithHeaderAdd(k, v))
		}
	}
	newID := cfg.NewFunctionCallID
	if newID == nil {
		newID = streaming.NewClientFunctionCallID
	}
	return &Model{
		name:                cfg.Model,
		chat:                oai.NewChatCompletionService(opts...),
		newID:               newID,
		maxCompletionTokens: cfg.UseMaxCompletionTokens,
	}, nil
}

// Name returns the configured model name.
func (m *Model) Name() string { return m.name }

// GenerateContent sends req as a chat completion. Without stream it yields
// one response. With stream it yields a partial response for every chunk
// that brings text, one partial response with the function calls once
// their streamed arguments are complete, and then the aggregated final
// response (see streaming.Aggregator), whose usage is the one the stream
// reported last. Server failures come back as *APIError. req is not
// modified.
func (m *Model) GenerateContent(ctx context.Context, req *model.Request, stream bool) iter.Seq2[*model.Response, error] {
	return func(yield func(*model.Response, error) bool) {
		if req == nil {
			yield(nil, errors.New("openai: nil request"))
			return
		}
		name := req.Model
		if name == "" {
			name = m.name
		}
		params, err := m.buildParams(req, name)
		if err != nil {
			yield(nil, err)
			return
		}
		var eb errorBody
		if !stream {
			completion, err := m.chat.New(ctx, params, eb.middleware())
			if err != nil {
				yield(nil, wrapError(ctx, name, err, &eb))
				return
			}
			resp, err := m.fromCompletion(completion)
			if err != nil {
				yield(nil, fmt.Errorf("openai: model %q: %w", name, err))
				return
			}
			yield(resp, nil)
			return
		}
		m.stream(ctx, name, params, &eb, yield)
	}
}

func (m *Model) stream(ctx context.Context, name string, params oai.ChatCompletionNewParams, eb *errorBody, yield func(*model.Response, error) bool) {
	// Without include_usage the stream carries no token counts.
	params.StreamOptions.IncludeUsage = oai.Bool(true)
	s := m.chat.NewStreaming(ctx, params, eb.middleware())
	defer s.Close()

	agg := streaming.New(m.newID)
	var calls toolCallAssembler
	var usage *genai.GenerateContentResponseUsageMetadata
	var version string
	for s.Next() {
		chunk := s.Current()
		if chunk.Model != "" {
			version = chunk.Model
		}
		if chunk.JSON.Usage.Valid() {
			usage = usageMetadata(chunk.Usage)
		}
		choice, ok := firstChoice(chunk.Choices)
		if !ok {
			continue
		}
		calls.add(choice.Delta.ToolCalls)
		resp := agg.Process(&genai.GenerateContentResponse{
			ModelVersion: chunk.Model,
			Candidates: []*genai.Candidate{{
				Content:      &genai.Content{Role: genai.RoleModel, Parts: deltaParts(choice.Delta)},
				FinishReason: finishReason(choice.FinishReason),
			}},
		})
		// Role-only and finish-only chunks still go through the
		// aggregator, for the finish reason, but say nothing new.
		if resp.Content == nil || len(resp.Content.Parts) == 0 {
			continue
		}
		if !yield(resp, nil) {
			return
		}
	}
	if err := s.Err(); err != nil {
		yield(nil, wrapError(ctx, name, err, eb))
		return
	}
	if err := ctx.Err(); err != nil {
		yield(nil, fmt.Errorf("openai: model %q: %w", name, err))
		return
	}
	if parts, err := calls.parts(m.newID); err != nil {
		yield(nil, fmt.Errorf("openai: model %q: %w", name, err))
		return
	} else if len(parts) > 0 {
		resp := agg.Process(&genai.GenerateContentResponse{
			ModelVersion: version,
			Candidates:   []*genai.Candidate{{Content: &genai.Content{Role: genai.RoleModel, Parts: parts}}},
		})
		if !yield(resp, nil) {
			return
		}
	}
	if final := agg.Close(); final != nil {
		if usage != nil {
			final.UsageMetadata = usage
		}
		yield(final, nil)
	}
}
