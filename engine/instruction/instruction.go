// Package instruction resolves instruction templates against session state
// and artifacts, reproducing google-adk's inject_session_state (regex
// engine). State values are formatted as Python's str() would (package
// pyfmt).
package instruction

import (
	"context"
	"encoding/json"
	"errors"
	"strings"

	"google.golang.org/genai"

	"github.com/adkhost/adkhost/callbacks"
	"github.com/adkhost/adkhost/engine/artifact"
	"github.com/adkhost/adkhost/engine/session"
	"github.com/adkhost/adkhost/internal/pyfmt"
)

// Source is what a template is resolved against.
type Source interface {
	// AgentName is the agent whose instruction is being resolved; it
	// appears in error messages.
	AgentName() string
	// State returns the value of a session state key (prefix included).
	State(key string) (any, bool)
	// LoadArtifact returns the newest version of the named artifact, nil
	// and a nil error when there is none, or ErrNoArtifactService when the
	// runner has no artifact service.
	LoadArtifact(ctx context.Context, name string) (*genai.Part, error)
}

// PythonError is implemented by errors that stand for a Python exception;
// PythonType is the exception class name (e.g. "KeyError"), which google-adk
// reports as an event's error_code.
type PythonError interface {
	error
	PythonType() string
}

// MissingKeyError is google-adk's KeyError for a template variable that is
// not in session state and not marked optional.
type MissingKeyError struct {
	Key   string
	Agent string
}

// Message is the text the KeyError is raised with:
// "Context variable not found: `KEY` in agent 'AGENT'."
func (e *MissingKeyError) Message() string {
	return "Context variable not found: `" + e.Key + "` in agent '" + e.Agent + "'."
}

// Error is Python's str() of the KeyError, which is the repr of its message,
// e.g. "Context variable not found: `user_name` in agent 'assistant'."
// including the surrounding double quotes; google-adk puts this text in the
// error event's error_message.
func (e *MissingKeyError) Error() string { return pyfmt.StringRepr(e.Message()) }

// PythonType implements PythonError.
func (e *MissingKeyError) PythonType() string { return "KeyError" }

// MissingArtifactError is google-adk's KeyError for an {artifact.NAME}
// that does not exist and is not marked optional.
type MissingArtifactError struct {
	Name  string
	Agent string
}

// Message is the text the KeyError is raised with:
// "Artifact 'NAME' not found in agent 'AGENT'."
func (e *MissingArtifactError) Message() string {
	return "Artifact '" + e.Name + "' not found in agent '" + e.Agent + "'."
}

// Error is Python's str() of the KeyError: the repr of Message().
func (e *MissingArtifactError) Error() string { return pyfmt.StringRepr(e.Message()) }

// PythonType implements PythonError.
func (e *MissingArtifactError) PythonType() string { return "KeyError" }

type valueError string

func (e valueError) Error() string      { return string(e) }
func (e valueError) PythonType() string { return "ValueError" }

// ErrNoArtifactService is google-adk's ValueError for an {artifact.NAME}
// template when no artifact service is configured. Its Error() is the
// Python str(): "Artifact service is not initialized."
var ErrNoArtifactService error = valueError("Artifact service is not initialized.")

// Inject replaces the placeholders of template as google-adk 2.13's
// inject_session_state does (without Jinja2):
//
// A placeholder is a match of the Python regular expression
// (?<![\$\{\\]){+[^{}]*}+ : one or more '{' not preceded by '$', '{' or '\',
// text without braces, one or more '}'. Doubled braces therefore do not
// escape: "{{x}}" is replaced like "{x}", while "${x}" and "\{x}" are left
// alone. The name is the text between the braces with Python whitespace
// stripped; a trailing '?' marks it optional.
//
//   - "artifact.NAME": the newest version of artifact NAME, as ArtifactText;
//     when missing, "" if optional, else *MissingArtifactError.
//     ErrNoArtifactService (or any other Source error) is returned as is.
//   - a Python identifier, or "app:", "user:" or "temp:" followed by one:
//     the state value formatted as Python's str() (pyfmt.Str: a float64
//     holding a whole number prints as the JSON integer it most likely
//     was), "" for a nil value; when missing, "" if optional, else
//     *MissingKeyError.
//   - anything else (e.g. "{not a var}", "{}", JSON such as {"a": 1}): the
//     placeholder is left untouched, braces included.
//
// Placeholders are resolved left to right and the first error stops the
// work. A template without '{' is returned unchanged.
func Inject(ctx context.Context, template string, src Source) (string, error) {
	if !strings.Contains(template, "{") {
		return template, nil
	}
	var out strings.Builder
	last := 0
	n := len(template)
	for i := 0; i < n; {
		start, end, ok := matchAt(template, i)
		if !ok {
			i++
			continue
		}
		repl, err := replace(ctx, template[start:end], src)
		if err != nil {
			return "", err
		}
		out.WriteString(template[last:start])
		out.WriteString(repl)
		last, i = end, end
	}
	out.WriteString(template[last:])
	return out.String(), nil
}

