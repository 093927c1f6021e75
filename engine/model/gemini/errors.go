package gemini

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"google.golang.org/genai"
)

// APIError is an error answer from the Gemini service. It wraps the
// genai.APIError it came from.
type APIError struct {
	// Model is the model that was called.
	Model string
	// StatusCode is the HTTP status, e.g. 429.
	StatusCode int
	// Status is Google's status name, e.g. "RESOURCE_EXHAUSTED".
	Status string
	// Message is the service's explanation.
	Message string
	// Details are the structured details of the Google error body.
	Details []map[string]any

	err error
}

// Error reads like "gemini: model "m": 429 RESOURCE_EXHAUSTED: message",
// with a pointer to the quota documentation for 429, as google-adk adds.
func (e *APIError) Error() string {
	s := fmt.Sprintf("gemini: model %q: %d", e.Model, e.StatusCode)
	if e.Status != "" {
		s += " " + e.Status
	}
	if e.Message != "" {
		s += ": " + e.Message
	}
	if e.StatusCode == http.StatusTooManyRequests {
		s += " (quota or rate limit reached; see https://google.github.io/adk-docs/agents/models/google-gemini/#error-code-429-resource_exhausted)"
	}
	return s
}

// Unwrap returns the underlying genai error.
func (e *APIError) Unwrap() error { return e.err }

// wrapError turns what genai returned into an *APIError when the service
// answered, and otherwise wraps it, keeping ctx's error visible to errors.Is.
func wrapError(ctx context.Context, name string, err error) error {
	var ae genai.APIError
	if errors.As(err, &ae) {
		code := ae.Code
		if code == 0 {
			code = statusCode(ae.Status)
		}
		return &APIError{Model: name, StatusCode: code, Status: ae.Status, Message: ae.Message, Details: ae.Details, err: err}
	}
	var pae *genai.APIError
	if errors.As(err, &pae) && pae != nil {
		return wrapError(ctx, name, *pae)
	}
	if cerr := ctx.Err(); cerr != nil && !errors.Is(err, cerr) {
		return fmt.Errorf("gemini: model %q: %w: %w", name, cerr, err)
	}
	return fmt.Errorf("gemini: model %q: %w", name, err)
}

// statusCode maps Google's canonical status names to HTTP codes, for error
// bodies that carry a status but no code.
func statusCode(status string) int {
	switch status {
	case "INVALID_ARGUMENT", "FAILED_PRECONDITION", "OUT_OF_RANGE":
		return http.StatusBadRequest
	case "UNAUTHENTICATED":
		return http.StatusUnauthorized
	case "PERMISSION_DENIED":
		return http.StatusForbidden
	case "NOT_FOUND":
		return http.StatusNotFound
	case "ABORTED", "ALREADY_EXISTS":
		return http.StatusConflict
	case "RESOURCE_EXHAUSTED":
		return http.StatusTooManyRequests
	case "CANCELLED":
		return 499
	case "INTERNAL", "DATA_LOSS", "UNKNOWN":
		return http.StatusInternalServerError
	case "UNIMPLEMENTED":
		return http.StatusNotImplemented
	case "UNAVAILABLE":
		return http.StatusServiceUnavailable
	case "DEADLINE_EXCEEDED":
		return http.StatusGatewayTimeout
	}
	return 0
}
