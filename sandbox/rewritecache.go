package sandbox

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"hash/crc32"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
)

// The instrumented rewrite of a module, kept under CacheDir: validating a
// 4 MB Go guest and rewriting it takes a process restarting with a warm
// compilation cache far longer than reading the rewrite back. An entry is
// written only after the original passed checkShape and validation, and
// read back only if its header names the original's sha256 and its
// checksum holds, so a torn, truncated or corrupted file, or one copied
// under another module's name, is rebuilt from the original instead of
// compiled. The rewrite itself is not validated again on a hit; wazero
// validates whatever it compiles.
//
// Trust: whoever can write CacheDir can write an entry that passes these
// checks, as they can replace the machine code wazero loads from it: the
// directory must be as trusted as the binary. The checks are against
// accidents, not forgers.
//
// An entry is the header, then the rewrite:
//
//	magic (8 bytes) | sha256 of the original (32) | length of the rewrite (8, LE) | CRC-32C of the rewrite (4, LE)
//
// It is mapped rather than read where the platform can (mapfile_unix.go):
// reading 4.6 MB into fresh heap memory cost a cold start about 2 ms,
// mostly page faults; wazero copies what it keeps while it decodes, so
// the mapping is released when the compile returns.

const rewriteMagic = "adkrw\x00\x00\x01"

const rewriteHeaderLen = len(rewriteMagic) + sha256.Size + 8 + 4

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// errRewriteChanged: a mapped cache entry faulted while it was read,
// because another process truncated the file.
var errRewriteChanged = errors.New("the cached rewrite changed on disk while it was read")

// rewritePath is where the rewrite of a module is cached; "" without a
// CacheDir. The directory's version changes with the rewrite's output or
// the entry's format.
func (r *Runtime) rewritePath(digest string) (dir, path string) {
	if r.cacheDir == "" {
		return "", ""
	}
	dir = filepath.Join(r.cacheDir, "adkhost-instrumented-v9")
	return dir, filepath.Join(dir, strings.TrimPrefix(digest, "sha256:")+".wasm")
}

// cachedRewrite is a cache entry that passed its checks: body is the
// rewrite, valid until release.
type cachedRewrite struct {
	body    []byte
	release func()
}

// openRewrite returns the cached rewrite of the module with this digest,
// or nil if there is none or none that passes its checks, in which case
// bad reports an entry that exists but failed them.
func (r *Runtime) openRewrite(digest string) (c *cachedRewrite, bad bool) {
	_, path := r.rewritePath(digest)
	if path == "" {
		return nil, false
	}
	b, release, err := mapFile(path)
	if err != nil {
		return nil, !errors.Is(err, os.ErrNotExist)
	}
	var body []byte
	if guardFaults(func() { body = checkRewrite(b, digest) }) != nil || body == nil {
		release()
		return nil, true
	}
	return &cachedRewrite{body: body, release: release}, false
}

// checkRewrite returns the rewrite in entry if its header names the
// module with this digest and the checksum holds, or nil.
func checkRewrite(entry []byte, digest string) []byte {
	sum, ok := digestBytes(digest)
	if !ok || len(entry) < rewriteHeaderLen || string(entry[:len(rewriteMagic)]) != rewriteMagic {
		return nil
	}
	h := entry[len(rewriteMagic):rewriteHeaderLen]
	body := entry[rewriteHeaderLen:]
	if !bytes.Equal(h[:sha256.Size], sum) ||
		binary.LittleEndian.Uint64(h[sha256.Size:]) != uint64(len(body)) ||
		binary.LittleEndian.Uint32(h[sha256.Size+8:]) != crc32.Checksum(body, castagnoli) {
		return nil
	}
	return body
}

// storeRewrite writes the rewrite of the module with this digest. A
// failure to write only costs the next process the rewrite.
func (r *Runtime) storeRewrite(digest string, body []byte) {
	dir, path := r.rewritePath(digest)
	sum, ok := digestBytes(digest)
	if path == "" || !ok {
		return
	}
	entry := make([]byte, 0, rewriteHeaderLen+len(body))
	entry = append(entry, rewriteMagic...)
	entry = append(entry, sum...)
	entry = binary.LittleEndian.AppendUint64(entry, uint64(len(body)))
	entry = binary.LittleEndian.AppendUint32(entry, crc32.Checksum(body, castagnoli))
	writeCacheFile(dir, path, append(entry, body...))
}

// digestBytes returns the sha256 of a "sha256:<hex>" digest.
func digestBytes(digest string) ([]byte, bool) {
	b, err := hex.DecodeString(strings.TrimPrefix(digest, "sha256:"))
	return b, err == nil && len(b) == sha256.Size
}

// guardFaults runs fn, which reads a mapped cache file, and returns
// errRewriteChanged if a read faulted: a file truncated by another process
// while mapped raises SIGBUS on access, which would otherwise crash the
// process. Other panics go on.
func guardFaults(fn func()) (err error) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if p := recover(); p != nil {
			if _, fault := p.(interface{ Addr() uintptr }); fault {
				err = errRewriteChanged
				return
			}
			panic(p)
		}
	}()
	fn()
	return nil
}
