package server

import (
	"encoding/json"
	"errors"
	"net/http"
	"reflect"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/adkhost/adkhost/engine"
	"github.com/adkhost/adkhost/engine/session"
)

// runSSE is POST /run_sse: each event as a Server-Sent Event
// `data: <event JSON>\n\n`, as google-adk's StreamingResponse writes them.
//
// SSE is written straight to Echo's response writer and flushed after each
// event: google-adk's clients need nothing but data-only frames (no event
// names, ids or retry fields), so an SSE library would add a dependency and
// nothing else.
func (s *Server) runSSE(c echo.Context) error {
	req, la, err := s.startRun(c)
	if err != nil {
		return err
	}
	defer la.release()
	ctx := c.Request().Context()
	// As google-adk does, check the session before the stream starts, so a
	// missing one is a 404 and not a broken stream.
	if _, err := s.cfg.Stores.Sessions.Get(ctx, &session.GetRequest{AppName: la.name, UserID: req.UserID, SessionID: req.SessionID, NumRecentEvents: 1}); err != nil {
		if errors.Is(err, session.ErrNotFound) {
			return sessionNotFound(la.name, req.UserID, req.SessionID)
		}
		return wrapErr(http.StatusInternalServerError, "reading session", err)
	}
	w := c.Response()
	h := w.Header()
	h.Set(echo.HeaderContentType, "text/event-stream; charset=utf-8")
	h.Set("Cache-Control", "no-cache")
	h.Set("Connection", "keep-alive")
	h.Set("X-Accel-Buffering", "no") // no proxy buffering of the stream
	w.WriteHeader(http.StatusOK)
	w.Flush()

	writeErr := error(nil)
	var frame []byte // reused: Write does not keep it
	send := func(v any) bool {
		var b []byte
		var err error
		if ev, ok := v.(*session.Event); ok && ev != nil {
			// Event's MarshalJSON output is compact and HTML-escaped
			// already: json.Marshal would only scan it again.
			b, err = ev.MarshalJSON()
		} else {
			b, err = json.Marshal(v)
		}
		if err != nil {
			writeErr = err
			return false
		}
		frame = append(append(append(frame[:0], "data: "...), b...), '\n', '\n')
		if _, err := w.Write(frame); err != nil {
			writeErr = err
			return false
		}
		w.Flush()
		return true
	}
	runErr := s.runObserved(c, req, la, s.runConfig(req), func(ev *session.Event) bool {
		for _, e := range splitArtifactEvent(ev, req.FunctionCallEventID != "") {
			if !send(e) {
				return false
			}
		}
		return true
	})
	if runErr != nil && ctx.Err() == nil && writeErr == nil {
		// google-adk's error frame: {"error": "<Type>: <msg>", "error_details": {...}}.
		typ, msg := errorType(runErr), runErr.Error()
		if e := boundRefused("run stopped", runErr); e != nil {
			msg = e.Error() // names the bound to raise
		}
		send(map[string]any{
			"error": typ + ": " + msg,
			"error_details": map[string]any{
				"error_type": typ, "error_message": msg,
				"timestamp": float64(time.Now().UnixMicro()) / 1e6,
			},
		})
	}
	if writeErr != nil {
		s.log.Debug("run_sse client gone", "app", la.name, "err", writeErr)
	}
	return nil
}

// splitArtifactEvent returns the frames for ev: an event with both content
// and an artifact delta goes out as google-adk sends it for ADK Web, the
// content with the delta cleared, then an action-only copy with the delta.
func splitArtifactEvent(ev *session.Event, resume bool) []*session.Event {
	if resume || len(ev.Actions.ArtifactDelta) == 0 || ev.Content == nil || len(ev.Content.Parts) == 0 {
		return []*session.Event{ev}
	}
	content := *ev
	content.Actions.ArtifactDelta = map[string]int{}
	actions := *ev
	actions.Content = nil
	return []*session.Event{&content, &actions}
}

// errorType names an error as google-adk names the exception class: the
// ErrorCode of an engine error, else the Go type of the outermost error.
func errorType(err error) string {
	var ec engine.ErrorCoder
	if errors.As(err, &ec) {
		if code := ec.ErrorCode(); code != "" {
			return code
		}
	}
	t := reflect.TypeOf(err)
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t.Name() == "" || t.Name() == "wrapError" || t.Name() == "errorString" {
		return "Error"
	}
	return t.Name()
}
