package server

import (
	"fmt"
	"log/slog"
	"net/http"
	"runtime/debug"
	"time"

	"github.com/labstack/echo/v4"
)

// recoverJSON turns a handler panic into a logged 500 with a JSON body,
// instead of a dropped connection.
func recoverJSON(log *slog.Logger) echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) (err error) {
			defer func() {
				if r := recover(); r != nil {
					if r == http.ErrAbortHandler {
						panic(r)
					}
					log.Error("handler panic", "path", c.Path(), "panic", fmt.Sprint(r), "stack", string(debug.Stack()))
					err = errorf(http.StatusInternalServerError, "internal error")
				}
			}()
			return next(c)
		}
	}
}

// accessLog logs each request at debug level; at other levels it costs one
// Enabled check.
func accessLog(log *slog.Logger) echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			if !log.Enabled(c.Request().Context(), slog.LevelDebug) {
				return next(c)
			}
			start := time.Now()
			err := next(c)
			status := c.Response().Status
			if err != nil {
				status, _ = errorBody(err)
			}
			log.Debug("request", "method", c.Request().Method, "path", c.Request().URL.Path, "status", status, "duration", time.Since(start).String())
			return err
		}
	}
}
