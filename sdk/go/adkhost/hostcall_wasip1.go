//go:build wasip1

package adkhost

import (
	"runtime"
	"unsafe"

	"github.com/adkhost/adkhost/abi"
)

// The host functions of the native transport (ABI.md §4), imported from
// module "adkhost". Pointers are unsafe.Pointer so that vet and the GC see
// them as pointers; runtime.KeepAlive holds each argument until the host
// has read it (the host may call adkhost_alloc, and so run Go code and the
// GC, before it returns). The linker drops the imports a guest never
// reaches.

// inWasm is true: a guest runs one hook at a time, on one thread.
const inWasm = true

//go:wasmimport adkhost state_get
func importStateGet(key unsafe.Pointer, keyLen uint32, retPtr, retLen *uint32) int32

//go:wasmimport adkhost state_set
func importStateSet(key unsafe.Pointer, keyLen uint32, val unsafe.Pointer, valLen uint32) int32

//go:wasmimport adkhost state_delete
func importStateDelete(key unsafe.Pointer, keyLen uint32) int32

//go:wasmimport adkhost transfer_to_agent
func importTransferToAgent(name unsafe.Pointer, nameLen uint32) int32

//go:wasmimport adkhost escalate
func importEscalate() int32

//go:wasmimport adkhost skip_summarization
func importSkipSummarization() int32

//go:wasmimport adkhost request_confirmation
func importRequestConfirmation(hint unsafe.Pointer, hintLen uint32, payload unsafe.Pointer, payloadLen uint32) int32

//go:wasmimport adkhost artifact_load
func importArtifactLoad(name unsafe.Pointer, nameLen uint32, version int32, retPtr, retLen *uint32) int32

//go:wasmimport adkhost artifact_save
func importArtifactSave(name unsafe.Pointer, nameLen uint32, part unsafe.Pointer, partLen uint32, retVersion *int32) int32

//go:wasmimport adkhost artifact_list
func importArtifactList(retPtr, retLen *uint32) int32

//go:wasmimport adkhost log
func importLog(level int32, msg unsafe.Pointer, msgLen uint32) int32

//go:wasmimport adkhost invocation_info
func importInvocationInfo(retPtr, retLen *uint32) int32

//go:wasmimport adkhost config_get
func importConfigGet(key unsafe.Pointer, keyLen uint32, retPtr, retLen *uint32) int32

//go:wasmimport adkhost http_request
func importHTTPRequest(req unsafe.Pointer, reqLen uint32, retPtr, retLen *uint32) int32

//go:wasmimport adkhost memory_search
func importMemorySearch(query unsafe.Pointer, queryLen uint32, retPtr, retLen *uint32) int32

//go:wasmimport adkhost memory_add_session
func importMemoryAddSession() int32

// Argument data must not live on a goroutine stack: the host may call
// adkhost_alloc (Go code, which may grow and move the stack) before it has
// read every argument. Storing each argument in a package variable makes
// the compiler put its data on the heap, which does not move. (The result
// slots passed as *uint32 are moved to the heap by the compiler.)
var (
	strArg string
	bufArg []byte
)

// scratchBuf is the array reused for the JSON of the values the SDK
// encodes for a host function (State().Set of a string): the host copies
// a value before it returns, and a guest runs one hook at a time.
var scratchBuf []byte

func scratch() []byte { return scratchBuf[:0] }

// keepScratch keeps b's array for the next value, unless it is large.
func keepScratch(b []byte) {
	if cap(b) <= 4<<10 {
		scratchBuf = b
	}
}

func str(s string) (unsafe.Pointer, uint32) {
	strArg = s
	return unsafe.Pointer(unsafe.StringData(s)), uint32(len(s))
}

func buf(b []byte) (unsafe.Pointer, uint32) {
	bufArg = b
	return unsafe.Pointer(unsafe.SliceData(b)), uint32(len(b))
}

