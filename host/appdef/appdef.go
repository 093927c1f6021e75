// Package appdef loads app definitions: google-adk's Agent Config YAML,
// extended only where Wasm needs it (tools, callbacks and plugins provided by
// modules, with their grants and limits), into an engine agent tree and the
// plugins its runner needs. README.md describes the format.
package appdef

import (
	"context"
	"errors"
	"log/slog"
	"strconv"

	"github.com/adkhost/adkhost/callbacks"
	"github.com/adkhost/adkhost/engine"
	"github.com/adkhost/adkhost/engine/model"
	"github.com/adkhost/adkhost/engine/tool/mcptool"
	"github.com/adkhost/adkhost/host"
	"github.com/adkhost/adkhost/sandbox"
)

// Source is one app definition: a set of YAML files (and the files they
// reference, e.g. scripted-model scripts) by their relative paths.
type Source struct {
	// Name is the app's name (the admin API's path parameter). It is the
	// owner of the app's module instances unless Env.Owner says otherwise.
	Name string
	// Files holds the definition's files by relative, slash-separated path.
	Files map[string][]byte
	// Root is the path in Files of the root agent's config; "" means
	// "root_agent.yaml".
	Root string
}

// Modules resolves a module reference of a definition ("weather@sha256:…",
// "sha256:…", or a registered "name" / "name@version") to its bytes and
// their digest ("sha256:<hex>").
type Modules interface {
	ResolveModule(ctx context.Context, ref string) (wasm []byte, digest string, err error)
}

// Models resolves a model name of a definition to a backend. Files are the
// definition's files, for backends configured by a file of the bundle (the
// scripted model's script). Load calls it once per distinct name.
// ModelRegistry is the default implementation.
type Models interface {
	ResolveModel(ctx context.Context, name string, files map[string][]byte) (model.Model, error)
}

// Env is what Load needs from its caller.
type Env struct {
	// Runtime loads the modules; needed only by definitions using some.
	Runtime *sandbox.Runtime
	Modules Modules
	Models  Models
	// Logger receives warnings and, with an "app" attribute, the modules'
	// log lines; nil discards them.
	Logger *slog.Logger
	// StrictModels refuses a definition whose model has no configured
	// backend. Without it such a definition loads, as google-adk loads an
	// agent config and fails only when the model is called: the model's
	// calls fail with the reason, and App.Warnings says so.
	StrictModels bool
	// Owner is the owner of the app's module instances; "" means
	// Source.Name. A server that replaces a live app by a new definition
	// of the same name can pass a fresh owner per load (e.g. name#2), so
	// that closing the old App leaves the new one's pools alone.
	Owner string
	// AllowStdioMCP lets definitions declare stdio MCP servers
	// (MCPToolset with stdio_server_params or stdio_connection_params),
	// whose command runs as a local process outside the sandbox. Off, such
	// a definition is refused, as google-adk refuses it unless
	// ADK_ALLOW_CONFIG_STDIO_MCP_SERVERS is set.
	AllowStdioMCP bool
}

// App is a loaded definition, ready for engine.NewRunner.
type App struct {
	Name string
	// Root is the root agent (engine.RunnerConfig.Agent).
	Root engine.Agent
	// Plugins are the app's plugins, in the order listed
	// (engine.RunnerConfig.Plugins).
	Plugins []callbacks.Plugin
	// Modules are the modules the app loaded, by digest; Close closes them.
	Modules map[string]*host.Module
	// Resumable and Compaction are the runner settings of the adkhost
	// block (engine.RunnerConfig.Resumable and .Compaction; nil: none).
	Resumable  bool
	Compaction *engine.CompactionConfig
	// Warnings are what loaded but will not work as written (a model with
	// no configured backend), each located in its file.
	Warnings []string
	// Toolsets are the app's MCP toolsets; Close closes their sessions.
	Toolsets []*mcptool.Toolset
}

// Close releases the app's module instances and ends its MCP sessions.
// Module pools are per owner and
// module (sandbox.Runtime.Pool), so two Apps loaded with the same owner
// share the pools of the modules they have in common: closing one closes
// them for both (see Env.Owner).
func (a *App) Close(ctx context.Context) error {
	var errs []error
	for _, m := range a.Modules {
		errs = append(errs, m.Close(ctx))
	}
	for _, ts := range a.Toolsets {
		errs = append(errs, ts.Close())
	}
	return errors.Join(errs...)
}

func itoa(n int) string { return strconv.Itoa(n) }
