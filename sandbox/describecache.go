package sandbox

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/adkhost/adkhost/abi"
)

// The describe message of a module, kept under CacheDir: with a warm
// compilation cache, running adkhost_describe (an instantiation, a Go
// guest's runtime initialization, the call) was about a sixth of a cold
// start. The message is a function of the module's bytes: describe runs
// with no grants, so the guest sees no environment, a fixed clock and a
// fixed random source. It is keyed by the module's sha256 and the ABI
// version, and only a describe that passed every check is written.
//
// Trust: whoever can write CacheDir can already replace the compiled
// machine code wazero loads from it, so a forged describe message gives
// them nothing more; it is still decoded strictly and validated again, and
// its hooks checked against the exports, on every load.

// describeDir is the directory of the cached describe messages.
func (r *Runtime) describeDir() string {
	return filepath.Join(r.cacheDir, "adkhost-describe-abi"+strconv.Itoa(abi.Version))
}

func (r *Runtime) describePath(digest string) string {
	return filepath.Join(r.describeDir(), strings.TrimPrefix(digest, "sha256:")+".json")
}

// cachedDescribe returns the cached describe message of the module with
// this digest, or nil if there is none, or none that decodes and
// validates.
func (r *Runtime) cachedDescribe(digest string) *abi.Describe {
	if r.cacheDir == "" {
		return nil
	}
	b, err := os.ReadFile(r.describePath(digest))
	if err != nil {
		return nil
	}
	var d abi.Describe
	if abi.Decode(b, &d, 0) != nil || d.Validate() != nil {
		return nil
	}
	return &d
}

// storeDescribe writes a module's describe message, the encoded output
// of its adkhost_describe. A failure to write only costs the next process
// the describe call.
func (r *Runtime) storeDescribe(digest string, raw []byte) {
	if r.cacheDir == "" {
		return
	}
	writeCacheFile(r.describeDir(), r.describePath(digest), raw)
}

// writeCacheFile writes b to path through a temporary file in dir, so that
// a concurrent reader sees the whole file or none.
func writeCacheFile(dir, path string, b []byte) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return
	}
	f, err := os.CreateTemp(dir, "*.tmp")
	if err != nil {
		return
	}
	_, werr := f.Write(b)
	if cerr := f.Close(); werr == nil && cerr == nil {
		werr = os.Rename(f.Name(), path)
	}
	if werr != nil {
		os.Remove(f.Name())
	}
}
