// Package appdef loads app definitions: google-adk's Agent Config YAML,
// extended only where Wasm needs it (tools, callbacks and plugins provided by
// modules, with their grants and limits), into an engine agent tree and the
// plugins its runner needs.
package appdef

import (
	"context"
	"errors"
	"log/slog"
	"strconv"

	"github.com/adkhost/adkhost/callbacks"
	"github.com/adkhost/adkhost/engine"
	"github.com/adkhost/adkhost/engine/model"
	"github.com/adkhost/adkhost/host"
	"github.com/adkhost/adkhost/sandbox"
)

// Source is one app definition: a set of YAML files (and the files they
// reference, e.g. scripted-model scripts) by their relative paths.
type Source struct {
	// Name is the app's name (the admin API's path parameter).
	Name string
	// Files holds the definition's files by relative path.
	Files map[string][]byte
	// Root is the path in Files of the root agent's config; "" means
	// "root_agent.yaml".
	Root string
}

// Modules resolves a module reference of a definition ("weather@sha256:…",
// "sha256:…", or a registered "name" / "name@version") to its bytes.
type Modules interface {
	ResolveModule(ctx context.Context, ref string) (wasm []byte, digest string, err error)
}

// Models resolves a model name of a definition to a backend. Files are the
// definition's files, for backends configured by a file of the bundle (the
// scripted model's script).
type Models interface {
	ResolveModel(ctx context.Context, name string, files map[string][]byte) (model.Model, error)
}

// Env is what Load needs from its caller.
type Env struct {
	Runtime *sandbox.Runtime
	Modules Modules
	Models  Models
	Logger  *slog.Logger
}

// App is a loaded definition, ready for engine.NewRunner.
type App struct {
	Name    string
	Root    engine.Agent
	Plugins []callbacks.Plugin
	// Modules are the modules the app loaded, by digest; Close closes them.
	Modules map[string]*host.Module
}

// Close releases the app's module instances.
func (a *App) Close(ctx context.Context) error {
	var errs []error
	for _, m := range a.Modules {
		errs = append(errs, m.Close(ctx))
	}
	return errors.Join(errs...)
}

// Error is a definition error, located in its file.
type Error struct {
	File         string
	Line, Column int
	Field        string // dotted path, e.g. "tools[1].module"
	Msg          string
}

// Load parses, validates and builds a definition. Errors are *Error values
// (several joined with errors.Join when there is more than one).
func Load(ctx context.Context, src Source, env Env) (*App, error) {
	return nil, errors.New("appdef: not implemented yet")
}

func (e *Error) Error() string {
	return e.File + ":" + itoa(e.Line) + ":" + itoa(e.Column) + ": " + e.Field + ": " + e.Msg
}

func itoa(n int) string { return strconv.Itoa(n) }
