package sandbox

import (
	"runtime"
	"slices"
	"time"

	"github.com/adkhost/adkhost/abi"
)

// Default limits, used for every zero field of Limits.
const (
	DefaultMemoryPages    = 1024 // 64 MiB
	DefaultTimeout        = 10 * time.Second
	DefaultMaxInputBytes  = 4 << 20
	DefaultMaxOutputBytes = 4 << 20
	// DefaultHTTPResponseBytes bounds an http_request response body.
	DefaultHTTPResponseBytes = 4 << 20
	// DefaultMaxHostCalls bounds the host function calls of one hook call:
	// far above what a guest doing real work makes, low enough that a
	// flood ends in well under the default timeout.
	DefaultMaxHostCalls = 100_000
	// DefaultMaxCallDepth bounds the nested calls of a guest: far above
	// what the test guests reach (the Go guests between 100 and 300,
	// encoding JSON), and with small frames about a MiB of wazero call
	// stack instead of its 400 MB ceiling.
	DefaultMaxCallDepth = 10_000
	// DefaultInitTimeout is the least time an instance has to start.
	DefaultInitTimeout = 10 * time.Second
	// Guest log limits: a line is cut at DefaultMaxLogLineBytes, a call
	// writes at most DefaultMaxLogBytes, and a pool at most
	// DefaultLogLinesPerSecond on average (bursts of ten times that).
	DefaultMaxLogLineBytes   = 8 << 10
	DefaultMaxLogBytes       = 256 << 10
	DefaultLogLinesPerSecond = 100
	// DefaultMaxWriteBytes bounds what one call writes through state_set,
	// artifact_save and request_confirmation together.
	DefaultMaxWriteBytes = 16 << 20
)

// Limits bound what one module's instances may use. A zero field takes its
// default; the zero Limits is the defaults.
type Limits struct {
	// MemoryPages is the largest linear memory of an instance, in 64 KiB
	// pages (default 1024, 64 MiB). A guest asking for more sees
	// memory.grow fail; most guests then trap, and the call fails with
	// ErrMemoryLimit (on the Extism transport, where go-sdk enforces the
	// limit, with ErrTrap). A module whose initial memory exceeds it is
	// refused.
	MemoryPages uint32
	// Timeout is the wall time of one call, host functions included
	// (default 10 s). At the deadline the instance is closed, which stops
	// even an infinite loop, and the call fails with ErrTimeout. Making a
	// new instance for the call does not count: see InitTimeout.
	Timeout time.Duration
	// InitTimeout is the wall time of instantiating a module: its start
	// function and a WASI reactor's _initialize (default the larger of
	// Timeout and 10 s). Past it the instance is dropped and the call that
	// needed it fails with ErrTimeout. It is separate from Timeout so that
	// a short call timeout does not fail calls whose instance starts
	// slowly under load.
	InitTimeout time.Duration
	// MaxInputBytes bounds a call's input and every result a host function
	// hands the guest (default 4 MiB).
	MaxInputBytes int
	// MaxOutputBytes bounds a call's output and every argument the guest
	// hands a host function (default 4 MiB).
	MaxOutputBytes int
	// MaxInstances bounds the instances of the pool, so the calls it runs
	// at once (default GOMAXPROCS). A call waits for an instance.
	MaxInstances int
	// MaxHostCalls bounds the calls the guest makes to host functions
	// during one call (default 100,000), instantiation included. The call
	// past the budget stops the guest: the call fails with
	// ErrHostCallLimit and the instance is discarded.
	MaxHostCalls int
	// MaxCallDepth bounds the guest functions active at once: a call past
	// it traps, and the call fails with ErrCallDepth (an ErrTrap) and
	// discards the instance (default 10,000). A small function that calls
	// nothing is not counted: it adds at most one frame past the limit
	// (interrupt.go). It bounds the call stack
	// wazero allocates for the instance outside MemoryPages, to
	// MaxCallDepth times the largest frame (at most 2^30). Only native
	// modules the sandbox can instrument are bounded (interrupt.go); the
	// others, and Extism modules, stop at wazero's own limit, a call
	// stack of 400 MB.
	MaxCallDepth int
	// MaxLogLineBytes cuts longer log lines (default 8 KiB), MaxLogBytes
	// bounds what one call may log (default 256 KiB), LogLinesPerSecond
	// what the pool's instances may log together (default 100 a second,
	// in bursts of up to ten times that). Lines past a bound are dropped
	// and counted (Pool.Stats, Runtime.MemoryStats); the guest's log call
	// still succeeds, and the call goes on.
	MaxLogLineBytes, MaxLogBytes, LogLinesPerSecond int
	// MaxWriteBytes bounds the bytes one call hands state_set,
	// artifact_save and request_confirmation together (default 16 MiB):
	// each argument is bounded by MaxOutputBytes, but a loop of host calls
	// could otherwise write MaxHostCalls times that into the session. A
	// write past it answers TOO_LARGE and changes nothing.
	MaxWriteBytes int
}

