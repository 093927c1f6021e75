package server

import (
	"fmt"
	"net/http"
	"net/url"
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

// decodeParams is middleware that leaves every path parameter decoded
// exactly once. Echo routes on r.URL.RawPath when the client escaped any
// byte of the path other than canonically (%41, %2F), and then hands the
// parameters out still escaped; for other paths they come decoded. Without
// this, "x%20%79" and "x%20y" named two sessions, and "%2F" put a '/' into
// ids the JSON API refuses.
func decodeParams(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		if c.Request().URL.RawPath == "" {
			return next(c)
		}
		names, vals := c.ParamNames(), c.ParamValues()
		decoded := make([]string, len(vals))
		for i, v := range vals {
			u, err := url.PathUnescape(v)
			if err != nil {
				what := "path"
				if i < len(names) {
					what = names[i]
				}
				return wrapErr(http.StatusBadRequest, fmt.Sprintf("invalid escape in the %s of the path", what), err)
			}
			decoded[i] = u
		}
		c.SetParamValues(decoded...)
		return next(c)
	}
}

// checkPathIDs is middleware for the routes under /apps/:app/users/:user:
// it checks the app name and the user and session ids of the path before
// any handler runs.
func checkPathIDs(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		if app := c.Param("app"); !validName.MatchString(app) {
			shown := app
			if len(shown) > 40 {
				shown = shown[:40] + "…"
			}
			return errorf(http.StatusBadRequest, "invalid app name "+strconv.Quote(shown)+": app names are letters, digits, '_', '.', '-', at most 128 bytes")
		}
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
