//go:build !wasip1

package adkhost

import (
	"sync"

	"github.com/adkhost/adkhost/abi"
)

var testHost struct {
	mu sync.Mutex
	h  abi.Host
}

// UseHost makes h serve the host functions while the package runs outside
// WebAssembly, so a guest's tools and callbacks can be tested with go test
// on the development machine (through Handle, or by calling them), and
// returns a function that restores the previous host. The SDK checks
// arguments as the sandbox does (state keys, JSON values, names) before
// calling h. config_get and http_request are served if h also has the
// methods
//
//	ConfigGet(ctx context.Context, key string) (string, error)
//	HTTPRequest(ctx context.Context, req *abi.HTTPRequest) (*abi.HTTPResponse, error)
//
// and answer abi.StatusUnavailable otherwise. Without a host every host
// function answers abi.StatusUnavailable, and Log drops its line.
// Capabilities are not checked.
//
// In a WebAssembly guest the host functions are the real ones, and
// UseHost does not exist (abi.Host is left out of a guest's build).
func UseHost(h abi.Host) (restore func()) {
	testHost.mu.Lock()
	defer testHost.mu.Unlock()
	prev := testHost.h
	testHost.h = h
	return func() {
		testHost.mu.Lock()
		defer testHost.mu.Unlock()
		testHost.h = prev
	}
}
