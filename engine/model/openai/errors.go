package openai

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"

	oai "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/packages/ssestream"
)

// APIError is an error answer from the server: an HTTP status of 400 or
// more, or an error object sent in the middle of a stream. It wraps the
// client library's error.
type APIError struct {
	// Model is the model that was called.
	Model string
	// StatusCode is the HTTP status, e.g. 404. For an error that arrived
	// inside a stream it is the error's numeric code, or 0 without one.
	StatusCode int
	// Type is the error type the server gave, e.g. "invalid_request_error".
	Type string
	// Code is the error code the server gave, e.g. "model_not_found".
	Code string
	// Message is the server's explanation, or the start of the body when
	// the body is not an OpenAI error object.
	Message string

	err error
}

// Error reads like `openai: model "m": 404 Not Found (model_not_found): message`.
func (e *APIError) Error() string {
	s := fmt.Sprintf("openai: model %q:", e.Model)
	if e.StatusCode != 0 {
		s += " " + strconv.Itoa(e.StatusCode)
		if text := http.StatusText(e.StatusCode); text != "" {
			s += " " + text
		}
	} else {
		s += " stream error"
	}
	if e.Code != "" {
		s += " (" + e.Code + ")"
	}
	if e.Message != "" {
		s += ": " + e.Message
	}
	return s
}

// Unwrap returns the client library's error.
func (e *APIError) Unwrap() error { return e.err }

// maxErrorBody bounds how much of an error body is kept.
const maxErrorBody = 1 << 20

// errorBody is the status and body of the last error answer of one call,
// recorded by its middleware. The library parses only {"error": {...}}
// bodies and drops the status of anything else (a plain-text 404 from a
// proxy, vLLM's top-level {"message": ...}), so the body is kept here.
type errorBody struct {
	status int
	body   []byte
}

// middleware records error answers into b and leaves them readable for
// the library.
func (b *errorBody) middleware() option.RequestOption {
	return option.WithMiddleware(func(req *http.Request, next option.MiddlewareNext) (*http.Response, error) {
		// Only the last attempt's answer counts when the library retries.
		b.status, b.body = 0, nil
		res, err := next(req)
		if err != nil || res == nil || res.StatusCode < 400 || res.Body == nil {
			return res, err
		}
		data, rerr := io.ReadAll(io.LimitReader(res.Body, maxErrorBody))
		_ = res.Body.Close()
		res.Body = io.NopCloser(bytes.NewReader(data))
		if rerr != nil {
			return res, fmt.Errorf("read error body: %w", rerr)
		}
		b.status, b.body = res.StatusCode, data
		return res, nil
	})
}

// wrapError turns what the client returned into an *APIError when the
// server answered with an error, and otherwise wraps it, keeping ctx's
// error visible to errors.Is.
func wrapError(ctx context.Context, name string, err error, eb *errorBody) error {
	var ae *oai.Error
	if errors.As(err, &ae) || (eb != nil && eb.status != 0) {
		out := &APIError{Model: name, err: err}
		if eb != nil && eb.status != 0 {
			out.StatusCode = eb.status
			out.Type, out.Code, out.Message = parseErrorBody(eb.body)
		}
		if ae != nil {
			if out.StatusCode == 0 {
				out.StatusCode = ae.StatusCode
			}
			if out.Message == "" {
				out.Type, out.Code, out.Message = ae.Type, ae.Code, ae.Message
			}
		}
		return out
	}
	var se *ssestream.StreamError
	if errors.As(err, &se) {
		typ, code, msg := parseErrorBody(se.Event.Data)
		out := &APIError{Model: name, Type: typ, Code: code, Message: msg, err: err}
		if n, cerr := strconv.Atoi(code); cerr == nil {
			out.StatusCode, out.Code = n, ""
		}
		return out
	}
	if cerr := ctx.Err(); cerr != nil && !errors.Is(err, cerr) {
		return fmt.Errorf("openai: model %q: %w: %w", name, cerr, err)
	}
	return fmt.Errorf("openai: model %q: %w", name, err)
}

// errorObject is the error object of OpenAI-compatible servers. Code is a
// string at OpenAI and a number at llama.cpp and vLLM.
type errorObject struct {
	Message string          `json:"message"`
	Type    string          `json:"type"`
	Code    json.RawMessage `json:"code"`
}

// parseErrorBody reads the type, code and message of an error body:
// {"error": {...}} (OpenAI, Ollama, llama.cpp), {"error": "text"},
// a top-level error object (older vLLM), {"detail": "text"} (FastAPI
// servers), or else the text itself.
func parseErrorBody(body []byte) (typ, code, msg string) {
	var outer struct {
		Error  json.RawMessage `json:"error"`
		Detail json.RawMessage `json:"detail"`
		errorObject
	}
	if json.Unmarshal(body, &outer) == nil {
		var obj errorObject
		var text string
		switch {
		case len(outer.Error) > 0 && json.Unmarshal(outer.Error, &obj) == nil && obj.Message != "":
			return obj.Type, rawCode(obj.Code), obj.Message
		case len(outer.Error) > 0 && json.Unmarshal(outer.Error, &text) == nil && text != "":
			return "", "", text
		case outer.Message != "":
			return outer.Type, rawCode(outer.Code), outer.Message
		case len(outer.Detail) > 0 && json.Unmarshal(outer.Detail, &text) == nil && text != "":
			return "", "", text
		}
	}
	const maxText = 512
	s := strings.TrimSpace(string(body))
	if len(s) > maxText {
		s = strings.ToValidUTF8(s[:maxText], "") + "…"
	}
	return "", "", s
}

// rawCode renders a string or numeric code as text; null gives "".
func rawCode(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var n json.Number
	if json.Unmarshal(raw, &n) == nil {
		return n.String()
	}
	return ""
}
