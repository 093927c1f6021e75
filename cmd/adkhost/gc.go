package main

import (
	"os"
	"runtime/debug"
	"strconv"
	"strings"
)

// defaultGCPercent is serve's GOGC. A served turn allocates about 100 KB
// that is garbage once it is answered, while what stays live (the session
// caches, the guests' memories) is what the collector marks every cycle:
// at Go's default of 100, under bench-peers' load, it marked the live
// ~200 MB about once a second, ~17% of the server's CPU. At 200 a turn
// cost 5-15% less CPU in alternating runs, for about a third more resident
// memory; --memory-limit keeps that headroom from pushing a full machine
// over.
const defaultGCPercent = 200

// gcSettings reports whether serve sets the GOGC and the soft memory limit
// (bytes, 0: none) of its flags: a flag given on the command line
// wins, then the environment's GOGC and GOMEMLIMIT (the Go runtime has
// applied them already), then the flags' defaults.
func gcSettings(limit int64, percentGiven, limitGiven bool, lookupEnv func(string) (string, bool)) (setPercent, setLimit bool) {
	_, envPercent := lookupEnv("GOGC")
	_, envLimit := lookupEnv("GOMEMLIMIT")
	return percentGiven || !envPercent, limit > 0 && (limitGiven || !envLimit)
}

// tuneGC applies gcSettings to this process.
func tuneGC(percent, limit int64, percentGiven, limitGiven bool) {
	setPercent, setLimit := gcSettings(limit, percentGiven, limitGiven, os.LookupEnv)
	if setPercent {
		debug.SetGCPercent(int(percent))
	}
	if setLimit {
		debug.SetMemoryLimit(limit)
	}
}

// machineMemory is the memory this process may use: the machine's
// (MemTotal of /proc/meminfo), or its cgroup's memory.max if lower; 8 GiB
// where neither can be read.
func machineMemory() int64 {
	total := int64(0)
	if b, err := os.ReadFile("/proc/meminfo"); err == nil {
		for line := range strings.Lines(string(b)) {
			if rest, ok := strings.CutPrefix(line, "MemTotal:"); ok {
				if kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64); err == nil && kb > 0 {
					total = kb << 10
				}
			}
		}
	}
	if b, err := os.ReadFile("/sys/fs/cgroup/memory.max"); err == nil {
		// "max" (no limit) does not parse and leaves total as it is.
		if n, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64); err == nil && n > 0 && (total == 0 || n < total) {
			total = n
		}
	}
	if total == 0 {
		return 8 << 30
	}
	return total
}
