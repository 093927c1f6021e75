package server

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"

	"github.com/google/uuid"
	"github.com/labstack/echo/v4"

	"github.com/adkhost/adkhost/engine/session"
	"github.com/adkhost/adkhost/internal/keyorder"
)

// sessionJSON is google-adk's Session on the wire.
type sessionJSON struct {
	ID             string           `json:"id"`
	AppName        string           `json:"appName"`
	UserID         string           `json:"userId"`
	State          map[string]any   `json:"state"`
	Events         []*session.Event `json:"events"`
	LastUpdateTime float64          `json:"lastUpdateTime"`
}

func toSessionJSON(s *session.Session) sessionJSON {
	out := sessionJSON{ID: s.ID, AppName: s.AppName, UserID: s.UserID, State: s.State(), Events: s.Events(),
		LastUpdateTime: session.TimeToFloat(s.LastUpdateTime())}
	if out.State == nil {
		out.State = map[string]any{}
	}
	if out.Events == nil {
		out.Events = []*session.Event{}
	}
	return out
}

// sessionListOverhead is what a listed session adds to the answer beside
// its state: ids, time, the empty events list.
const sessionListOverhead = 160

// knownApp fails with 404 unless app is being served: sessions are only
// created for apps that can run them.
func (s *Server) knownApp(app string) error {
	if s.apps.get(app) == nil {
		return errorf(http.StatusNotFound, "App not found: "+app)
	}
	return nil
}

// createSession is POST .../sessions with an optional CreateSessionRequest
// ({sessionId, state}).
func (s *Server) createSession(c echo.Context) error {
	var req struct {
		SessionID string           `json:"sessionId"`
		State     map[string]any   `json:"state"`
		Events    []map[string]any `json:"events"`
	}
	b, err := readBody(c, s.cfg.Limits.RequestBytes)
	if err != nil {
		return err
	}
	if len(b) > 0 && string(b) != "null" {
		if err := decodeCamel(b, &req); err != nil {
			return wrapErr(http.StatusUnprocessableEntity, "invalid create session request", err)
		}
	}
	if len(req.Events) > 0 {
		return errorf(http.StatusBadRequest, "session initialization events are not supported: create the session, then run it")
	}
	if req.SessionID != "" {
		if err := checkID("session id", req.SessionID); err != nil {
			return err
		}
	}
	return s.create(c, req.SessionID, req.State, stateKeyOrder(keyorder.Member(b, "state")))
}

// stateKeyOrder is the key-order hint of each value of a state object
// given as JSON (session.CreateRequest.StateKeyOrder): google-adk keeps
// the order of a dict's keys, which prints in instruction templates.
func stateKeyOrder(raw []byte) map[string]json.RawMessage {
	var out map[string]json.RawMessage
	keyorder.FieldHints(raw, func(k string, h json.RawMessage) {
		if out == nil {
			out = map[string]json.RawMessage{}
		}
		out[k] = h
	})
	return out
}

// createSessionWithID is the deprecated POST .../sessions/{id}, whose body
// is the initial state.
func (s *Server) createSessionWithID(c echo.Context) error {
	var state map[string]any
	b, err := readBody(c, s.cfg.Limits.RequestBytes)
	if err != nil {
		return err
	}
	if len(b) > 0 {
		if err := json.Unmarshal(b, &state); err != nil {
			// FastAPI answers a body it cannot validate with 422.
			return wrapErr(http.StatusUnprocessableEntity, "invalid JSON body", err)
		}
	}
	return s.create(c, c.Param("session"), state, stateKeyOrder(b))
}

func (s *Server) create(c echo.Context, id string, state map[string]any, orders map[string]json.RawMessage) error {
	app := c.Param("app")
	if err := s.knownApp(app); err != nil {
		return err
	}
	sess, err := s.cfg.Stores.Sessions.Create(c.Request().Context(), &session.CreateRequest{AppName: app, UserID: c.Param("user"), SessionID: id, State: state, StateKeyOrder: orders})
	if errors.Is(err, session.ErrAlreadyExists) {
		return errorf(http.StatusConflict, "Session already exists: "+id)
	}
	if e := boundRefused("creating session", err); e != nil {
		return e
	}
	if err != nil {
		return wrapErr(http.StatusInternalServerError, "creating session", err)
	}
	return c.JSON(http.StatusOK, toSessionJSON(sess))
}

// getSessionOr404 reads the route's whole session.
func (s *Server) getSessionOr404(c echo.Context) (*session.Session, error) {
	return s.sessionOr404(c, c.Param("session"))
}

// sessionOr404 reads session id of the route's app and user, answering
// 404 if there is none.
func (s *Server) sessionOr404(c echo.Context, id string) (*session.Session, error) {
	sess, err := s.cfg.Stores.Sessions.Get(c.Request().Context(), &session.GetRequest{AppName: c.Param("app"), UserID: c.Param("user"), SessionID: id})
	if errors.Is(err, session.ErrNotFound) {
		return nil, sessionNotFound(c.Param("app"), c.Param("user"), id)
	}
	if err != nil {
		return nil, wrapErr(http.StatusInternalServerError, "reading session", err)
	}
	return sess, nil
}

