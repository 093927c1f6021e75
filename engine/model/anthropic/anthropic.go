// Package anthropic is a model.Model backed by Anthropic's Messages API
// (Claude), mapped as google-adk's Claude model class
// (google/adk/models/anthropic_llm.py) maps requests, answers, streams and
// errors.
//
// It talks to the API through the official client library,
// github.com/anthropics/anthropic-sdk-go, which follows the published API
// and handles the SSE framing, retries and auth. Only its Messages service
// is used, built directly so that no ANTHROPIC_* environment variable or
// configuration file changes where requests go or which key they carry.
package anthropic

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"net/http"
	"regexp"
	"strings"

	ant "github.com/anthropics/anthropic-sdk-go"
	"github.com/anthropics/anthropic-sdk-go/option"

	"github.com/adkhost/adkhost/engine/model"
)

// DefaultBaseURL is Anthropic's API, used when Config.BaseURL is empty.
const DefaultBaseURL = "https://api.anthropic.com/"

// DefaultMaxTokens is max_tokens when the request sets no
// max_output_tokens, google-adk's AnthropicLlm.max_tokens.
const DefaultMaxTokens = 8192

// DefaultMaxRetries is how often the client library retries a failed call
// by default, which google-adk's client (the Python library's default)
// does too.
const DefaultMaxRetries = 2

// Config says which model to call and how to reach it.
type Config struct {
	// Model is the default model name, used when a Request names none,
	// e.g. "claude-sonnet-4-5". Required.
	Model string
	// APIKey is sent as x-api-key. Required unless AuthToken is set; it
	// is not read from the environment.
	APIKey string
	// AuthToken is sent as a bearer token instead of an API key (a
	// gateway's or ANTHROPIC_AUTH_TOKEN's credential).
	AuthToken string
	// BaseURL is the API root "v1/messages" is added to. Empty means
	// DefaultBaseURL.
	BaseURL string
	// HTTPClient sends the requests; nil means a client without timeout
	// (calls are bounded by their context, and non-streamed calls by the
	// library's 10-minute request timeout).
	HTTPClient *http.Client
	// Headers are added to every request.
	Headers http.Header
	// MaxRetries is how often a failed call (connection error, 408, 409,
	// 429, 5xx) is retried with backoff: 0 means DefaultMaxRetries, as
	// google-adk's client retries; a negative value means never.
	MaxRetries int
	// MaxTokens is max_tokens for requests without max_output_tokens; 0
	// means DefaultMaxTokens.
	MaxTokens int64
}

// Model calls the Messages API. It is safe for concurrent use.
type Model struct {
	name      string
	messages  ant.MessageService
	maxTokens int64
}

var _ model.Model = (*Model)(nil)

// New returns a Model for cfg.
func New(cfg Config) (*Model, error) {
	if cfg.Model == "" {
		return nil, errors.New("anthropic: Config.Model is required")
	}
	if cfg.APIKey == "" && cfg.AuthToken == "" {
		// google-adk fails the same way when the client finds no
		// credential.
		return nil, errors.New("anthropic: no Anthropic credential: set ANTHROPIC_API_KEY to a key from the Anthropic Console (Config.APIKey or Config.AuthToken)")
	}
	if cfg.MaxTokens < 0 {
		return nil, fmt.Errorf("anthropic: Config.MaxTokens is negative (%d)", cfg.MaxTokens)
	}
	base := cfg.BaseURL
	if base == "" {
		base = DefaultBaseURL
	}
	client := cfg.HTTPClient
	if client == nil {
		client = &http.Client{}
	}
	retries := cfg.MaxRetries
	switch {
	case retries == 0:
		retries = DefaultMaxRetries
	case retries < 0:
		retries = 0
	}
	opts := []option.RequestOption{
		option.WithBaseURL(base),
		option.WithHTTPClient(client),
		option.WithMaxRetries(retries),
	}
	if cfg.APIKey != "" {
		opts = append(opts, option.WithAPIKey(cfg.APIKey))
	}
	if cfg.AuthToken != "" {
		opts = append(opts, option.WithAuthToken(cfg.AuthToken))
	}
	for k, vs := range cfg.Headers {
		for _, v := range vs {
			opts = append(opts, option.WithHeaderAdd(k, v))
		}
	}
	maxTokens := cfg.MaxTokens
	if maxTokens == 0 {
		maxTokens = DefaultMaxTokens
	}
	return &Model{name: cfg.Model, messages: ant.NewMessageService(opts...), maxTokens: maxTokens}, nil
}

// Name returns the configured model name.
func (m *Model) Name() string { return m.name }

// vertexModelPath is a Vertex AI path to a Claude model or endpoint; the
// model id is its last segment (google-adk's _resolve_model_name).
var vertexModelPath = regexp.MustCompile(`^projects/[^/]+/locations/[^/]+/(?:publishers/anthropic/models|endpoints)/([^/:]+)`)

// modelName is the model the request is sent to.
func (m *Model) modelName(req *model.Request) string {
	name := req.Model
	if name == "" {
		return m.name
	}
	if strings.HasPrefix(name, "projects/") {
		if sub := vertexModelPath.FindStringSubmatch(name); sub != nil {
			return sub[1]
		}
	}
	// "anthropic/<model>" is LiteLLM's name for the same model.
	return strings.TrimPrefix(name, "anthropic/")
}

// GenerateContent sends req as a Messages API call. Without stream it
// yields one response. With stream it yields partial responses as the
// answer arrives (text and thinking deltas; a function call, with its id
// and name, as soon as its block starts, then with the partial arguments
// each piece of its input brings) and then the aggregated final
// response. Server failures come back as *APIError. req is not modified.
func (m *Model) GenerateContent(ctx context.Context, req *model.Request, stream bool) iter.Seq2[*model.Response, error] {
	return func(yield func(*model.Response, error) bool) {
		if req == nil {
			yield(nil, errors.New("anthropic: nil request"))
			return
		}
		name := m.modelName(req)
		built, err := m.buildParams(req, name)
		if err != nil {
			yield(nil, fmt.Errorf("anthropic: model %q: %w", name, err))
			return
		}
		if !stream {
			msg, err := m.messages.New(ctx, built.params)
			if err != nil {
				yield(nil, wrapError(ctx, name, err))
				return
			}
			resp, err := fromMessage(msg)
			if err != nil {
				yield(nil, fmt.Errorf("anthropic: model %q: %w", name, err))
				return
			}
			if built.outputTool != nil {
				built.outputTool.unwrap(resp)
			}
			yield(resp, nil)
			return
		}
		m.stream(ctx, req, name, built, yield)
	}
}
