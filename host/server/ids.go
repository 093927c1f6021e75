package server

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/labstack/echo/v4"
	"google.golang.org/genai"
)

// maxIDBytes bounds user and session ids: google-adk's
// DatabaseSessionService stores them in String(128) columns, and a longer
// one would not fit there (nor in a bbolt key with room to spare).
const maxIDBytes = 128

// checkID refuses an id (what: "user id", "session id") that is empty,
// longer than maxIDBytes, not UTF-8, or holds a control character, a '/'
// or a '\' (which no route could address).
func checkID(what, id string) error {
	var why string
	switch {
	case id == "":
		why = "is empty"
	case len(id) > maxIDBytes:
		why = fmt.Sprintf("is %d bytes long; at most %d", len(id), maxIDBytes)
	case !utf8.ValidString(id):
		why = "is not valid UTF-8"
	case strings.ContainsAny(id, `/\`):
		why = "holds '/' or '\\', which no URL of the API can address"
	case strings.ContainsFunc(id, unicode.IsControl):
		why = "holds a control character"
	default:
		return nil
	}
	shown := id
	if len(shown) > 40 {
		shown = shown[:40] + "…"
	}
	return errorf(http.StatusBadRequest, fmt.Sprintf("invalid %s %s: it %s", what, strconv.Quote(shown), why))
}

// checkPathIDs is middleware for the routes under /apps/:app/users/:user:
// it checks the user and session ids of the path before any handler runs.
func checkPathIDs(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		if err := checkID("user id", c.Param("user")); err != nil {
			return err
		}
		for _, name := range c.ParamNames() {
			if name == "session" {
				if err := checkID("session id", c.Param("session")); err != nil {
					return err
				}
			}
		}
		return next(c)
	}
}

// checkNewMessage refuses a run's new message that google-adk could not
// take as the user's turn: another role than user, or no part with
// something in it.
func checkNewMessage(m *genai.Content) error {
	if m.Role != "" && m.Role != genai.RoleUser {
		return errorf(http.StatusUnprocessableEntity, fmt.Sprintf("newMessage.role is %q: the new message is the user's, role \"user\"", m.Role))
	}
	if len(m.Parts) == 0 {
		return errorf(http.StatusUnprocessableEntity, "newMessage has no parts: send at least one, e.g. {\"text\": \"...\"}")
	}
	for i, p := range m.Parts {
		if p == nil {
			return errorf(http.StatusUnprocessableEntity, fmt.Sprintf("newMessage.parts[%d] is null", i))
		}
	}
	return nil
}
