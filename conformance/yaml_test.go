package conformance

import (
	"strings"
	"testing"
)

// TestYAMLFlowKeyGuard: a flow mapping key such as {user:plan: basic},
// which goccy/go-yaml reads as key "user" where google-adk's PyYAML reads
// "user:plan", is refused with its position; the quoted and block forms
// read the key whole.
func TestYAMLFlowKeyGuard(t *testing.T) {
	_, err := parseYAML("s.yaml", []byte("state: {user:plan: basic}\n"))
	if err == nil || !strings.Contains(err.Error(), "s.yaml:1:9: a flow mapping key holds ':'") {
		t.Fatalf("err = %v", err)
	}
	for _, src := range []string{"state: {\"user:plan\": basic}\n", "state:\n  user:plan: basic\n"} {
		n, err := parseYAML("s.yaml", []byte(src))
		if err != nil {
			t.Fatalf("%q: %v", src, err)
		}
		if v := n.get("state").get("user:plan"); v == nil || v.value() != "basic" {
			t.Errorf("%q: state = %v, want key user:plan", src, n.get("state").value())
		}
	}
}
