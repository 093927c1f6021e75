package anthropic

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	ant "github.com/anthropics/anthropic-sdk-go"
)

// RateLimitHelp precedes the message of a 429, as google-adk's
// _AnthropicRateLimitError adds it.
const RateLimitHelp = "On how to mitigate this issue, please refer to:\n\nhttps://docs.anthropic.com/en/api/errors#http-errors"

// APIError is an error answer from the API: an HTTP status of 400 or more,
// or an error event in the middle of a stream. It wraps the client
// library's error.
type APIError struct {
	// Model is the model that was called.
	Model string
	// StatusCode is the HTTP status, e.g. 429. For an error event in a
	// stream it is the stream's status, 200.
	StatusCode int
	// Type is Anthropic's error type, e.g. "rate_limit_error" or
	// "overloaded_error".
	Type string
	// Message is the API's explanation, or the start of the body when it
	// is not an Anthropic error object.
	Message string
	// RequestID is the request-id the API answered with.
	RequestID string

	err error
}

// Error reads like `anthropic: model "m": 404 Not Found (not_found_error):
// message`; a 429 starts with RateLimitHelp's pointer, as google-adk's.
func (e *APIError) Error() string {
	var b strings.Builder
	if e.StatusCode == http.StatusTooManyRequests {
		b.WriteString(RateLimitHelp + "\n\n")
	}
	fmt.Fprintf(&b, "anthropic: model %q:", e.Model)
	if e.StatusCode != 0 && e.StatusCode != http.StatusOK {
		b.WriteString(" " + strconv.Itoa(e.StatusCode))
		if text := http.StatusText(e.StatusCode); text != "" {
			b.WriteString(" " + text)
		}
	} else {
		b.WriteString(" stream error")
	}
	if e.Type != "" {
		b.WriteString(" (" + e.Type + ")")
	}
	if e.Message != "" {
		b.WriteString(": " + e.Message)
	}
	return b.String()
}

// Unwrap returns the client library's error.
func (e *APIError) Unwrap() error { return e.err }

// wrapError turns what the client returned into an *APIError when the API
// answered with an error, and otherwise wraps it, keeping ctx's error
// visible to errors.Is.
func wrapError(ctx context.Context, name string, err error) error {
	var ae *ant.Error
	if errors.As(err, &ae) {
		typ, msg := parseErrorBody(ae.RawJSON())
		if typ == "" {
			typ = string(ae.Type())
		}
		return &APIError{Model: name, StatusCode: ae.StatusCode, Type: typ, Message: msg, RequestID: ae.RequestID, err: err}
	}
	if cerr := ctx.Err(); cerr != nil && !errors.Is(err, cerr) {
		return fmt.Errorf("anthropic: model %q: %w: %w", name, cerr, err)
	}
	return fmt.Errorf("anthropic: model %q: %w", name, err)
}

// parseErrorBody reads Anthropic's {"type": "error", "error": {"type",
// "message"}}, or else keeps the start of the body as the message.
func parseErrorBody(body string) (typ, msg string) {
	var outer struct {
		Error struct {
			Type    string `json:"type"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if json.Unmarshal([]byte(body), &outer) == nil && (outer.Error.Message != "" || outer.Error.Type != "") {
		return outer.Error.Type, outer.Error.Message
	}
	const maxText = 512
	s := strings.TrimSpace(body)
	if len(s) > maxText {
		s = strings.ToValidUTF8(s[:maxText], "") + "…"
	}
	return "", s
}
