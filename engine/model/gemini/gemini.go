// Package gemini is a model.Model backed by the Gemini API or Vertex AI,
// called through google.golang.org/genai as google-adk's Gemini class does.
package gemini

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"net/http"
	"net/url"
	"regexp"
	"strings"

	"google.golang.org/genai"

	"github.com/adkhost/adkhost/engine/model"
	"github.com/adkhost/adkhost/engine/model/streaming"
)

// Config says which model to call and how to reach it.
type Config struct {
	// Model is the default model name, used when a Request names none,
	// e.g. "gemini-2.5-flash". Required.
	Model string
	// APIKey authenticates with the Gemini API (or Vertex AI express mode).
	// When empty, genai reads GOOGLE_API_KEY or GEMINI_API_KEY.
	APIKey string
	// Backend picks the Gemini API or Vertex AI. genai.BackendUnspecified
	// lets genai decide from GOOGLE_GENAI_USE_VERTEXAI.
	Backend genai.Backend
	// Project and Location address Vertex AI.
	Project  string
	Location string
	// BaseURL overrides the service endpoint. A *.googleapis.com URL whose
	// path is just an API version ("/v1") sets APIVersion from it.
	BaseURL string
	// APIVersion overrides genai's default ("v1beta", or "v1beta1" on Vertex).
	APIVersion string
	// HTTPClient sends the requests; nil means genai's default (with
	// application default credentials on Vertex AI without an API key).
	HTTPClient *http.Client
	// Headers are added to every request.
	Headers http.Header
	// RetryOptions turns on genai's retries; nil means none, as in google-adk.
	RetryOptions *genai.HTTPRetryOptions
	// NewFunctionCallID makes ids for streamed function calls that arrive
	// without one; nil means streaming.NewClientFunctionCallID.
	NewFunctionCallID func() string
}

// Model calls Gemini. It is safe for concurrent use.
type Model struct {
	name   string
	client *genai.Client
	vertex bool
	newID  func() string
}

var _ model.Model = (*Model)(nil)

// New builds a genai client from cfg and returns a Model that uses it.
func New(ctx context.Context, cfg Config) (*Model, error) {
	if cfg.Model == "" {
		return nil, errors.New("gemini: Config.Model is required")
	}
	baseURL, apiVersion := splitAPIVersion(cfg.BaseURL)
	if cfg.APIVersion != "" {
		apiVersion = cfg.APIVersion
	}
	client, err := genai.NewClient(ctx, &genai.ClientConfig{
		APIKey:     cfg.APIKey,
		Backend:    cfg.Backend,
		Project:    cfg.Project,
		Location:   cfg.Location,
		HTTPClient: cfg.HTTPClient,
		HTTPOptions: genai.HTTPOptions{
			BaseURL:      baseURL,
			APIVersion:   apiVersion,
			Headers:      cfg.Headers.Clone(),
			RetryOptions: cfg.RetryOptions,
		},
	})
	if err != nil {
		return nil, fmt.Errorf("gemini: create client: %w", err)
	}
	newID := cfg.NewFunctionCallID
	if newID == nil {
		newID = streaming.NewClientFunctionCallID
	}
	return &Model{
		name:   cfg.Model,
		client: client,
		vertex: client.ClientConfig().Backend == genai.BackendVertexAI,
		newID:  newID,
	}, nil
}

// Name returns the configured model name.
func (m *Model) Name() string { return m.name }

// SupportsOutputSchemaWithTools reports whether one request may carry both
// an output schema and tools: only Gemini models on Vertex AI accept that
// (google-adk's gemini_output_schema_and_tools). Otherwise the engine offers
// the set_model_response tool instead.
func (m *Model) SupportsOutputSchemaWithTools() bool {
	name := m.name[strings.LastIndex(m.name, "/")+1:]
	return m.vertex && strings.HasPrefix(name, "gemini")
}