// matchAt reports whether the placeholder pattern matches at byte i.
func matchAt(s string, i int) (start, end int, ok bool) {
	if s[i] != '{' {
		return 0, 0, false
	}
	if i > 0 {
		switch s[i-1] {
		case '$', '{', '\\':
			return 0, 0, false
		}
	}
	j := i
	for j < len(s) && s[j] == '{' {
		j++
	}
	for j < len(s) && s[j] != '{' && s[j] != '}' {
		j++
	}
	if j == len(s) || s[j] != '}' {
		return 0, 0, false
	}
	for j < len(s) && s[j] == '}' {
		j++
	}
	return i, j, true
}

func replace(ctx context.Context, match string, src Source) (string, error) {
	name := pyfmt.Strip(strings.TrimRight(strings.TrimLeft(match, "{"), "}"))
	optional := false
	if strings.HasSuffix(name, "?") {
		optional = true
		name = strings.TrimSuffix(name, "?")
	}
	if art, ok := strings.CutPrefix(name, "artifact."); ok {
		part, err := src.LoadArtifact(ctx, art)
		if err != nil {
			return "", err
		}
		if part == nil {
			if optional {
				return "", nil
			}
			return "", &MissingArtifactError{Name: art, Agent: src.AgentName()}
		}
		return ArtifactText(part, art), nil
	}
	if !IsValidStateName(name) {
		return match, nil
	}
	v, ok := src.State(name)
	if !ok {
		if optional {
			return "", nil
		}
		return "", &MissingKeyError{Key: name, Agent: src.AgentName()}
	}
	if v == nil {
		return "", nil
	}
	if o, ok := src.(KeyOrderSource); ok {
		return pyfmt.StrOrdered(v, o.StateKeyOrder(name)), nil
	}
	return pyfmt.Str(v), nil
}

// KeyOrderSource is a Source that knows the order in which the dicts of
// its state values were written (Python dicts keep it; Go maps do not):
// StateKeyOrder returns a key's key-order hint (see
// session.Session.StateKeyOrder), or nil. Without it dicts print sorted.
type KeyOrderSource interface {
	StateKeyOrder(key string) json.RawMessage
}

// IsValidStateName reports whether name may be substituted from state: a
// Python identifier, or one of the prefixes app:, user:, temp: followed by
// a Python identifier (google-adk's _is_valid_state_name).
func IsValidStateName(name string) bool {
	prefix, rest, found := strings.Cut(name, ":")
	if !found {
		return pyfmt.IsIdentifier(name)
	}
	if strings.Contains(rest, ":") {
		return false
	}
	switch prefix + ":" {
	case session.AppPrefix, session.UserPrefix, session.TempPrefix:
		return pyfmt.IsIdentifier(rest)
	}
	return false
}

// NewSource returns the Source google-adk resolves instructions against
// during an invocation: the state of ctx's session (google-adk reads
// invocation_context.session.state, not a callback's pending delta) and the
// artifacts of ctx's app, user and session in arts, which may be nil.
func NewSource(ctx callbacks.ReadonlyContext, arts artifact.Service) Source {
	return &invocationSource{rc: ctx, arts: arts}
}

type invocationSource struct {
	rc   callbacks.ReadonlyContext
	arts artifact.Service
}

func (s *invocationSource) AgentName() string { return s.rc.AgentName() }

func (s *invocationSource) State(key string) (any, bool) {
	sess := s.rc.Session()
	if sess == nil {
		return nil, false
	}
	return sess.StateValue(key)
}

func (s *invocationSource) StateKeyOrder(key string) json.RawMessage {
	sess := s.rc.Session()
	if sess == nil {
		return nil
	}
	return sess.StateKeyOrder(key)
}

func (s *invocationSource) LoadArtifact(ctx context.Context, name string) (*genai.Part, error) {
	if s.arts == nil {
		return nil, ErrNoArtifactService
	}
	k := artifact.Key{AppName: s.rc.AppName(), UserID: s.rc.UserID(), Name: name}
	if sess := s.rc.Session(); sess != nil {
		k = artifact.Key{AppName: sess.AppName, UserID: sess.UserID, SessionID: sess.ID, Name: name}
	}
	part, err := s.arts.Load(ctx, k, artifact.Latest)
	if errors.Is(err, artifact.ErrNotFound) {
		return nil, nil
	}
	return part, err
}
