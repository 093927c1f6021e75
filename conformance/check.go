// Package conformance runs the declarative scenarios of scenarios/*.yaml on
// adkhost and compares the traces with the goldens google-adk 2.13 produced
// (see FORMAT.md; python/run_scenario.py is the Python half).
package conformance

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
)

// Outcome is the result of checking one scenario.
type Outcome struct {
	File  string
	Name  string
	Err   error // harness failure: the scenario could not be loaded or run
	Diff  *Diff // nil when the trace matches
	Notes []string
	Trace []byte // adkhost's trace (nil on Err)
}

// Passed reports whether adkhost reproduced the golden exactly.
func (o *Outcome) Passed() bool { return o.Err == nil && o.Diff == nil }

// Report is a readable description of a failure.
func (o *Outcome) Report() string {
	var b strings.Builder
	switch {
	case o.Err != nil:
		fmt.Fprintf(&b, "error: %v\n", o.Err)
	case o.Diff != nil:
		b.WriteString(o.Diff.String())
	}
	for _, n := range o.Notes {
		fmt.Fprintf(&b, "note: %s\n", n)
	}
	return b.String()
}

// CheckFile runs one scenario on adkhost and compares it with the golden
// trace read from goldenDir/<name>.json.
func CheckFile(path, goldenDir string, opt CompareOptions) *Outcome {
	o, sc := loadForCheck(path)
	if sc == nil {
		return o
	}
	golden, err := os.ReadFile(filepath.Join(goldenDir, sc.Name+".json"))
	if err != nil {
		o.Err = fmt.Errorf("no golden trace: %w", err)
		return o
	}
	return check(o, sc, golden, opt)
}

// CheckAgainst runs one scenario and compares it with the given golden.
func CheckAgainst(path string, golden []byte, opt CompareOptions) *Outcome {
	o, sc := loadForCheck(path)
	if sc == nil {
		return o
	}
	return check(o, sc, golden, opt)
}

// loadForCheck loads a scenario and starts its outcome; on a load error the
// scenario is nil and the outcome carries the error.
func loadForCheck(path string) (*Outcome, *Scenario) {
	o := &Outcome{File: path, Name: strings.TrimSuffix(filepath.Base(path), filepath.Ext(path))}
	sc, err := LoadScenario(path)
	if err != nil {
		o.Err = err
		return o, nil
	}
	o.Name = sc.Name
	return o, sc
}

func check(o *Outcome, sc *Scenario, golden []byte, opt CompareOptions) *Outcome {
	res, err := RunWith(sc, RunOptions{Wasm: opt.Wasm})
	if err != nil {
		o.Err = err
		return o
	}
	o.Trace = res.Trace
	o.Notes = res.Notes
	o.Diff = Compare(golden, res.Trace, opt)
	return o
}

// ---------------------------------------------------------------------------
// KNOWN_DIFFS.md

var knownHeading = regexp.MustCompile("^##\\s+`?([A-Za-z0-9_]+)`?\\s*$")

// LoadKnownDiffs returns the scenario names listed in KNOWN_DIFFS.md (one
// "## <name>" section per scenario) with their section text. A missing file
// lists nothing.
func LoadKnownDiffs(path string) (map[string]string, error) {
	data, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return map[string]string{}, nil
	}
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	var cur string
	var body strings.Builder
	flush := func() {
		if cur != "" {
			out[cur] = strings.TrimSpace(body.String())
		}
		body.Reset()
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		line := sc.Text()
		if m := knownHeading.FindStringSubmatch(line); m != nil {
			flush()
			cur = m[1]
			if _, dup := out[cur]; dup {
				return nil, fmt.Errorf("%s: scenario %s is listed twice", path, cur)
			}
			out[cur] = ""
			continue
		}
		if strings.HasPrefix(line, "# ") || strings.HasPrefix(line, "## ") {
			flush()
			cur = ""
			continue
		}
		body.WriteString(line + "\n")
	}
	flush()
	return out, sc.Err()
}

// ---------------------------------------------------------------------------
// The Python oracle.

// DefaultVenv returns the virtualenv holding google-adk: $ADKCONF_VENV, else
// conformance/.venv under root if it exists, else /tmp/adkvenv.
func DefaultVenv(root string) string {
	if v := os.Getenv("ADKCONF_VENV"); v != "" {
		return v
	}
	if v := filepath.Join(root, "conformance", ".venv"); dirExists(v) {
		return v
	}
	return "/tmp/adkvenv"
}

func dirExists(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.IsDir()
}

// RunPython runs the Python runner over scenarioDir, writing traces to
// outDir. Scenarios it rejects are missing from outDir; its stderr is
// returned for the report.
func RunPython(venv, runnerScript, scenarioDir, outDir string) (stderr string, err error) {
	py := filepath.Join(venv, "bin", "python")
	if _, err := os.Stat(py); err != nil {
		return "", fmt.Errorf("no Python in virtualenv %s (make conformance-golden creates conformance/.venv): %w", venv, err)
	}
	cmd := exec.Command(py, runnerScript, "--dir", scenarioDir, "--out", outDir)
	var eb bytes.Buffer
	cmd.Stderr = &eb
	err = cmd.Run()
	if _, ok := err.(*exec.ExitError); ok {
		// Exit 1: some scenarios failed; the others were written.
		err = nil
	}
	return eb.String(), err
}
