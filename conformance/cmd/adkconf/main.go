// Command adkconf runs the conformance scenarios on adkhost and compares
// each trace with google-adk's: the committed goldens, or (-python) traces
// produced live by the Python runner. It prints the first difference of
// every failing scenario; its last line is always
//
//	conformance: N passed, M failed
//
// Usage:
//
//	go run ./conformance/cmd/adkconf [-scenarios DIR] [-golden DIR | -python [-venv DIR]]
//	    [-run REGEXP] [-ignore key,key] [-out DIR] [-v] [-fail] [-wasm]
//
// -wasm runs the scenarios' tools, callbacks and plugins in the conformance
// Wasm guest (conformance/wasmguest) through package host instead of as
// native Go; the traces are compared with the same goldens.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/adkhost/adkhost/conformance"
)

func main() {
	os.Exit(run())
}

func run() int {
	scenarios := flag.String("scenarios", "conformance/scenarios", "directory of scenario YAML files")
	golden := flag.String("golden", "conformance/golden", "directory of golden traces")
	python := flag.Bool("python", false, "compare with traces the Python runner (google-adk) produces now, instead of -golden")
	venv := flag.String("venv", "", "virtualenv with google-adk for -python (default $ADKCONF_VENV, conformance/.venv, /tmp/adkvenv)")
	runner := flag.String("runner", "", "Python runner script (default conformance/python/run_scenario.py, or ../python/run_scenario.py next to -scenarios)")
	filter := flag.String("run", "", "only scenarios whose name matches this regular expression")
	ignore := flag.String("ignore", "", "comma-separated object keys to leave out of the comparison (to look past a known difference, e.g. node_info)")
	outDir := flag.String("out", "", "write adkhost's traces to this directory")
	known := flag.String("known", "", "KNOWN_DIFFS.md, to annotate failures (default: the one beside -scenarios, else the project's conformance/KNOWN_DIFFS.md)")
	verbose := flag.Bool("v", false, "also list passing scenarios")
	failExit := flag.Bool("fail", false, "exit with status 1 when a scenario fails (by default only setup errors do, so that under go run the summary stays the last line)")
	wasmMode := flag.Bool("wasm", false, "run tools, callbacks and plugins as Wasm modules (the conformance guest, built with GOOS=wasip1 and cached under $TMPDIR)")
	guest := flag.String("guest", "go", "with -wasm: the language of the conformance guest, go (conformance/wasmguest) or python (conformance/pyguest/guest.py; needs make python-runtime)")
	flag.Parse()

	var re *regexp.Regexp
	if *filter != "" {
		var err error
		if re, err = regexp.Compile(*filter); err != nil {
			fmt.Fprintln(os.Stderr, "adkconf: -run:", err)
			return 2
		}
	}
	var opt conformance.CompareOptions
	if *ignore != "" {
		opt.IgnoreKeys = strings.Split(*ignore, ",")
	}
	if *wasmMode {
		ctx := context.Background()
		w, err := conformance.NewWasmGuest(ctx, *guest)
		if err != nil {
			fmt.Fprintln(os.Stderr, "adkconf: -wasm:", err)
			fmt.Println("conformance: 0 passed, 0 failed")
			return 1
		}
		defer w.Close(ctx)
		opt.Wasm = w
	}
	base := filepath.Dir(filepath.Clean(*scenarios)) // conformance/
	if *known == "" {
		*known = defaultKnownDiffs(base)
	}
	knownDiffs, err := conformance.LoadKnownDiffs(*known)
	if err != nil {
		fmt.Fprintln(os.Stderr, "adkconf:", err)
		knownDiffs = map[string]string{}
	}

	files, err := conformance.ScenarioFiles(*scenarios)
	if err != nil || len(files) == 0 {
		fmt.Fprintf(os.Stderr, "adkconf: no scenarios in %s (%v)\n", *scenarios, err)
		fmt.Println("conformance: 0 passed, 0 failed")
		return 1
	}
	goldenDir := *golden
	if *python {
		script := *runner
		if script == "" {
			script = "conformance/python/run_scenario.py"
			if _, err := os.Stat(script); err != nil {
				script = filepath.Join(base, "python", "run_scenario.py")
			}
		}
		v := *venv
		if v == "" {
			v = conformance.DefaultVenv(filepath.Dir(base))
		}
		tmp, err := os.MkdirTemp("", "adkconf-golden-")
		if err != nil {
			fmt.Fprintln(os.Stderr, "adkconf:", err)
			return 1
		}
		defer os.RemoveAll(tmp)
		fmt.Fprintf(os.Stderr, "adkconf: running the Python runner (%s) ...\n", v)
		stderr, err := conformance.RunPython(v, script, *scenarios, tmp)
		if err != nil {
			fmt.Fprintln(os.Stderr, "adkconf:", err)
			fmt.Println("conformance: 0 passed, 0 failed")
			return 1
		}
		for _, line := range strings.Split(stderr, "\n") {
			if strings.HasPrefix(line, "FAIL ") {
				fmt.Fprintln(os.Stderr, "python:", line)
			}
		}
		goldenDir = tmp
	}
	if *outDir != "" {
		if err := os.MkdirAll(*outDir, 0o755); err != nil {
			fmt.Fprintln(os.Stderr, "adkconf:", err)
			return 1
		}
	}

	passed, failed := 0, 0
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), filepath.Ext(f))
		if re != nil && !re.MatchString(name) {
			continue
		}
		o := conformance.CheckFile(f, goldenDir, opt)
		if *outDir != "" && o.Trace != nil {
			if err := os.WriteFile(filepath.Join(*outDir, o.Name+".json"), o.Trace, 0o644); err != nil {
				fmt.Fprintln(os.Stderr, "adkconf:", err)
			}
		}
		if o.Passed() {
			passed++
			if *verbose {
				fmt.Printf("ok   %s\n", o.Name)
			}
			continue
		}
		failed++
		tag := ""
		if _, ok := knownDiffs[o.Name]; ok {
			tag = " (listed in KNOWN_DIFFS.md)"
		}
		if gap, ok := conformance.WasmGaps[o.Name]; ok && *wasmMode {
			tag += " (Wasm gap: " + gap + ")"
		}
		fmt.Printf("FAIL %s%s\n%s\n", o.Name, tag, indent(o.Report()))
	}
	fmt.Printf("conformance: %d passed, %d failed\n", passed, failed)
	if failed > 0 && *failExit {
		return 1
	}
	return 0
}

func indent(s string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	for i, l := range lines {
		lines[i] = "    " + l
	}
	return strings.Join(lines, "\n")
}

// defaultKnownDiffs is the KNOWN_DIFFS.md beside the scenarios' directory
// or, for scenarios kept elsewhere, the project's own list: the nearest
// conformance/KNOWN_DIFFS.md from the working directory up.
func defaultKnownDiffs(base string) string {
	beside := filepath.Join(base, "KNOWN_DIFFS.md")
	if _, err := os.Stat(beside); err == nil {
		return beside
	}
	dir, err := os.Getwd()
	for err == nil {
		p := filepath.Join(dir, "conformance", "KNOWN_DIFFS.md")
		if _, serr := os.Stat(p); serr == nil {
			return p
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			break
		}
		dir = parent
	}
	return beside
}
