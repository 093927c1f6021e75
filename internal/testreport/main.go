// Command testreport reads `go test -json` from stdin and prints what plain
// `go test` would (each package's result line, and the whole output of
// every failed test), then a closing list of the tests that skipped and
// why. `make test` pipes through it so that a suite skipped for a missing
// toolchain is visible instead of silent; it exits 1 if any test or
// package failed.
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
)

// event is one line of test2json's output.
type event struct {
	Action  string
	Package string
	Test    string
	Output  string
}

type key struct{ pkg, test string }

func main() {
	failed, err := report(os.Stdin, os.Stdout)
	if err != nil {
		fmt.Fprintln(os.Stderr, "testreport:", err)
		os.Exit(2)
	}
	if failed {
		os.Exit(1)
	}
}

// report copies the results of r to w and reports whether anything failed.
func report(r io.Reader, w io.Writer) (failed bool, err error) {
	out := map[key][]string{} // output of each test (and package: test "")
	var skipped []key
	counts := map[string]int{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		line := sc.Bytes()
		var e event
		if json.Unmarshal(line, &e) != nil || e.Action == "" {
			// Not test2json: a build error or vet output; show it as is.
			fmt.Fprintln(w, string(line))
			continue
		}
		k := key{e.Package, e.Test}
		switch e.Action {
		case "build-output":
			fmt.Fprint(w, e.Output)
		case "build-fail":
			failed = true
		case "output":
			out[k] = append(out[k], e.Output)
			if e.Test == "" && isResultLine(e.Output) {
				fmt.Fprint(w, e.Output)
			}
		case "pass":
			if e.Test != "" {
				counts["passed"]++
			}
			delete(out, k)
		case "skip":
			if e.Test != "" {
				counts["skipped"]++
				skipped = append(skipped, k)
			} else {
				delete(out, k)
			}
		case "fail":
			failed = true
			if e.Test != "" {
				counts["failed"]++
				fmt.Fprint(w, strings.Join(out[k], ""))
			} else {
				// A package that failed without a failing test (build
				// error, panic, timeout): its own output says why.
				fmt.Fprint(w, strings.Join(nonResult(out[k]), ""))
			}
			delete(out, k)
		}
	}
	if err := sc.Err(); err != nil {
		return true, err
	}
	if len(skipped) > 0 {
		sort.Slice(skipped, func(i, j int) bool {
			if skipped[i].pkg != skipped[j].pkg {
				return skipped[i].pkg < skipped[j].pkg
			}
			return skipped[i].test < skipped[j].test
		})
		fmt.Fprintf(w, "\nskipped tests (%d), and why:\n", len(skipped))
		for _, k := range skipped {
			fmt.Fprintf(w, "  %s %s: %s\n", k.pkg, k.test, skipReason(out[k]))
		}
	}
	fmt.Fprintf(w, "\ntests: %d passed, %d failed, %d skipped\n", counts["passed"], counts["failed"], counts["skipped"])
	return failed, nil
}

// isResultLine reports whether a package-level output line is go test's
// summary of the package ("ok ...", "FAIL ...", "? ... [no test files]").
func isResultLine(s string) bool {
	return strings.HasPrefix(s, "ok  \t") || strings.HasPrefix(s, "FAIL\t") || strings.HasPrefix(s, "?   \t")
}

func nonResult(lines []string) []string {
	var out []string
	for _, l := range lines {
		if !isResultLine(l) {
			out = append(out, l)
		}
	}
	return out
}

// skipReason is the message a test gave t.Skip: its output without the
// "=== RUN" and "--- SKIP" lines, on one line.
func skipReason(lines []string) string {
	var msg []string
	for _, l := range lines {
		t := strings.TrimSpace(l)
		if t == "" || strings.HasPrefix(t, "=== ") || strings.HasPrefix(t, "--- SKIP") {
			continue
		}
		// "file_test.go:12: message" -> "message (file_test.go:12)"
		if i := strings.Index(t, ": "); i > 0 && strings.Contains(t[:i], ".go:") {
			t = t[i+2:] + " (" + t[:i] + ")"
		}
		msg = append(msg, t)
	}
	if len(msg) == 0 {
		return "(no reason given)"
	}
	return strings.Join(msg, " ")
}
