package modbuild

import (
	"os"
	"path/filepath"
)

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
