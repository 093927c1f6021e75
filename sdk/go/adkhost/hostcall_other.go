//go:build !wasip1

package adkhost

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"unicode/utf8"

	"github.com/adkhost/adkhost/abi"
)

// Outside WebAssembly (go test on the development machine) the host
// functions are served by the abi.Host given to UseHost, checked as the
// sandbox checks them, or answer abi.StatusUnavailable.

// inWasm is false: Handle may run on several goroutines at once.
const inWasm = false

func host() (abi.Host, abi.Status) {
	testHost.mu.Lock()
	defer testHost.mu.Unlock()
	if testHost.h == nil {
		return nil, abi.StatusUnavailable
	}
	return testHost.h, abi.StatusOK
}

func status(err error) abi.Status {
	if err == nil {
		return abi.StatusOK
	}
	var s abi.Status
	if errors.As(err, &s) {
		return s
	}
	return abi.StatusFailed
}

func encode(v any, err error) ([]byte, abi.Status) {
	if s := status(err); s != abi.StatusOK {
		return nil, s
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil, abi.StatusFailed
	}
	return b, abi.StatusOK
}

var bg = context.Background()

// scratch is nil outside WebAssembly: an abi.Host may keep the values it
// is given, and Handle may run on several goroutines.
func scratch() []byte { return nil }

func keepScratch([]byte) {}

func rawStateGet(key string) ([]byte, abi.Status) {
	h, s := host()
	if s != abi.StatusOK {
		return nil, s
	}
	if !abi.ValidStateKey(key) {
		return nil, abi.StatusInvalidArgument
	}
	v, err := h.StateGet(bg, key)
	if s := status(err); s != abi.StatusOK {
		return nil, s
	}
	if len(v) == 0 {
		v = json.RawMessage("null")
	}
	return v, abi.StatusOK
}

func rawStateSet(key string, val []byte) abi.Status {
	h, s := host()
	if s != abi.StatusOK {
		return s
	}
	if !abi.ValidStateKey(key) || !json.Valid(val) {
		return abi.StatusInvalidArgument
	}
	return status(h.StateSet(bg, key, append(json.RawMessage(nil), val...)))
}

func rawStateDelete(key string) abi.Status {
	h, s := host()
	if s != abi.StatusOK {
		return s
	}
	if !abi.ValidStateKey(key) {
		return abi.StatusInvalidArgument
	}
	return status(h.StateDelete(bg, key))
}

func validText(s string) bool { return s != "" && utf8.ValidString(s) }

func rawTransferToAgent(name string) abi.Status {
	h, s := host()
	if s != abi.StatusOK {
		return s
	}
	if !validText(name) {
		return abi.StatusInvalidArgument
	}
	return status(h.TransferToAgent(bg, name))
}

func rawEscalate() abi.Status {
	h, s := host()
	if s != abi.StatusOK {
		return s
	}
	return status(h.Escalate(bg))
}

func rawSkipSummarization() abi.Status {
	h, s := host()
	if s != abi.StatusOK {
		return s
	}
	return status(h.SkipSummarization(bg))
}

func rawRequestConfirmation(hint string, payload []byte) abi.Status {
	h, s := host()
	if s != abi.StatusOK {
		return s
	}
	if !utf8.ValidString(hint) || (len(payload) > 0 && !json.Valid(payload)) {
		return abi.StatusInvalidArgument
	}
	var p json.RawMessage
	if len(payload) > 0 {
		p = append(p, payload...)
	}
	return status(h.RequestConfirmation(bg, hint, p))
}

func rawArtifactLoad(name string, version int32) ([]byte, abi.Status) {
	h, s := host()
	if s != abi.StatusOK {
		return nil, s
	}
	if !validText(name) || version < -1 {
		return nil, abi.StatusInvalidArgument
	}
	part, err := h.ArtifactLoad(bg, name, int(version))
	if err == nil && part == nil {
		return nil, abi.StatusNotFound
	}
	return encode(part, err)
}

func rawArtifactSave(name string, partJSON []byte) (int32, abi.Status) {
	h, s := host()
	if s != abi.StatusOK {
		return 0, s
	}
	var part abi.Part
	if !validText(name) || abi.DecodeValue(partJSON, &part, 0) != nil {
		return 0, abi.StatusInvalidArgument
	}
	v, err := h.ArtifactSave(bg, name, &part)
	if s := status(err); s != abi.StatusOK {
		return 0, s
	}
	return int32(v), abi.StatusOK
}

func rawArtifactList() ([]byte, abi.Status) {
	h, s := host()
	if s != abi.StatusOK {
		return nil, s
	}
	names, err := h.ArtifactList(bg)
	if names == nil {
		names = []string{}
	}
	return encode(names, err)
}

func rawLog(level int32, msg string) abi.Status {
	h, s := host()
	if s != abi.StatusOK {
		return abi.StatusOK // dropped, as the sandbox drops lines it has no logger for
	}
	h.Log(bg, slog.Level(level), msg)
	return abi.StatusOK
}

func rawInvocationInfo() ([]byte, abi.Status) {
	h, s := host()
	if s != abi.StatusOK {
		return nil, s
	}
	info, err := h.InvocationInfo(bg)
	if err == nil && info == nil {
		return nil, abi.StatusUnavailable
	}
	return encode(info, err)
}

func rawConfigGet(key string) ([]byte, abi.Status) {
	h, s := host()
	if s != abi.StatusOK {
		return nil, s
	}
	c, ok := h.(interface {
		ConfigGet(ctx context.Context, key string) (string, error)
	})
	if !ok {
		return nil, abi.StatusUnavailable
	}
	if !validText(key) {
		return nil, abi.StatusInvalidArgument
	}
	v, err := c.ConfigGet(bg, key)
	if s := status(err); s != abi.StatusOK {
		return nil, s
	}
	return []byte(v), abi.StatusOK
}

func rawHTTPRequest(reqJSON []byte) ([]byte, abi.Status) {
	h, s := host()
	if s != abi.StatusOK {
		return nil, s
	}
	c, ok := h.(interface {
		HTTPRequest(ctx context.Context, req *abi.HTTPRequest) (*abi.HTTPResponse, error)
	})
	if !ok {
		return nil, abi.StatusUnavailable
	}
	var req abi.HTTPRequest
	if abi.DecodeValue(reqJSON, &req, 0) != nil {
		return nil, abi.StatusInvalidArgument
	}
	return encode(c.HTTPRequest(bg, &req))
}

func rawMemorySearch(query string) ([]byte, abi.Status) {
	h, s := host()
	if s != abi.StatusOK {
		return nil, s
	}
	if !utf8.ValidString(query) {
		return nil, abi.StatusInvalidArgument
	}
	r, err := h.MemorySearch(bg, query)
	if s := status(err); s != abi.StatusOK {
		return nil, s
	}
	// As the sandbox answers: a list, never null.
	out := abi.SearchMemoryResponse{Memories: []abi.MemoryEntry{}}
	if r != nil && r.Memories != nil {
		out.Memories = r.Memories
	}
	return encode(&out, nil)
}

func rawMemoryAddSession() abi.Status {
	h, s := host()
	if s != abi.StatusOK {
		return s
	}
	return status(h.MemoryAddSession(bg))
}
