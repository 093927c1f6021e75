package appdef_test

import (
	"strings"
	"testing"

	"github.com/adkhost/adkhost/host/appdef"
)

// TestYAMLTags: a tag that would change what a value means is refused
// where it stands. goccy/go-yaml's AST keeps tags and the loader stripped
// them, so "!!binary aGk=" was read as the text "aGk=", "!!str 5" as the
// number 5, and "!!python/object:..." or a local "!foo" loaded quietly,
// where google-adk's yaml.safe_load reads bytes, the text "5", or refuses
// the file. A tag naming the kind its value has anyway is harmless.
func TestYAMLTags(t *testing.T) {
	for _, tc := range []struct {
		name, yaml, want string
	}{
		{"python object", "name: !!python/object:os.system a\nmodel: m\ninstruction: x\n", `root_agent.yaml:1:7: YAML tag !!python/object:os.system is not supported`},
		{"binary", "name: a\nmodel: m\ninstruction: !!binary aGVsbG8=\n", `root_agent.yaml:3:14: YAML tag !!binary is not supported`},
		{"local tag", "name: a\nmodel: !foo m\ninstruction: x\n", "YAML tag !foo is not supported"},
		{"verbatim tag", "name: a\nmodel: m\ninstruction: !<tag:example.com:x> x\n", "YAML tag !<tag:example.com:x> is not supported"},
		{"str on a number", "name: a\nmodel: m\ninstruction: !!str 5\n", `YAML tag !!str on a number: write the value as it is, or quote it for a string ("5")`},
		{"int on a string", "name: a\nmodel: m\ninstruction: x\ngenerate_content_config: {max_output_tokens: !!int '5'}\n", "YAML tag !!int on a string"},
		{"float on an integer", "name: a\nmodel: m\ninstruction: x\ngenerate_content_config: {temperature: !!float 1}\n", "root_agent.yaml:4:40: YAML tag !!float on the integer 1: write 1.0 for a float"},
		{"set", "name: a\nmodel: m\ninstruction: x\ngenerate_content_config:\n  labels: !!set {a, b}\n", "YAML tag !!set is not supported"},
		{"nested in a list", "name: a\nmodel: m\ninstruction: x\ntools:\n  - !!python/name:os.system\n", "YAML tag !!python/name:os.system is not supported"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err, _, _ := loadErr(t, map[string][]byte{"root_agent.yaml": []byte(tc.yaml)})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want it to contain %q", err, tc.want)
			}
		})
	}
	for _, ok := range []string{
		"name: a\nmodel: m\ninstruction: !!str x\n",
		"name: a\nmodel: m\ninstruction: !!str 'x'\n",
		"name: a\nmodel: m\ninstruction: x\ngenerate_content_config: !!map {temperature: !!float 0.5, max_output_tokens: !!int 5}\n",
		"name: a\nmodel: m\ninstruction: !<tag:yaml.org,2002:str> x\n",
	} {
		if err, _, _ := loadErr(t, map[string][]byte{"root_agent.yaml": []byte(ok)}); err != nil {
			t.Errorf("%q: %v", ok, err)
		}
	}
}

// TestErrorsQuoteBounded: an error quotes at most a bounded slice of the
// value or key it is about. Errors quoted whole values, so a 200 KB key
// made a 400 KB message, and one 9 KB scalar aliased 100 times where a
// tool belongs made 100 errors quoting it: the 422 answer (which carries
// each message twice) grew to megabytes from a 10 KB definition.
func TestErrorsQuoteBounded(t *testing.T) {
	big := strings.Repeat("t", 9000)
	aliased := "name: a\nmodel: m\ninstruction: x\ndescription: &b " + big + "\ntools:\n" + strings.Repeat("  - {name: *b}\n", 100)
	for name, y := range map[string]string{
		"long key":            "name: a\nmodel: m\ninstruction: x\n" + strings.Repeat("k", 200000) + ": c\n",
		"long agent name":     "name: " + strings.Repeat("a", 200000) + "-\nmodel: m\ninstruction: x\n",
		"long config_path":    "name: a\nmodel: m\ninstruction: x\nsub_agents:\n  - config_path: " + strings.Repeat("t", 200000) + "\n",
		"huge scalar aliased": aliased,
	} {
		t.Run(name, func(t *testing.T) {
			err, _, _ := loadErr(t, map[string][]byte{"root_agent.yaml": []byte(y)})
			if err == nil {
				t.Fatal("loaded")
			}
			for _, e := range appdef.Errors(err) {
				if n := len(e.Error()); n > 4<<10 {
					t.Fatalf("one error is %d bytes: %.200s…", n, e.Error())
				}
			}
			// At most 100 errors of at most ~2 KiB each.
			if n := len(err.Error()); n > 256<<10 {
				t.Errorf("the errors are %d bytes together", n)
			}
		})
	}
}
