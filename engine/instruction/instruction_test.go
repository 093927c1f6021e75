package instruction

import (
	"errors"
	"testing"
)

func TestIsValidStateName(t *testing.T) {
	cases := map[string]bool{
		"x": true, "_": true, "_x1": true, "café": true, "Ⅻ": true, "x·y": true,
		"app:x": true, "user:x": true, "temp:x": true,
		"": false, "1x": false, "a b": false, "a-b": false, "a.b": false,
		"app:": false, ":x": false, "foo:x": false, "app:x:y": false, "app:1": false,
		"App:x": false, "\u0e33": false, "x\u0e33": true, "\u309b": false,
		"x\xff": false, "x\ufffd": false,
	}
	for in, want := range cases {
		if got := IsValidStateName(in); got != want {
			t.Errorf("IsValidStateName(%q) = %v, want %v", in, got, want)
		}
	}
}

func TestErrors(t *testing.T) {
	k := &MissingKeyError{Key: "user_name", Agent: "assistant"}
	if got, want := k.Message(), "Context variable not found: `user_name` in agent 'assistant'."; got != want {
		t.Errorf("Message = %q, want %q", got, want)
	}
	if got, want := k.Error(), "\"Context variable not found: `user_name` in agent 'assistant'.\""; got != want {
		t.Errorf("Error = %q, want %q", got, want)
	}
	a := &MissingArtifactError{Name: "f.txt", Agent: "root"}
	if got, want := a.Error(), `"Artifact 'f.txt' not found in agent 'root'."`; got != want {
		t.Errorf("Error = %q, want %q", got, want)
	}
	// Python's repr switches quotes only when the text has no double quote.
	q := &MissingKeyError{Key: "k", Agent: `a"b`}
	if got, want := q.Error(), "'Context variable not found: `k` in agent \\'a\"b\\'.'"; got != want {
		t.Errorf("Error = %q, want %q", got, want)
	}
	var pe PythonError
	if !errors.As(ErrNoArtifactService, &pe) || pe.PythonType() != "ValueError" || pe.Error() != "Artifact service is not initialized." {
		t.Errorf("ErrNoArtifactService = %v", ErrNoArtifactService)
	}
}