// sessionNotFound is the one 404 every route gives for a missing session
// (google-adk's detail, "Session not found", then which one and what to do).
func sessionNotFound(app, user, id string) error {
	return errorf(http.StatusNotFound, fmt.Sprintf("Session not found: %q of user %q in app %q; create it with POST /apps/%s/users/%s/sessions",
		id, user, app, app, user))
}

func (s *Server) getSession(c echo.Context) error {
	sess, err := s.getSessionOr404(c)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, toSessionJSON(sess))
}

func (s *Server) listSessions(c echo.Context) error {
	list, err := s.cfg.Stores.Sessions.List(c.Request().Context(), &session.ListRequest{AppName: c.Param("app"), UserID: c.Param("user")})
	if err != nil {
		return wrapErr(http.StatusInternalServerError, "listing sessions", err)
	}
	// The answer repeats the app's and the user's state in every session:
	// measured before it is built.
	var size int64
	for _, sess := range list {
		size += sessionListOverhead + session.ValueSize(sess.State())
	}
	if limit := s.cfg.Limits.ListBytes; size > limit {
		return &apiError{Status: http.StatusRequestEntityTooLarge,
			Msg: fmt.Sprintf("the %d sessions of user %q in app %q hold about %d bytes of state as listed (each with the app's and the user's state), over the listing bound of %d bytes (--max-list-bytes): get sessions one by one, delete sessions no longer needed, or keep less in app: and user: state",
				len(list), c.Param("user"), c.Param("app"), size, limit),
			Extra: map[string]any{"limit": "max_list_bytes", "max_list_bytes": limit, "size": size, "sessions": len(list)}}
	}
	out := make([]sessionJSON, 0, len(list))
	for _, sess := range list {
		out = append(out, toSessionJSON(sess))
	}
	return c.JSON(http.StatusOK, out)
}

// deleteSession answers null, as google-adk's handler returns None.
func (s *Server) deleteSession(c echo.Context) error {
	err := s.cfg.Stores.Sessions.Delete(c.Request().Context(), &session.DeleteRequest{AppName: c.Param("app"), UserID: c.Param("user"), SessionID: c.Param("session")})
	if err != nil {
		return wrapErr(http.StatusInternalServerError, "deleting session", err)
	}
	return c.JSON(http.StatusOK, nil)
}

// patchSession applies {stateDelta} as google-adk 2.13 does: a user event
// with invocation id "p-<uuid>" carrying the delta, appended without a run.
func (s *Server) patchSession(c echo.Context) error {
	b, err := readBody(c, s.cfg.Limits.RequestBytes)
	if err != nil {
		return err
	}
	var req struct {
		StateDelta map[string]any `json:"stateDelta"`
	}
	if err := decodeCamel(b, &req); err != nil {
		return wrapErr(http.StatusUnprocessableEntity, "invalid update session request", err)
	}
	if req.StateDelta == nil {
		return errorf(http.StatusUnprocessableEntity, "stateDelta is required")
	}
	sess, err := s.getSessionOr404(c)
	if err != nil {
		return err
	}
	ev := session.NewEvent("p-"+uuid.NewString(), "user", "")
	ev.Actions.StateDelta = req.StateDelta
	if err := s.cfg.Stores.Sessions.AppendEvent(c.Request().Context(), sess, ev); err != nil {
		if errors.Is(err, session.ErrStale) {
			return wrapErr(http.StatusConflict, "session changed while updating it: retry", err)
		}
		if e := boundRefused("updating session", err); e != nil {
			return e
		}
		return wrapErr(http.StatusInternalServerError, "updating session", err)
	}
	return c.JSON(http.StatusOK, toSessionJSON(sess))
}

// patchMemory is PATCH /apps/{app}/users/{user}/memory: it adds the events
// of the session the body names to the memory service (google-adk
// patch_memory, with its messages).
func (s *Server) patchMemory(c echo.Context) error {
	b, err := readBody(c, s.cfg.Limits.RequestBytes)
	if err != nil {
		return err
	}
	var req struct {
		SessionID *string `json:"sessionId"`
	}
	if err := decodeCamel(b, &req); err != nil {
		return wrapErr(http.StatusUnprocessableEntity, "invalid update memory request", err)
	}
	if req.SessionID != nil {
		if err := checkID("session id", *req.SessionID); err != nil {
			return err
		}
	}
	if req.SessionID == nil {
		return errorf(http.StatusBadRequest, "Update memory request is invalid.")
	}
	sess, err := s.sessionOr404(c, *req.SessionID)
	if err != nil {
		return err
	}
	if err := s.cfg.Memory.AddSession(c.Request().Context(), sess); err != nil {
		return wrapErr(http.StatusInternalServerError, "adding the session to memory", err)
	}
	return c.NoContent(http.StatusOK)
}
