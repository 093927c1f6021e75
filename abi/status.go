package abi

import "strconv"

// Status is what a host function returns to the guest: an i32 on the native
// transport, HostReply.Status on the Extism transport. It implements error
// so that a Host method can return one; any other error reaches the guest as
// StatusFailed.
type Status int32

// The status codes of ABI v1. New codes may be added in v1; a guest treats
// an unknown non-zero code as StatusFailed.
const (
	// StatusOK: the call succeeded and its results were written.
	StatusOK Status = 0
	// StatusNotFound: no such state key, artifact, artifact version or
	// config value.
	StatusNotFound Status = 1
	// StatusInvalidArgument: a malformed argument (empty or non-UTF-8 key or
	// name, a value that is not JSON, an unknown log level, a bad URL).
	StatusInvalidArgument Status = 2
	// StatusDenied: the module did not ask for, or was not granted, the
	// capability; or an HTTP destination is not allowed.
	StatusDenied Status = 3
	// StatusUnavailable: the operation does not apply to this call (e.g.
	// request_confirmation outside a tool call, no invocation bound, or no
	// memory service for memory_search).
	StatusUnavailable Status = 4
	// StatusTooLarge: an argument or the result exceeds the module's limits.
	StatusTooLarge Status = 5
	// StatusBadPointer: a pointer and length the guest passed lie outside
	// its memory.
	StatusBadPointer Status = 6
	// StatusFailed: the host tried and failed (storage, network, timeout).
	StatusFailed Status = 7
	// StatusAllocFailed: the guest's adkhost_alloc returned 0 or a block
	// outside its memory when the host asked for room for a result.
	StatusAllocFailed Status = 8
)

var statusNames = [...]string{
	StatusOK:              "OK",
	StatusNotFound:        "NOT_FOUND",
	StatusInvalidArgument: "INVALID_ARGUMENT",
	StatusDenied:          "DENIED",
	StatusUnavailable:     "UNAVAILABLE",
	StatusTooLarge:        "TOO_LARGE",
	StatusBadPointer:      "BAD_POINTER",
	StatusFailed:          "FAILED",
	StatusAllocFailed:     "ALLOC_FAILED",
}

// String returns the code's name, e.g. "NOT_FOUND".
func (s Status) String() string {
	if s >= 0 && int(s) < len(statusNames) {
		return statusNames[s]
	}
	return "STATUS_" + strconv.Itoa(int(s))
}

// Error implements error.
func (s Status) Error() string { return "abi: status " + s.String() }
