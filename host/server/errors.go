package server

import (
	"errors"
	"log/slog"
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/adkhost/adkhost/engine"
	"github.com/adkhost/adkhost/engine/session"
)

// apiError is an error with the HTTP status it maps to and optional extra
// fields merged into the JSON body. Every error response of the server is
// `{"error": "...", "detail": "...", ...}`: "error" for adkhost's own
// clients, "detail" because FastAPI (google-adk's api_server) puts its
// message there and clients written for it read that key.
type apiError struct {
	Status int
	Msg    string
	Extra  map[string]any
	Err    error
}

func (e *apiError) Error() string {
	if e.Err != nil {
		return e.Msg + ": " + e.Err.Error()
	}
	return e.Msg
}

func (e *apiError) Unwrap() error { return e.Err }

// errorf returns an apiError with status and message.
func errorf(status int, msg string) *apiError { return &apiError{Status: status, Msg: msg} }

// wrapErr returns an apiError whose message is msg followed by err's.
func wrapErr(status int, msg string, err error) *apiError {
	return &apiError{Status: status, Msg: msg, Err: err}
}

// errorHandler writes every error as JSON. Echo's own errors (unknown
// route, method not allowed) keep their status.
func errorHandler(log *slog.Logger) echo.HTTPErrorHandler {
	return func(err error, c echo.Context) {
		if c.Response().Committed {
			return
		}
		status, body := errorBody(err)
		if status >= 500 {
			log.Error("request failed", "method", c.Request().Method, "path", c.Path(), "status", status, "err", err)
		}
		if c.Request().Method == http.MethodHead {
			_ = c.NoContent(status)
			return
		}
		_ = c.JSON(status, body)
	}
}

// errorBody maps err to its status and JSON body.
func errorBody(err error) (int, map[string]any) {
	var ae *apiError
	var he *echo.HTTPError
	var mbe *http.MaxBytesError
	status, msg := http.StatusInternalServerError, err.Error()
	var extra map[string]any
	switch {
	case errors.As(err, &ae):
		status, msg, extra = ae.Status, ae.Error(), ae.Extra
	case errors.As(err, &mbe):
		status, msg = http.StatusRequestEntityTooLarge, "request body larger than "+itoa64(mbe.Limit)+" bytes"
	case errors.As(err, &he):
		status = he.Code
		if s, ok := he.Message.(string); ok {
			msg = s
		} else {
			msg = http.StatusText(he.Code)
		}
	}
	body := map[string]any{"error": msg, "detail": msg}
	for k, v := range extra {
		body[k] = v
	}
	return status, body
}

// boundRefused maps a write the session bounds refused, or a run the
// engine's bounds stopped, to an answer that says which bound:
// session.StateTooLargeError and engine.BytesLimitExceededError to a 413
// naming the bound to raise, session.TooDeepError,
// engine.EventsLimitExceededError and engine.TooManyFunctionCallsError to
// a 422; nil if err is none of them.
func boundRefused(what string, err error) error {
	if err == nil {
		// errors.As's targets escape: a successful run would allocate them.
		return nil
	}
	var big *session.StateTooLargeError
	if errors.As(err, &big) {
		return &apiError{Status: http.StatusRequestEntityTooLarge, Err: err,
			Msg:   what + ": the state bound (--max-state-bytes, server.Config.Limits.StateBytes) refused the write",
			Extra: map[string]any{"limit": "max_state_bytes", "scope": big.Scope, "size": big.Size, "max_state_bytes": big.Limit}}
	}
	var deep *session.TooDeepError
	if errors.As(err, &deep) {
		return &apiError{Status: http.StatusUnprocessableEntity, Err: err,
			Msg:   what + ": a value nests too deep to store",
			Extra: map[string]any{"limit": "max_value_depth", "max_value_depth": deep.Limit}}
	}
	// The run bounds of the engine that are adkhost's own: what the app
	// (its model, tools, callbacks) did past them is no server failure.
	var bytes *engine.BytesLimitExceededError
	if errors.As(err, &bytes) {
		return &apiError{Status: http.StatusRequestEntityTooLarge, Err: err,
			Msg:   what + ": the run's bound on bytes produced (--max-run-bytes) refused more",
			Extra: map[string]any{"limit": "max_run_bytes", "max_run_bytes": bytes.Limit, "size": bytes.Size}}
	}
	var events *engine.EventsLimitExceededError
	if errors.As(err, &events) {
		return &apiError{Status: http.StatusUnprocessableEntity, Err: err,
			Msg:   what + ": the run's bound on events (--max-events) refused more",
			Extra: map[string]any{"limit": "max_events", "max_events": events.Limit}}
	}
	var fcs *engine.TooManyFunctionCallsError
	if errors.As(err, &fcs) {
		return &apiError{Status: http.StatusUnprocessableEntity, Err: err,
			Msg:   what + ": the bound on function calls of one model response (--max-function-calls) refused it",
			Extra: map[string]any{"limit": "max_function_calls", "max_function_calls": fcs.Limit, "calls": fcs.Calls}}
	}
	return nil
}
