//go:build unix

package sandbox

import (
	"fmt"
	"os"
	"syscall"
)

// mapFile maps the file at path read-only. release unmaps it; nothing may
// use the bytes after.
func mapFile(path string) (b []byte, release func(), err error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, nil, err
	}
	size := st.Size()
	if size <= 0 || size != int64(int(size)) {
		return nil, nil, fmt.Errorf("sandbox: cache file %s: size %d", path, size)
	}
	b, err = syscall.Mmap(int(f.Fd()), 0, int(size), syscall.PROT_READ, syscall.MAP_PRIVATE)
	if err != nil {
		return nil, nil, fmt.Errorf("sandbox: mapping cache file %s: %w", path, err)
	}
	return b, func() { syscall.Munmap(b) }, nil
}
