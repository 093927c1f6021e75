// Command logger-go is an example adkhost plugin written with the Go SDK
// (sdk/go/adkhost): it logs, through the host's log function, every model
// request (before_model) and every event the runner yields (on_event), and
// changes nothing. It asks for no capability: log needs none. Build it from
// the repository root with
//
//	GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -o logger-go.wasm ./plugins/examples/logger-go
//
// (or `make examples`). The embedder attaches it with host.Module.Plugin
// and sees its lines in host.ModuleConfig.Logger, with the attributes
// "module", "hook" and "invocation".
package main

import (
	"context"
	"log/slog"

	"github.com/adkhost/adkhost/abi"
	"github.com/adkhost/adkhost/sdk/go/adkhost"
	"github.com/adkhost/adkhost/sdk/go/adkhost/adkslog"
)

// A c-shared guest never runs main: the host calls _initialize, which runs
// the init functions, then the exports.
func main() {}

var logger = adkslog.Logger()

func init() {
	adkhost.Module("logger-go", "1.0.0")
	adkhost.BeforeModel(beforeModel)
	adkhost.OnEvent(onEvent)
}

// beforeModel logs the request's size and returns nil: the model is called
// with the request as is.
func beforeModel(ctx adkhost.CallbackContext, req *abi.LlmRequest) (*abi.LlmResponse, error) {
	tools := 0
	if req.Config != nil {
		for _, t := range req.Config.Tools {
			if t != nil {
				tools += len(t.FunctionDeclarations)
			}
		}
	}
	logger.Info("model request", "agent", ctx.Invocation.AgentName, "model", req.Model,
		"contents", len(req.Contents), "tools", tools)
	return nil, nil
}

// onEvent logs each event and returns nil: the event is yielded unchanged.
func onEvent(ctx adkhost.CallbackContext, ev *abi.Event) (*abi.Event, error) {
	parts, calls := 0, 0
	if ev.Content != nil {
		parts = len(ev.Content.Parts)
		for _, p := range ev.Content.Parts {
			if p != nil && p.FunctionCall != nil {
				calls++
			}
		}
	}
	level := slog.LevelInfo
	if ev.ErrorCode != "" {
		level = slog.LevelWarn
	}
	logger.Log(context.Background(), level, "event", "author", ev.Author, "parts", parts,
		"functionCalls", calls, "stateDelta", len(ev.Actions.StateDelta))
	return nil, nil
}
