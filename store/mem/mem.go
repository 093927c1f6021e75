// Package mem is an ephemeral store: sessions, artifacts, memories and the
// app and module registry kept in process memory, for development and
// benchmarks (adkhost serve --store memory). Nothing survives the process.
//
// Sessions, artifacts and memories are the engine's in-memory services
// (session.InMemoryService, artifact.InMemoryService,
// memory.InMemoryService): events and state are kept as Go values, never
// encoded, so an append costs a map write under a lock. Registry is this
// package's. All four pass the shared suites the durable stores pass.
package mem

import (
	"bytes"
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/adkhost/adkhost/engine/artifact"
	"github.com/adkhost/adkhost/engine/memory"
	"github.com/adkhost/adkhost/engine/session"
	"github.com/adkhost/adkhost/store/registry"
)

// Store holds the four in-memory stores.
type Store struct {
	sessions  *session.InMemoryService
	artifacts *artifact.InMemoryService
	memory    *memory.InMemoryService
	registry  *Registry
}

// New returns an empty store.
func New() *Store {
	return &Store{
		sessions:  session.NewInMemoryService(),
		artifacts: artifact.NewInMemoryService(),
		memory:    memory.NewInMemoryService(),
		registry:  NewRegistry(),
	}
}

// Sessions returns the session service.
func (s *Store) Sessions() session.Service { return s.sessions }

// Artifacts returns the artifact service.
func (s *Store) Artifacts() artifact.Service { return s.artifacts }

// Memory returns the memory service. Like google-adk's
// InMemoryMemoryService it ingests sessions and searches them by word, and
// does not support direct writes (AddMemories).
func (s *Store) Memory() memory.Service { return s.memory }

// Registry returns the app and module registry.
func (s *Store) Registry() *Registry { return s.registry }

// Registry is a registry.Registry in process memory. It is safe for
// concurrent use.
type Registry struct {
	mu      sync.RWMutex
	apps    map[string][]registry.App // by name, versions in ascending order
	modules map[[sha256.Size]byte]module
}

type module struct {
	wasm []byte
	info registry.ModuleInfo
}

var _ registry.Registry = (*Registry)(nil)

// NewRegistry returns an empty registry.
func NewRegistry() *Registry {
	return &Registry{apps: map[string][]registry.App{}, modules: map[[sha256.Size]byte]module{}}
}

// cloneApp returns a with its own copy of the definition: callers own what
// they get.
func cloneApp(a registry.App) registry.App {
	a.Definition = bytes.Clone(a.Definition)
	return a
}

func cloneInfo(i registry.ModuleInfo) registry.ModuleInfo {
	i.Metadata = maps.Clone(i.Metadata)
	return i
}

// PutApp implements registry.Registry.
func (r *Registry) PutApp(ctx context.Context, name string, definition []byte) (registry.App, error) {
	if err := ctx.Err(); err != nil {
		return registry.App{}, err
	}
	if name == "" {
		return registry.App{}, errors.New("registry: an app name is required")
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	versions := r.apps[name]
	next := 1
	if len(versions) > 0 {
		next = versions[len(versions)-1].Version + 1
	}
	a := registry.App{Name: name, Version: next, Definition: bytes.Clone(definition), Created: time.Now().Truncate(time.Microsecond)}
	r.apps[name] = append(versions, a)
	return cloneApp(a), nil
}

// App implements registry.Registry.
func (r *Registry) App(ctx context.Context, name string, version int) (registry.App, error) {
	if err := ctx.Err(); err != nil {
		return registry.App{}, err
	}
	r.mu.RLock()
	defer r.mu.RUnlock()
	versions := r.apps[name]
	if len(versions) > 0 && version >= 0 {
		if version == registry.LatestVersion {
			return cloneApp(versions[len(versions)-1]), nil
		}
		if i, ok := slices.BinarySearchFunc(versions, version, func(a registry.App, v int) int { return cmp.Compare(a.Version, v) }); ok {
			return cloneApp(versions[i]), nil
		}
	}
	return registry.App{}, fmt.Errorf("registry: app %q version %d: %w", name, version, registry.ErrAppNotFound)
}

// AppVersions implements registry.Registry.
func (r *Registry) AppVersions(ctx context.Context, name string) ([]int, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	r.mu.RLock()
	defer r.mu.RUnlock()
	versions := r.apps[name]
	if len(versions) == 0 {
		return nil, fmt.Errorf("registry: app %q: %w", name, registry.ErrAppNotFound)
	}
	out := make([]int, len(versions))
	for i, a := range versions {
		out[i] = a.Version
	}
	return out, nil
}

// Apps implements registry.Registry: the newest version of every app,
// sorted by name.
func (r *Registry) Apps(ctx context.Context) ([]registry.App, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	r.mu.RLock()
	defer r.mu.RUnlock()
	var out []registry.App
	for _, name := range slices.Sorted(maps.Keys(r.apps)) {
		versions := r.apps[name]
		out = append(out, cloneApp(versions[len(versions)-1]))
	}
	return out, nil
}

// DeleteApp implements registry.Registry. The app's next version after a
// delete is 1 again.
func (r *Registry) DeleteApp(ctx context.Context, name string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.apps, name)
	return nil
}

