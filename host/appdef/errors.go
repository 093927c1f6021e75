package appdef

import (
	"errors"
	"strconv"
	"strings"

	"github.com/adkhost/adkhost/internal/suggest"
)

// Error is a definition error, located in its file.
type Error struct {
	// File is the path in Source.Files; Line and Column are 1-based, 0 when
	// the error concerns the whole file (e.g. a missing root file).
	File         string
	Line, Column int
	// Field is the dotted path of the field at fault, e.g.
	// "tools[1].module"; "" for a file-level error (e.g. a syntax error).
	Field string
	Msg   string
	// Err is the cause, when another package reported it (a module or
	// model resolver, the sandbox); errors.Is and errors.As reach it.
	Err error
}

func (e *Error) Error() string {
	var sb strings.Builder
	sb.WriteString(e.File)
	if e.Line > 0 {
		sb.WriteString(":" + strconv.Itoa(e.Line) + ":" + strconv.Itoa(e.Column))
	}
	sb.WriteString(": ")
	if e.Field != "" {
		sb.WriteString(e.Field + ": ")
	}
	sb.WriteString(e.Msg)
	return sb.String()
}

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Err }

// Errors returns the *Error values in err: err itself, or those it joins.
func Errors(err error) []*Error {
	var out []*Error
	var walk func(error)
	walk = func(err error) {
		if j, ok := err.(interface{ Unwrap() []error }); ok {
			for _, e := range j.Unwrap() {
				walk(e)
			}
			return
		}
		var e *Error
		if errors.As(err, &e) {
			out = append(out, e)
		}
	}
	if err != nil {
		walk(err)
	}
	return out
}

// didYouMean is the hint naming the candidate closest to got, if any.
func didYouMean(got string, candidates []string) string {
	return suggest.DidYouMean(got, candidates)
}
