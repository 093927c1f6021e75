package server

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"runtime"
	"strings"
	"time"

	"github.com/labstack/echo/v4"
	"google.golang.org/genai"

	"github.com/adkhost/adkhost/engine"
	"github.com/adkhost/adkhost/engine/session"
	"github.com/adkhost/adkhost/internal/keyorder"
)

// runRequest is google-adk's RunAgentRequest. Keys are camelCase on the
// wire; snake_case keys are accepted too, as pydantic's populate_by_name
// accepts them.
type runRequest struct {
	AppName             string         `json:"appName"`
	UserID              string         `json:"userId"`
	SessionID           string         `json:"sessionId"`
	NewMessage          *genai.Content `json:"newMessage"`
	Streaming           bool           `json:"streaming"`
	StateDelta          map[string]any `json:"stateDelta"`
	FunctionCallEventID string         `json:"functionCallEventId"`
	InvocationID        string         `json:"invocationId"`
	CustomMetadata      map[string]any `json:"customMetadata"`
}

// decodeCamel decodes a JSON object into v after renaming its top-level
// snake_case keys to camelCase.
func decodeCamel(b []byte, v any) error {
	if !hasSnakeKey(b) {
		// One decode (the common case).
		return json.Unmarshal(b, v)
	}
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(b, &raw); err != nil {
		return err
	}
	for k, val := range raw {
		if strings.Contains(k, "_") {
			delete(raw, k)
			raw[snakeToCamel(k)] = val
		}
	}
	b, err := json.Marshal(raw)
	if err != nil {
		return err
	}
	return json.Unmarshal(b, v)
}

// hasSnakeKey reports whether a top-level key of the JSON object b may be
// snake_case: it has an underscore, or an escape that may stand for one.
// Only keys are looked at: an underscore in a value (an app named
// weather_assistant, a message) needs no renaming. Text the scan cannot
// read answers true; the decode then says what is wrong with it.
func hasSnakeKey(b []byte) bool {
	snake := false
	ok := keyorder.Members(b, func(key, _ []byte) bool {
		snake = bytes.IndexByte(key, '_') >= 0 || bytes.IndexByte(key, '\\') >= 0
		return !snake
	})
	return snake || !ok
}

func snakeToCamel(s string) string {
	parts := strings.Split(s, "_")
	for i := 1; i < len(parts); i++ {
		if parts[i] != "" {
			parts[i] = strings.ToUpper(parts[i][:1]) + parts[i][1:]
		}
	}
	return strings.Join(parts, "")
}

func (s *Server) version(c echo.Context) error {
	v := s.cfg.Version
	if v == "" {
		v = "dev"
	}
	return c.JSON(http.StatusOK, map[string]string{"version": v, "language": "go", "language_version": strings.TrimPrefix(runtime.Version(), "go")})
}

// listAppNames is GET /list-apps: the names of the apps served, or with
// ?detailed=true google-adk's ListAppsResponse.
func (s *Server) listAppNames(c echo.Context) error {
	names := s.apps.names()
	if c.QueryParam("detailed") != "true" {
		return c.JSON(http.StatusOK, names)
	}
	type appInfo struct {
		Name          string `json:"name"`
		RootAgentName string `json:"rootAgentName"`
		Description   string `json:"description"`
		Language      string `json:"language"`
	}
	out := struct {
		Apps []appInfo `json:"apps"`
	}{Apps: []appInfo{}}
	for _, n := range names {
		if la := s.apps.get(n); la != nil {
			info := la.app.Root.Info()
			out.Apps = append(out.Apps, appInfo{Name: n, RootAgentName: info.Name, Description: info.Description, Language: "yaml"})
		}
	}
	return c.JSON(http.StatusOK, out)
}

// startRun reads and checks a run request and takes a reference on the
// app's current version; the caller releases it.
func (s *Server) startRun(c echo.Context) (*runRequest, *loadedApp, error) {
	b, err := readBody(c, s.cfg.Limits.RequestBytes)
	if err != nil {
		return nil, nil, err
	}
	var req runRequest
	if !fastRunRequest(b, &req) {
		req = runRequest{}
		if err := decodeCamel(b, &req); err != nil {
			return nil, nil, wrapErr(http.StatusUnprocessableEntity, "invalid run request", err)
		}
	}
	if req.AppName == "" {
		return nil, nil, errorf(http.StatusBadRequest, "appName is required")
	}
	if req.UserID == "" || req.SessionID == "" {
		return nil, nil, errorf(http.StatusUnprocessableEntity, "userId and sessionId are required")
	}
	if err := checkID("user id", req.UserID); err != nil {
		return nil, nil, err
	}
	if err := checkID("session id", req.SessionID); err != nil {
		return nil, nil, err
	}
	if req.NewMessage == nil && req.InvocationID == "" {
		// Only resuming an invocation may go without a message.
		return nil, nil, errorf(http.StatusUnprocessableEntity, "newMessage is required unless invocationId resumes an invocation")
	}
	if req.NewMessage != nil {
		if err := checkNewMessage(req.NewMessage); err != nil {
			return nil, nil, err
		}
	}
	if len(req.CustomMetadata) > 0 {
		// Copied into every event of the run: up to --max-events times.
		if b, err := json.Marshal(req.CustomMetadata); err == nil && len(b) > maxCustomMetadataBytes {
			return nil, nil, &apiError{Status: http.StatusRequestEntityTooLarge,
				Msg:   fmt.Sprintf("customMetadata is %d bytes of JSON, over the limit of %d: it is copied into every event of the run; send a few tags, and put data in state", len(b), maxCustomMetadataBytes),
				Extra: map[string]any{"limit": "max_custom_metadata_bytes", "max_custom_metadata_bytes": maxCustomMetadataBytes}}
		}
	}
	la := s.apps.acquire(req.AppName)
	if la == nil {
		return nil, nil, errorf(http.StatusNotFound, "App not found: "+req.AppName)
	}
	return &req, la, nil
}