// result takes ownership of the block the host allocated for a result
// (through adkhost_alloc, so it is in blocks) and returns it.
func result(s int32, p, n uint32) ([]byte, abi.Status) {
	if abi.Status(s) != abi.StatusOK {
		return nil, abi.Status(s)
	}
	if n == 0 {
		return nil, abi.StatusOK
	}
	b, ok := blocks[uintptr(p)]
	if !ok || uint32(len(b)) < n {
		return nil, abi.StatusBadPointer // not a block of ours: a host bug
	}
	delete(blocks, uintptr(p))
	return b[:n:n], abi.StatusOK
}

func rawStateGet(key string) ([]byte, abi.Status) {
	var rp, rl uint32
	kp, kl := str(key)
	s := importStateGet(kp, kl, &rp, &rl)
	runtime.KeepAlive(key)
	return result(s, rp, rl)
}

func rawStateSet(key string, val []byte) abi.Status {
	kp, kl := str(key)
	vp, vl := buf(val)
	s := importStateSet(kp, kl, vp, vl)
	runtime.KeepAlive(key)
	runtime.KeepAlive(val)
	return abi.Status(s)
}

func rawStateDelete(key string) abi.Status {
	kp, kl := str(key)
	s := importStateDelete(kp, kl)
	runtime.KeepAlive(key)
	return abi.Status(s)
}

func rawTransferToAgent(name string) abi.Status {
	np, nl := str(name)
	s := importTransferToAgent(np, nl)
	runtime.KeepAlive(name)
	return abi.Status(s)
}

func rawEscalate() abi.Status { return abi.Status(importEscalate()) }

func rawSkipSummarization() abi.Status { return abi.Status(importSkipSummarization()) }

func rawRequestConfirmation(hint string, payload []byte) abi.Status {
	hp, hl := str(hint)
	pp, pl := buf(payload)
	s := importRequestConfirmation(hp, hl, pp, pl)
	runtime.KeepAlive(hint)
	runtime.KeepAlive(payload)
	return abi.Status(s)
}

func rawArtifactLoad(name string, version int32) ([]byte, abi.Status) {
	var rp, rl uint32
	np, nl := str(name)
	s := importArtifactLoad(np, nl, version, &rp, &rl)
	runtime.KeepAlive(name)
	return result(s, rp, rl)
}

func rawArtifactSave(name string, part []byte) (int32, abi.Status) {
	var version int32
	np, nl := str(name)
	pp, pl := buf(part)
	s := importArtifactSave(np, nl, pp, pl, &version)
	runtime.KeepAlive(name)
	runtime.KeepAlive(part)
	return version, abi.Status(s)
}

func rawArtifactList() ([]byte, abi.Status) {
	var rp, rl uint32
	s := importArtifactList(&rp, &rl)
	return result(s, rp, rl)
}

func rawLog(level int32, msg string) abi.Status {
	mp, ml := str(msg)
	s := importLog(level, mp, ml)
	runtime.KeepAlive(msg)
	return abi.Status(s)
}

func rawInvocationInfo() ([]byte, abi.Status) {
	var rp, rl uint32
	s := importInvocationInfo(&rp, &rl)
	return result(s, rp, rl)
}

func rawConfigGet(key string) ([]byte, abi.Status) {
	var rp, rl uint32
	kp, kl := str(key)
	s := importConfigGet(kp, kl, &rp, &rl)
	runtime.KeepAlive(key)
	return result(s, rp, rl)
}

func rawHTTPRequest(req []byte) ([]byte, abi.Status) {
	var rp, rl uint32
	qp, ql := buf(req)
	s := importHTTPRequest(qp, ql, &rp, &rl)
	runtime.KeepAlive(req)
	return result(s, rp, rl)
}

func rawMemorySearch(query string) ([]byte, abi.Status) {
	var rp, rl uint32
	qp, ql := str(query)
	s := importMemorySearch(qp, ql, &rp, &rl)
	runtime.KeepAlive(query)
	return result(s, rp, rl)
}

func rawMemoryAddSession() abi.Status { return abi.Status(importMemoryAddSession()) }
