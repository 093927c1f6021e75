package sandbox

import (
	"errors"
	"fmt"
)

// Errors of Load. Each is wrapped with the module's digest and the details,
// e.g. "sandbox: module sha256:0123456789ab: missing export: ...".
var (
	// ErrCompile: the bytes are not a valid WebAssembly module.
	ErrCompile = errors.New("not a valid WebAssembly module")
	// ErrNoABIVersion: the module exports no adkhost_abi_version_N function.
	ErrNoABIVersion = errors.New("no ABI version marker")
	// ErrUnknownABIVersion: the module's version markers name no version
	// this host speaks.
	ErrUnknownABIVersion = errors.New("unknown ABI version")
	// ErrMissingExport: an export the transport needs, or a hook the
	// describe message lists, is not exported.
	ErrMissingExport = errors.New("missing export")
	// ErrExportSignature: an export has the wrong kind or signature.
	ErrExportSignature = errors.New("export has the wrong signature")
	// ErrImport: the module imports something the host does not provide.
	ErrImport = errors.New("unsupported import")
	// ErrDescribe: adkhost_describe failed or answered an invalid message.
	ErrDescribe = errors.New("bad describe message")
)

// Errors of Runtime.Pool.
var (
	// ErrNotGranted: the module asks for capabilities the pool does not
	// grant.
	ErrNotGranted = errors.New("capabilities not granted")
	// ErrLimits: the limits cannot hold the module (e.g. its initial
	// memory exceeds MemoryPages) or are invalid.
	ErrLimits = errors.New("limits do not fit the module")
	// ErrPoolConflict: a pool for the same owner and module exists with
	// other limits or grants.
	ErrPoolConflict = errors.New("a pool for this owner and module exists with other limits or grants")
)

// Errors of a call. Those marked "discarded" also mean the instance that ran
// the call was closed and will not be used again.
var (
	// ErrNoHook: the module does not list the hook in its describe message.
	ErrNoHook = errors.New("hook not implemented by the module")
	// ErrInputTooLarge: the input exceeds MaxInputBytes; nothing ran.
	ErrInputTooLarge = errors.New("input too large")
	// ErrOutputTooLarge: the output exceeds MaxOutputBytes.
	ErrOutputTooLarge = errors.New("output too large")
	// ErrBadOutput: the output lies outside guest memory (discarded), or it
	// is not a valid message for the hook (from Invoke).
	ErrBadOutput = errors.New("bad output")
	// ErrBadAlloc: adkhost_alloc returned 0 or a block outside guest memory
	// for the input (discarded).
	ErrBadAlloc = errors.New("bad allocation")
	// ErrTimeout: the call ran past its Timeout and was stopped (discarded).
	ErrTimeout = errors.New("call timed out")
	// ErrMemoryLimit: the guest failed after asking for memory beyond
	// MemoryPages (discarded).
	ErrMemoryLimit = errors.New("memory limit exceeded")
	// ErrTrap: the guest trapped or exited (discarded).
	ErrTrap = errors.New("guest trapped")
	// ErrCallDepth: the guest nested more than MaxCallDepth calls and was
	// stopped (discarded). It wraps ErrTrap: before MaxCallDepth existed
	// the same guest trapped with a stack overflow.
	ErrCallDepth = fmt.Errorf("%w: call depth limit exceeded", ErrTrap)
	// ErrHostCallLimit: the guest called host functions more than
	// MaxHostCalls times in one call and was stopped (discarded).
	ErrHostCallLimit = errors.New("host call limit exceeded")
	// ErrGuest: an Extism guest reported an error through the PDK's
	// error functions. The instance is kept.
	ErrGuest = errors.New("guest reported an error")
	// ErrClosed: the pool or runtime is closed.
	ErrClosed = errors.New("sandbox closed")
)
