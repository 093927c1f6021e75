// Package adkhost is the Go SDK for adkhost guests: WebAssembly modules,
// built with the standard Go toolchain, that implement tools, agent and
// model callbacks and plugin hooks for Google ADK-style agents run by
// adkhost. It implements ABI v1 (abi/ABI.md) on the native transport, so a
// guest is plain Go:
//
//	package main
//
//	import (
//		"github.com/adkhost/adkhost/abi"
//		"github.com/adkhost/adkhost/sdk/go/adkhost"
//	)
//
//	func main() {} // never called
//
//	type WeatherArgs struct {
//		City string `json:"city" jsonschema:"the city, e.g. Paris"`
//	}
//
//	func init() {
//		adkhost.Module("weather", "1.0.0", abi.CapState)
//		adkhost.Tool("get_weather", "Returns the weather of a city.",
//			func(ctx adkhost.ToolContext, args WeatherArgs) (map[string]any, error) {
//				return map[string]any{"city": args.City, "sky": "clear"}, ctx.State().Set("user:last_city", args.City)
//			})
//		adkhost.BeforeModel(func(ctx adkhost.CallbackContext, req *abi.LlmRequest) (*abi.LlmResponse, error) {
//			return nil, nil // nil: call the model; edit req in place to change the request
//		})
//	}
//
// built as a WASI reactor:
//
//	GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -o weather.wasm .
//
// # Exports
//
// Importing the package gives the module every export ABI v1 needs:
// adkhost_abi_version_1, adkhost_alloc and adkhost_free (a map keeps each
// block alive until it is freed), adkhost_describe (built from the
// registrations), and adkhost_<hook> for all fifteen hooks. They are
// //go:wasmexport functions of this package, which works in any package of
// a program, not only main. The describe message lists only the hooks with
// a registration, and the host calls only those. A guest must not define
// these exports itself.
//
// The host runs _initialize, which runs the init functions, and never runs
// main: register in init functions (or package-level variable
// initializers). A guest built without -buildmode=c-shared fails to load
// with "wasmexport function called before runtime initialization".
//
// # Registrations
//
// Module names the module and asks for capabilities; Tool registers a typed
// tool, its parameters schema derived from the argument type (SchemaFor);
// BeforeAgent, AfterAgent, BeforeModel, AfterModel, OnModelError,
// BeforeTool, AfterTool, OnToolError, OnUserMessage, BeforeRun, OnEvent,
// AfterRun, OnAgentError and OnRunError register callbacks, several per
// hook if need be. Registration mistakes (an invalid or duplicate name, an
// argument type without a schema) panic, so the module fails to load with
// the message. A module without a name fails to load too.
//
// # Host functions
//
// State, Actions, Artifacts, Memory, Invocation, Config, Fetch and Log call
// the host; a non-zero status is a *HostError wrapping the abi.Status, so
// errors.Is(err, abi.StatusNotFound) works. They work while a hook runs.
//
// # Failures
//
// An error a tool or callback returns becomes the output's "error": the
// hook failed, as a google-adk callback that raises. A panic is recovered
// and reported the same way (its stack goes to the host's log), so the
// instance survives; a fatal runtime error (out of memory) still traps.
//
// # Testing
//
// Outside WebAssembly the package builds and runs as ordinary Go: Handle
// runs a hook on an encoded input, and UseHost serves the host functions
// with an abi.Host, so a guest's tools and callbacks can be tested with go
// test on the development machine. The sandbox package runs the built
// module for real.
package adkhost
