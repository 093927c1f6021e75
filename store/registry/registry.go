// Package registry defines what a server runs from a store: apps, each a
// definition with numbered versions, and modules, each the bytes of a Wasm
// module stored by their SHA-256 with a little metadata. Every store
// (store/bolt, store/postgres) implements Registry and passes the suite in
// package registrytest.
package registry

import (
	"context"
	"errors"
	"time"
)

// Registry stores apps and modules. Implementations are safe for
// concurrent use.
type Registry interface {
	// PutApp stores definition as the next version of the app name (1 for
	// a new app, or one deleted since) and returns it. An empty name is an
	// error.
	PutApp(ctx context.Context, name string, definition []byte) (App, error)
	// App returns one version of an app (LatestVersion for the newest), or
	// an error wrapping ErrAppNotFound.
	App(ctx context.Context, name string, version int) (App, error)
	// AppVersions returns an app's versions in ascending order, or an
	// error wrapping ErrAppNotFound.
	AppVersions(ctx context.Context, name string) ([]int, error)
	// Apps returns the newest version of every app, by name.
	Apps(ctx context.Context) ([]App, error)
	// DeleteApp removes an app and all its versions. Deleting a missing
	// app is not an error.
	DeleteApp(ctx context.Context, name string) error
	// PutModule stores a module's bytes under their SHA-256 with name and
	// metadata, and returns its info. Storing bytes already there keeps
	// them and their creation time, and replaces name and metadata.
	PutModule(ctx context.Context, wasm []byte, name string, metadata map[string]string) (ModuleInfo, error)
	// Module returns a module's bytes (a copy the caller owns) and info,
	// or an error wrapping ErrModuleNotFound.
	Module(ctx context.Context, digest string) ([]byte, ModuleInfo, error)
	// ModuleInfo returns a module's info without its bytes, or an error
	// wrapping ErrModuleNotFound.
	ModuleInfo(ctx context.Context, digest string) (ModuleInfo, error)
	// Modules returns the info of every module, sorted by digest.
	Modules(ctx context.Context) ([]ModuleInfo, error)
	// DeleteModule removes a module's bytes and info. Deleting a missing
	// module is not an error.
	DeleteModule(ctx context.Context, digest string) error
}

var (
	// ErrAppNotFound is wrapped by errors for a missing app or version.
	ErrAppNotFound = errors.New("app not found")
	// ErrModuleNotFound is wrapped by errors for a missing module, or a
	// digest that is not a hex SHA-256.
	ErrModuleNotFound = errors.New("module not found")
)

// LatestVersion asks App for an app's newest version.
const LatestVersion = 0

// App is one version of an app definition.
type App struct {
	Name string
	// Version counts from 1 for each app.
	Version int
	// Definition is opaque to the store (the server's app document).
	Definition []byte
	// Created is when this version was stored.
	Created time.Time
}

// ModuleInfo describes a stored module.
type ModuleInfo struct {
	// SHA256 is the hex SHA-256 of the module's bytes: its identity.
	SHA256 string `json:"sha256"`
	Size   int64  `json:"size"`
	// Name is a label for people; two modules may share it.
	Name string `json:"name,omitempty"`
	// Metadata is free-form (source, build, ABI version).
	Metadata map[string]string `json:"metadata,omitempty"`
	// Created is when the bytes were first stored.
	Created time.Time `json:"created"`
}