// GenerateContent sends req to Gemini. Without stream it yields one response
// made by model.FromGenerateContentResponse. With stream it yields one
// partial response per chunk and then the aggregated final response (see
// streaming.Aggregator), whose usage is the last usage the stream reported.
// API failures come back as *APIError. req is not modified.
func (m *Model) GenerateContent(ctx context.Context, req *model.Request, stream bool) iter.Seq2[*model.Response, error] {
	return func(yield func(*model.Response, error) bool) {
		if req == nil {
			yield(nil, errors.New("gemini: nil request"))
			return
		}
		name := req.Model
		if name == "" {
			name = m.name
		}
		contents, cfg := m.prepare(req)
		if !stream {
			resp, err := m.client.Models.GenerateContent(ctx, name, contents, cfg)
			if err != nil {
				yield(nil, wrapError(ctx, name, err))
				return
			}
			yield(model.FromGenerateContentResponse(resp), nil)
			return
		}

		agg := streaming.New(m.newID)
		var lastUsage *genai.GenerateContentResponseUsageMetadata
		for chunk, err := range m.client.Models.GenerateContentStream(ctx, name, contents, cfg) {
			if err != nil {
				yield(nil, wrapError(ctx, name, err))
				return
			}
			if chunk == nil {
				continue
			}
			if chunk.UsageMetadata != nil {
				lastUsage = chunk.UsageMetadata
			}
			if len(chunk.Candidates) > 0 {
				// Only the first candidate is used; a chunk that carries
				// only others is skipped.
				chunk.Candidates = firstCandidates(chunk.Candidates)
				if len(chunk.Candidates) == 0 {
					continue
				}
			}
			if !yield(agg.Process(chunk), nil) {
				return
			}
		}
		if err := ctx.Err(); err != nil {
			yield(nil, fmt.Errorf("gemini: model %q: %w", name, err))
			return
		}
		if final := agg.Close(); final != nil {
			if lastUsage != nil {
				final.UsageMetadata = lastUsage
			}
			yield(final, nil)
		}
	}
}

func firstCandidates(cands []*genai.Candidate) []*genai.Candidate {
	out := cands[:0:0]
	for _, c := range cands {
		if c != nil && c.Index == 0 {
			out = append(out, c)
		}
	}
	return out
}

const (
	// Sent when the request has no contents, so the model acts on the
	// system instruction.
	emptyContentsHint = "Handle the requests as specified in the System Instruction."
	// Sent when the history does not end with the user, so the model
	// continues instead of answering with nothing.
	continueHint = "Continue processing previous requests as instructed. Exit or provide a summary if no more outputs are needed."
)

// prepare returns the contents and config to send, as google-adk's Gemini
// prepares them, without touching req: on the Gemini API labels and the
// display names of inline and file data are dropped (it rejects them), and a
// user turn is appended when the history is empty or ends with the model.
func (m *Model) prepare(req *model.Request) ([]*genai.Content, *genai.GenerateContentConfig) {
	contents := make([]*genai.Content, 0, len(req.Contents)+1)
	for _, c := range req.Contents {
		if c == nil {
			continue
		}
		if !m.vertex {
			c = withoutDisplayNames(c)
		}
		contents = append(contents, c)
	}
	switch {
	case len(contents) == 0:
		contents = append(contents, genai.NewContentFromText(emptyContentsHint, genai.RoleUser))
	case contents[len(contents)-1].Role != genai.RoleUser:
		contents = append(contents, genai.NewContentFromText(continueHint, genai.RoleUser))
	}

	if req.Config == nil {
		return contents, nil
	}
	cfg := *req.Config
	if !m.vertex {
		cfg.Labels = nil
	}
	if cfg.SystemInstruction != nil {
		// genai fills in a missing role in place; keep that off req.
		si := *cfg.SystemInstruction
		cfg.SystemInstruction = &si
	}
	return contents, &cfg
}

// withoutDisplayNames returns c, or a copy of it whose inline and file data
// carry no display name.
func withoutDisplayNames(c *genai.Content) *genai.Content {
	var out *genai.Content
	for i, p := range c.Parts {
		if p == nil {
			continue
		}
		hasName := (p.InlineData != nil && p.InlineData.DisplayName != "") ||
			(p.FileData != nil && p.FileData.DisplayName != "")
		if !hasName {
			continue
		}
		if out == nil {
			cp := *c
			cp.Parts = append([]*genai.Part(nil), c.Parts...)
			out = &cp
		}
		np := *p
		if p.InlineData != nil && p.InlineData.DisplayName != "" {
			blob := *p.InlineData
			blob.DisplayName = ""
			np.InlineData = &blob
		}
		if p.FileData != nil && p.FileData.DisplayName != "" {
			fd := *p.FileData
			fd.DisplayName = ""
			np.FileData = &fd
		}
		out.Parts[i] = &np
	}
	if out == nil {
		return c
	}
	return out
}

var apiVersionPath = regexp.MustCompile(`^/?(v[0-9][a-z0-9.-]*)/?$`)

// splitAPIVersion takes an API version off the path of a *.googleapis.com
// base URL ("https://x.googleapis.com/v1" gives "https://x.googleapis.com/"
// and "v1"); any other URL is returned as is.
func splitAPIVersion(base string) (string, string) {
	if base == "" {
		return "", ""
	}
	u, err := url.Parse(base)
	if err != nil || !strings.HasSuffix(u.Host, ".googleapis.com") || u.RawQuery != "" || u.Fragment != "" {
		return base, ""
	}
	if u.Path == "" || u.Path == "/" {
		return base, ""
	}
	match := apiVersionPath.FindStringSubmatch(u.Path)
	if match == nil {
		return base, ""
	}
	u.Path, u.RawPath = "/", ""
	return u.String(), match[1]
}