// WithDefaults returns l with every zero field set to its default.
func (l Limits) WithDefaults() Limits {
	if l.MemoryPages == 0 {
		l.MemoryPages = DefaultMemoryPages
	}
	if l.Timeout <= 0 {
		l.Timeout = DefaultTimeout
	}
	if l.MaxInputBytes <= 0 {
		l.MaxInputBytes = DefaultMaxInputBytes
	}
	if l.MaxOutputBytes <= 0 {
		l.MaxOutputBytes = DefaultMaxOutputBytes
	}
	if l.MaxInstances <= 0 {
		l.MaxInstances = runtime.GOMAXPROCS(0)
	}
	if l.MaxHostCalls <= 0 {
		l.MaxHostCalls = DefaultMaxHostCalls
	}
	if l.InitTimeout <= 0 {
		l.InitTimeout = max(l.Timeout, DefaultInitTimeout)
	}
	if l.MaxCallDepth <= 0 {
		l.MaxCallDepth = DefaultMaxCallDepth
	}
	if l.MaxLogLineBytes <= 0 {
		l.MaxLogLineBytes = DefaultMaxLogLineBytes
	}
	if l.MaxLogBytes <= 0 {
		l.MaxLogBytes = DefaultMaxLogBytes
	}
	if l.LogLinesPerSecond <= 0 {
		l.LogLinesPerSecond = DefaultLogLinesPerSecond
	}
	if l.MaxWriteBytes <= 0 {
		l.MaxWriteBytes = DefaultMaxWriteBytes
	}
	return l
}

// Grants are what the embedder lets a module use. The zero Grants grants
// nothing: no host state, no filesystem, no environment, no network, a fake
// clock and a deterministic random source (wazero's defaults). A module gets
// what it asks for in its describe message, and Runtime.Pool refuses a
// module that asks for more than is granted; what is granted but not asked
// for is withheld.
type Grants struct {
	// State, Actions and Artifacts let the module's host calls of those
	// groups reach the call's abi.Host (abi.CapState, CapActions,
	// CapArtifacts).
	State, Actions, Artifacts bool
	// Config holds the values config_get returns (abi.CapConfig, granted
	// when non-nil). On the Extism transport they are also the plugin's
	// Extism config.
	Config map[string]string
	// HTTP lists where http_request may go (abi.CapHTTP, granted when
	// HTTP.Hosts is not empty).
	HTTP HTTPGrant
	// Dirs are host directories mounted read-only (abi.CapFS, granted when
	// not empty).
	Dirs []Dir
	// Env holds the WASI environment (abi.CapEnv, granted when non-nil).
	Env map[string]string
	// Clock gives the real wall and monotonic clocks and sleep
	// (abi.CapClock); Random gives crypto/rand (abi.CapRandom).
	Clock, Random bool
	// Memory lets memory_search and memory_add_session reach the call's
	// abi.Host (abi.CapMemory): the user's memories, across sessions.
	Memory bool
}

// HTTPGrant lists the destinations of http_request.
type HTTPGrant struct {
	// Hosts are host names, "*.example.com" for any subdomain, or
	// "host:port" to allow one port only. Every redirect is checked again.
	Hosts []string
	// AllowPrivate allows loopback, private, link-local and other
	// non-public addresses, checked on the address actually dialled. Off,
	// a host name resolving to one of them is refused.
	AllowPrivate bool
	// MaxResponseBytes bounds a response body (default 4 MiB).
	MaxResponseBytes int
}

// Dir mounts HostPath read-only at GuestPath.
type Dir struct {
	HostPath, GuestPath string
}

// granted reports whether g grants capability c.
func (g *Grants) granted(c abi.Capability) bool {
	switch c {
	case abi.CapState:
		return g.State
	case abi.CapActions:
		return g.Actions
	case abi.CapArtifacts:
		return g.Artifacts
	case abi.CapConfig:
		return g.Config != nil
	case abi.CapHTTP:
		return len(g.HTTP.Hosts) > 0
	case abi.CapFS:
		return len(g.Dirs) > 0
	case abi.CapEnv:
		return g.Env != nil
	case abi.CapClock:
		return g.Clock
	case abi.CapRandom:
		return g.Random
	case abi.CapMemory:
		return g.Memory
	}
	return false
}

// missing returns the capabilities asked for and not granted.
func (g *Grants) missing(asked []abi.Capability) []string {
	var out []string
	for _, c := range asked {
		if !g.granted(c) {
			out = append(out, string(c))
		}
	}
	slices.Sort(out)
	return out
}