// maxCustomMetadataBytes bounds a run request's customMetadata, which the
// runner copies into every event of the invocation (as google-adk does):
// a megabyte of it, with the events a run may store, stored gigabytes.
const maxCustomMetadataBytes = 64 << 10

// runConfig is the engine's RunConfig for a request.
func (s *Server) runConfig(req *runRequest) engine.RunConfig {
	cfg := s.cfg.Limits.RunConfig()
	cfg.StateDelta, cfg.CustomMetadata, cfg.InvocationID = req.StateDelta, req.CustomMetadata, req.InvocationID
	if req.Streaming {
		cfg.StreamingMode = engine.StreamingModeSSE
	}
	return cfg
}

// runObserved runs the request on la, calling emit for every event, and
// records the invocation's metrics. emit returning false stops the run.
func (s *Server) runObserved(c echo.Context, req *runRequest, la *loadedApp, cfg engine.RunConfig, emit func(*session.Event) bool) error {
	ctx := c.Request().Context()
	s.metrics.inFlight.WithLabelValues(la.name).Inc()
	start := time.Now()
	seen := map[string]bool{}
	var runErr error
	for ev, err := range la.runner.Run(ctx, req.UserID, req.SessionID, req.NewMessage, cfg) {
		if err != nil {
			runErr = err
			break
		}
		seen[ev.InvocationID] = true
		if !emit(ev) {
			break
		}
	}
	s.metrics.inFlight.WithLabelValues(la.name).Dec()
	s.metrics.invocationDur.WithLabelValues(la.name).Observe(time.Since(start).Seconds())
	outcome := "ok"
	switch {
	case ctx.Err() != nil:
		outcome = "canceled"
	case runErr != nil:
		outcome = "error"
	}
	s.metrics.invocations.WithLabelValues(la.name, outcome).Inc()
	for id := range seen {
		s.obs.finish(id, runErr)
	}
	if runErr != nil && outcome == "error" && !errors.Is(runErr, session.ErrNotFound) {
		s.log.Warn("run failed", "app", la.name, "version", la.version, "user", req.UserID, "session", req.SessionID, "err", runErr)
	}
	return runErr
}

// run is POST /run: the invocation's events as a JSON list.
func (s *Server) run(c echo.Context) error {
	req, la, err := s.startRun(c)
	if err != nil {
		return err
	}
	defer la.release()
	// The answer is the only acknowledgment of the turn's events, so the
	// store may take the turn's appends without waiting for each to be
	// durable (session.Pending); the answer waits for them all below.
	ctx, pend := session.WithPending(c.Request().Context())
	c.SetRequest(c.Request().WithContext(ctx))
	events := []*session.Event{}
	err = s.runObserved(c, req, la, s.runConfig(req), func(ev *session.Event) bool {
		events = append(events, ev)
		return true
	})
	if werr := pend.Wait(); err == nil {
		err = werr
	}
	switch {
	case c.Request().Context().Err() != nil:
		// google-adk answers a client that went away with 499.
		return c.NoContent(499)
	case err == nil:
		return s.writeEvents(c, events)
	case errors.Is(err, session.ErrNotFound):
		return sessionNotFound(la.name, req.UserID, req.SessionID)
	case errors.As(err, new(*engine.InvocationNotFoundError)):
		return wrapErr(http.StatusNotFound, "Invocation not found", err)
	case errors.As(err, new(*engine.MessageError)):
		// The Runner refused the new message before running (google-adk's
		// ValueError): the client's request is what is wrong.
		return wrapErr(http.StatusBadRequest, "new message refused", err)
	case boundRefused("", err) != nil:
		return boundRefused("run stopped", err)
	case errors.Is(err, session.ErrStale):
		// Another run (on this replica or another) appended to the
		// session first: its writes stand, this run's stop here.
		return wrapErr(http.StatusConflict, "run failed: the session changed under it (another run appended first); reload and retry", err)
	default:
		return wrapErr(http.StatusInternalServerError, "run failed", err)
	}
}

// writeEvents answers 200 with events as a JSON list: the bytes c.JSON
// writes, without encoding/json's second pass over each event's
// MarshalJSON output (it compacts and HTML-escapes it, and Event's,
// made by json.Marshal, is already both). ?pretty goes to c.JSON.
func (s *Server) writeEvents(c echo.Context, events []*session.Event) error {
	if _, pretty := c.QueryParams()["pretty"]; pretty || c.Echo().Debug {
		return c.JSON(http.StatusOK, events)
	}
	bp, _ := s.eventBufs.Get().(*[]byte)
	if bp == nil {
		bp = new([]byte)
	}
	buf := append((*bp)[:0], '[')
	for i, ev := range events {
		if i > 0 {
			buf = append(buf, ',')
		}
		if ev == nil {
			buf = append(buf, "null"...)
			continue
		}
		b, err := ev.MarshalJSON()
		if err != nil {
			return fmt.Errorf("encoding event %s: %w", ev.ID, err)
		}
		buf = append(buf, b...)
	}
	buf = append(buf, "]\n"...)
	err := c.Blob(http.StatusOK, echo.MIMEApplicationJSON, buf)
	if cap(buf) <= 1<<20 { // a rare huge answer is not kept
		*bp = buf
		s.eventBufs.Put(bp)
	}
	return err
}
