package conformance

import (
	"errors"
	"fmt"
	"github.com/adkhost/adkhost/engine/session"
	"github.com/adkhost/adkhost/internal/pyfmt"
	"strings"
)

// PyError is an exception a scenario raises (`raise` / `error`): its
// PythonType is the class name, its Error() is Python's str(e) (the repr of
// the message for KeyError).
type PyError struct {
	Type, Msg string
}

func (e *PyError) Error() string {
	if e.Type == "KeyError" {
		return pyStrRepr(e.Msg)
	}
	return e.Msg
}

// PythonType names the exception class; the engine uses it as the
// error_code of the error event, like google-adk's type(e).__name__.
func (e *PyError) PythonType() string { return e.Type }

// pyStrRepr is Python's repr() of a str.
func pyStrRepr(s string) string { return pyfmt.StringRepr(s) }

type pythonTyped interface{ PythonType() string }

// errorCoder is the engine's ErrorCoder (error_code of an error event).
type errorCoder interface{ ErrorCode() string }

// pyErrorInfo returns the Python exception class name and str() of err.
//
// Errors that stand for a Python exception name it, with PythonType() (the
// scenario's raised errors, engine/instruction's) or ErrorCode() (the
// engine's ErrorCoder). Wrappers the engine adds for context (ModelError,
// ToolError, ...) are looked through, since google-adk re-raises the
// original exception. An error with no such name anywhere in its chain is
// shown with its Go type, which never matches a golden: that is an engine
// difference, to be fixed in the engine.
func pyErrorInfo(err error) (typ, msg string) {
	var found error
	var name string
	var walk func(e error) bool
	walk = func(e error) bool {
		for ; e != nil; e = errors.Unwrap(e) {
			switch t := e.(type) {
			case pythonTyped:
				found, name = e, t.PythonType()
				return true
			case errorCoder:
				found, name = e, t.ErrorCode()
				return true
			}
			if j, ok := e.(interface{ Unwrap() []error }); ok {
				for _, x := range j.Unwrap() {
					if walk(x) {
						return true
					}
				}
				return false
			}
		}
		return false
	}
	if walk(err) {
		return name, found.Error()
	}
	return "go:" + strings.TrimPrefix(fmt.Sprintf("%T", err), "*"), err.Error()
}

// pyErrorString is f"{type(e).__name__}: {e}".
func pyErrorString(err error) string {
	t, m := pyErrorInfo(err)
	return t + ": " + m
}

// deepCopy copies plain values (maps, slices) so scenario data is never
// aliased by the engine.
func deepCopy(v any) any { return session.DeepCopy(v) }

func deepCopyMap(m map[string]any) map[string]any {
	if m == nil {
		return nil
	}
	return deepCopy(m).(map[string]any)
}
