//go:build wasip1

package adkhost

import (
	"unsafe"

	"github.com/adkhost/adkhost/abi"
)

// The exports of the native transport (ABI.md §3). //go:wasmexport works
// from any package of a program, so importing this package is enough: the
// guest's main package only registers, in init functions, and has an empty
// main. Every hook is exported; the describe message lists those with a
// registration, and the host calls only those.

// blocks keeps alive every block handed to the host (the input block it
// asked for, the describe output) and every block the host allocated for
// a host function's result, until it is freed or taken. A hook's output is
// not in it: see outBuf.
var blocks = map[uintptr][]byte{}

//go:wasmexport adkhost_abi_version_1
func abiVersion1() {}

//go:wasmexport adkhost_alloc
func exportAlloc(size uint32) unsafe.Pointer {
	b := make([]byte, max(size, 1))
	p := unsafe.Pointer(unsafe.SliceData(b))
	blocks[uintptr(p)] = b
	return p
}

//go:wasmexport adkhost_free
func exportFree(p unsafe.Pointer, size uint32) {
	if p == unsafe.Pointer(unsafe.SliceData(outBuf)) {
		return // the host frees every output: no map to look into for it
	}
	delete(blocks, uintptr(p))
}

// output hands b to the host, which frees it after copying.
func output(b []byte) uint64 {
	if len(b) == 0 {
		return 0
	}
	p := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	blocks[p] = b
	return uint64(p)<<32 | uint64(len(b))
}

// outBuf holds the last output of a hook, and its array is reused for the
// next one: an allocation (and its zeroing) less per call. The host copies
// an output before it calls again, and adkhost_free ignores this block,
// which is not in blocks, as ABI.md §3 allows of a static buffer.
var outBuf []byte

// call runs a hook on the input block. The block belongs to the host: the
// decoders copy what they keep.
func call(h abi.Hook, p unsafe.Pointer, n uint32) uint64 {
	var in []byte
	if p != nil && n > 0 {
		in = unsafe.Slice((*byte)(p), n)
	}
	if cap(outBuf) > 64<<10 {
		outBuf = nil // one large output need not stay in memory
	}
	b := std.handle(outBuf, h, in)
	if len(b) == 0 {
		return 0
	}
	outBuf = b
	return uint64(uintptr(unsafe.Pointer(unsafe.SliceData(b))))<<32 | uint64(len(b))
}

//go:wasmexport adkhost_describe
func exportDescribe(p unsafe.Pointer, n uint32) uint64 {
	d, err := std.describe()
	if err != nil {
		// The describe message has no error field: trap. The host refuses
		// the module, quoting stderr, where the panic prints err.
		panic(err)
	}
	b, err := abi.Encode(d)
	if err != nil {
		panic(err)
	}
	return output(b)
}

//go:wasmexport adkhost_tool_call
func exportToolCall(p unsafe.Pointer, n uint32) uint64 { return call(abi.HookToolCall, p, n) }

//go:wasmexport adkhost_before_agent
func exportBeforeAgent(p unsafe.Pointer, n uint32) uint64 { return call(abi.HookBeforeAgent, p, n) }

//go:wasmexport adkhost_after_agent
func exportAfterAgent(p unsafe.Pointer, n uint32) uint64 { return call(abi.HookAfterAgent, p, n) }

//go:wasmexport adkhost_before_model
func exportBeforeModel(p unsafe.Pointer, n uint32) uint64 { return call(abi.HookBeforeModel, p, n) }

//go:wasmexport adkhost_after_model
func exportAfterModel(p unsafe.Pointer, n uint32) uint64 { return call(abi.HookAfterModel, p, n) }

//go:wasmexport adkhost_on_model_error
func exportOnModelError(p unsafe.Pointer, n uint32) uint64 {
	return call(abi.HookOnModelError, p, n)
}

//go:wasmexport adkhost_before_tool
func exportBeforeTool(p unsafe.Pointer, n uint32) uint64 { return call(abi.HookBeforeTool, p, n) }

//go:wasmexport adkhost_after_tool
func exportAfterTool(p unsafe.Pointer, n uint32) uint64 { return call(abi.HookAfterTool, p, n) }

//go:wasmexport adkhost_on_tool_error
func exportOnToolError(p unsafe.Pointer, n uint32) uint64 { return call(abi.HookOnToolError, p, n) }

//go:wasmexport adkhost_on_user_message
func exportOnUserMessage(p unsafe.Pointer, n uint32) uint64 {
	return call(abi.HookOnUserMessage, p, n)
}

//go:wasmexport adkhost_before_run
func exportBeforeRun(p unsafe.Pointer, n uint32) uint64 { return call(abi.HookBeforeRun, p, n) }

//go:wasmexport adkhost_on_event
func exportOnEvent(p unsafe.Pointer, n uint32) uint64 { return call(abi.HookOnEvent, p, n) }

//go:wasmexport adkhost_after_run
func exportAfterRun(p unsafe.Pointer, n uint32) uint64 { return call(abi.HookAfterRun, p, n) }

//go:wasmexport adkhost_on_agent_error
func exportOnAgentError(p unsafe.Pointer, n uint32) uint64 {
	return call(abi.HookOnAgentError, p, n)
}

//go:wasmexport adkhost_on_run_error
func exportOnRunError(p unsafe.Pointer, n uint32) uint64 { return call(abi.HookOnRunError, p, n) }
