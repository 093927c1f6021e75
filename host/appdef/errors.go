package appdef

import (
	"errors"
	"strconv"
	"strings"
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

// didYouMean returns " (did you mean X?)" for the candidate closest to
// got, when one is close enough to be a likely typo, else "".
func didYouMean(got string, candidates []string) string {
	best, bestD := "", len(got)/3+2
	for _, c := range candidates {
		if d := editDistance(strings.ToLower(got), strings.ToLower(c)); d < bestD {
			best, bestD = c, d
		}
	}
	if best == "" {
		return ""
	}
	return " (did you mean " + best + "?)"
}

// editDistance is the Levenshtein distance of a and b, in bytes.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
