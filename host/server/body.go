package server

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"

	"github.com/labstack/echo/v4"
)

// readBody reads the request body, at most limit bytes; a larger body is a
// 413 (via http.MaxBytesError in errorBody).
func readBody(c echo.Context, limit int64) ([]byte, error) {
	r := c.Request()
	if r.ContentLength > limit {
		return nil, &http.MaxBytesError{Limit: limit}
	}
	b, err := io.ReadAll(http.MaxBytesReader(c.Response(), r.Body, limit))
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return nil, err
		}
		var ae *apiError // the body timeout's 408 (clientTimeouts)
		if errors.As(err, &ae) {
			return nil, ae
		}
		return nil, wrapErr(http.StatusBadRequest, "reading the request body", err)
	}
	return b, nil
}

// decodeJSON reads a JSON body of at most limit bytes into v. An empty body
// leaves v as it is and reports false.
func decodeJSON(c echo.Context, limit int64, v any) (bool, error) {
	b, err := readBody(c, limit)
	if err != nil {
		return false, err
	}
	if len(b) == 0 {
		return false, nil
	}
	if err := json.Unmarshal(b, v); err != nil {
		// FastAPI answers a body it cannot validate with 422.
		return false, wrapErr(http.StatusUnprocessableEntity, "invalid JSON body", err)
	}
	return true, nil
}