// PutModule implements registry.Registry.
func (r *Registry) PutModule(ctx context.Context, wasm []byte, name string, metadata map[string]string) (registry.ModuleInfo, error) {
	if err := ctx.Err(); err != nil {
		return registry.ModuleInfo{}, err
	}
	sum := sha256.Sum256(wasm)
	info := registry.ModuleInfo{
		SHA256:   hex.EncodeToString(sum[:]),
		Size:     int64(len(wasm)),
		Name:     name,
		Metadata: maps.Clone(metadata),
		Created:  time.Now().UTC().Truncate(time.Microsecond),
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	m, ok := r.modules[sum]
	if ok {
		info.Created = m.info.Created
	} else {
		m.wasm = bytes.Clone(wasm)
	}
	m.info = info
	r.modules[sum] = m
	return cloneInfo(info), nil
}

// parseDigest reads a hex SHA-256.
func parseDigest(digest string) ([sha256.Size]byte, error) {
	var sum [sha256.Size]byte
	b, err := hex.DecodeString(digest)
	if err != nil || len(b) != sha256.Size {
		return sum, fmt.Errorf("registry: %q is not a hex SHA-256: %w", digest, registry.ErrModuleNotFound)
	}
	copy(sum[:], b)
	return sum, nil
}

func (r *Registry) module(ctx context.Context, digest string) (module, error) {
	if err := ctx.Err(); err != nil {
		return module{}, err
	}
	sum, err := parseDigest(digest)
	if err != nil {
		return module{}, err
	}
	r.mu.RLock()
	m, ok := r.modules[sum]
	r.mu.RUnlock()
	if !ok {
		return module{}, fmt.Errorf("registry: module %s: %w", digest, registry.ErrModuleNotFound)
	}
	return m, nil
}

// Module implements registry.Registry.
func (r *Registry) Module(ctx context.Context, digest string) ([]byte, registry.ModuleInfo, error) {
	m, err := r.module(ctx, digest)
	if err != nil {
		return nil, registry.ModuleInfo{}, err
	}
	return bytes.Clone(m.wasm), cloneInfo(m.info), nil
}

// ModuleInfo implements registry.Registry.
func (r *Registry) ModuleInfo(ctx context.Context, digest string) (registry.ModuleInfo, error) {
	m, err := r.module(ctx, digest)
	if err != nil {
		return registry.ModuleInfo{}, err
	}
	return cloneInfo(m.info), nil
}

// Modules implements registry.Registry.
func (r *Registry) Modules(ctx context.Context) ([]registry.ModuleInfo, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	r.mu.RLock()
	var out []registry.ModuleInfo
	for _, m := range r.modules {
		out = append(out, cloneInfo(m.info))
	}
	r.mu.RUnlock()
	slices.SortFunc(out, func(a, b registry.ModuleInfo) int { return cmp.Compare(a.SHA256, b.SHA256) })
	return out, nil
}

// DeleteModule implements registry.Registry.
func (r *Registry) DeleteModule(ctx context.Context, digest string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	sum, err := parseDigest(digest)
	if err != nil {
		return err
	}
	r.mu.Lock()
	delete(r.modules, sum)
	r.mu.Unlock()
	return nil
}
