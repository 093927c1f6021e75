package modbuild

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// runtimeKind names one language's runtime: the language for messages, the
// environment variable that points at it, and sub, which is at once its
// folder under build/, its make target and its --flag.
type runtimeKind struct{ lang, env, sub string }

var (
	pythonKind = runtimeKind{"Python", PythonRuntimeEnv, "python-runtime"}
	tsKind     = runtimeKind{"TypeScript", TSRuntimeEnv, "ts-runtime"}
)

// findRuntime looks for k's runtime in dir if given, else in k's
// environment variable, else in runtimeCandidates; check reads the first
// of those that is a directory. When none is, the error lists each place
// and says how to build the runtime.
func findRuntime[T any](k runtimeKind, dir string, check func(string) (*T, error)) (*T, error) {
	var cands [][2]string
	switch env := os.Getenv(k.env); {
	case dir != "":
		cands = [][2]string{{dir, "--" + k.sub}}
	case env != "":
		cands = [][2]string{{env, k.env}}
	default:
		cands = runtimeCandidates(k.sub)
	}
	var tried []string
	for _, c := range cands {
		if st, err := os.Stat(c[0]); err != nil || !st.IsDir() {
			tried = append(tried, fmt.Sprintf("%s (%s): not there", c[0], c[1]))
			continue
		}
		return check(c[0])
	}
	return nil, fmt.Errorf("the %s runtime is not built: looked in\n  %s\nbuild it with `make %s` in an adkhost checkout (it writes build/%s), or point --%s or %s at one",
		k.lang, strings.Join(tried, "\n  "), k.sub, k.sub, k.sub, k.env)
}

// missingFiles lists, as "path (what)", the files of a runtime that are
// not there.
func missingFiles(files [][2]string) []string {
	var missing []string
	for _, f := range files {
		if _, err := os.Stat(f[0]); err != nil {
			missing = append(missing, fmt.Sprintf("%s (%s)", f[0], f[1]))
		}
	}
	return missing
}

// incomplete is the error for a runtime in dir that lacks missing.
func (k runtimeKind) incomplete(dir string, missing []string) error {
	return fmt.Errorf("the %s runtime in %s is incomplete; missing:\n  %s\nrebuild it with `make %s`", k.lang, dir, strings.Join(missing, "\n  "), k.sub)
}

// runtimeCandidates are the directories a runtime named sub
// ("python-runtime", "ts-runtime") is looked for in, in order, each with
// why: build/SUB beside the executable's directory (bin/adkhost in a
// checkout), in the checkout holding the current directory (go run,
// tests), then in the user's cache directory.
func runtimeCandidates(sub string) [][2]string {
	var cands [][2]string
	if exe, err := os.Executable(); err == nil {
		cands = append(cands, [2]string{filepath.Join(filepath.Dir(filepath.Dir(exe)), "build", sub), "beside the executable"})
	}
	if wd, err := os.Getwd(); err == nil {
		for d := wd; ; d = filepath.Dir(d) {
			if _, err := os.Stat(filepath.Join(d, "mk", "python.mk")); err == nil {
				cands = append(cands, [2]string{filepath.Join(d, "build", sub), "the checkout"})
				break
			}
			if filepath.Dir(d) == d {
				break
			}
		}
	}
	if cache, err := os.UserCacheDir(); err == nil {
		cands = append(cands, [2]string{filepath.Join(cache, "adkhost", sub), "the user cache"})
	}
	return cands
}
