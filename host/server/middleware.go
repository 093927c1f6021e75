package server

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
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

// clientTimeouts is middleware that bounds how long a client can keep a
// handler waiting on it: each write of the answer may wait at most
// l.WriteTimeout for the client to read (an SSE stream nobody reads held
// its run, app version and goroutine for as long as the connection
// lived), and the request body must arrive within l.BodyTimeout of its
// first read. Neither bounds the handler's own work: a run may stay quiet
// for as long as it needs.
//
// These are per-request deadlines rather than http.Server's ReadTimeout
// and WriteTimeout: those count from the start of the request, so they
// would cut long runs short, and an expired ReadTimeout cancels the
// request's context through the connection's background read.
func clientTimeouts(l Limits) echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			res, req := c.Response(), c.Request()
			rc := http.NewResponseController(res.Writer)
			// A deadline left by the previous request of a kept-alive
			// connection must not apply to this one (nor to the
			// "100 Continue" the server writes when the body is read).
			_ = rc.SetWriteDeadline(time.Time{})
			res.Writer = &deadlineWriter{ResponseWriter: res.Writer, rc: rc, d: l.WriteTimeout}
			var body *deadlineBody
			if req.Body != nil && req.Body != http.NoBody {
				body = &deadlineBody{ReadCloser: req.Body, rc: rc, d: l.BodyTimeout}
				req.Body = body
			}
			err := next(c)
			if body != nil {
				body.finish()
			}
			// The server flushes what is buffered and ends the answer
			// after the handler: bound that write too, from now.
			_ = rc.SetWriteDeadline(time.Now().Add(l.WriteTimeout))
			return err
		}
	}
}

// deadlineWriter gives each write and flush of an answer its own write
// deadline.
type deadlineWriter struct {
	http.ResponseWriter
	rc *http.ResponseController
	d  time.Duration
}

func (w *deadlineWriter) arm() { _ = w.rc.SetWriteDeadline(time.Now().Add(w.d)) }

func (w *deadlineWriter) Write(p []byte) (int, error) {
	w.arm()
	return w.ResponseWriter.Write(p)
}

// FlushError is what http.ResponseController (and so echo.Response)
// calls to flush.
func (w *deadlineWriter) FlushError() error {
	w.arm()
	return w.rc.Flush()
}

func (w *deadlineWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// deadlineBody sets the connection's read deadline at the first read of
// the body. It clears it once the body is read whole: at its end the
// server starts reading the connection in the background, to see the
// client hang up, and that read must not inherit the deadline, or it would
// cancel the run when the deadline passed. A body not read whole keeps
// its deadline, armed after the handler if it was never read (finish):
// the server reads what is left of it before it answers, and a client
// trickling it would hold the connection again.
type deadlineBody struct {
	io.ReadCloser
	rc         *http.ResponseController
	d          time.Duration
	armed, eof bool
}

func (b *deadlineBody) arm() {
	if !b.armed {
		b.armed = true
		_ = b.rc.SetReadDeadline(time.Now().Add(b.d))
	}
}

func (b *deadlineBody) Read(p []byte) (int, error) {
	b.arm()
	n, err := b.ReadCloser.Read(p)
	switch {
	case err == io.EOF && !b.eof:
		b.eof = true
		_ = b.rc.SetReadDeadline(time.Time{})
	case errors.Is(err, os.ErrDeadlineExceeded):
		err = &apiError{Status: http.StatusRequestTimeout, Err: err,
			Msg: fmt.Sprintf("the request body did not arrive within %s of its start: send it in one go (the server's body timeout)", b.d)}
	}
	return n, err
}

// abandon makes the server read none of a body the handler refused
// without reading it: reads time out at once, so after the answer the
// server gives up on the body and closes the connection, rather than
// reading up to 256 KiB of it to keep the connection alive.
func (b *deadlineBody) abandon() {
	b.armed = true
	_ = b.rc.SetReadDeadline(time.Now())
}

// finish bounds the server's read of what the handler left of the body.
func (b *deadlineBody) finish() {
	if !b.eof {
		b.arm()
	}
}
