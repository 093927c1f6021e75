package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"strings"
	"time"

	"github.com/adkhost/adkhost/callbacks"
	"github.com/adkhost/adkhost/engine"
	"github.com/adkhost/adkhost/host/appdef"
	"github.com/adkhost/adkhost/internal/suggest"
	"github.com/adkhost/adkhost/store/bolt"
	"github.com/adkhost/adkhost/store/registry"
)

// definition is what the registry stores for an app version: the files of
// the definition and which one is the root agent's config.
type definition struct {
	Root  string            `json:"root"`
	Files map[string][]byte `json:"files"`
	// Pins maps each short digest the files reference (hex, 8 to 63
	// digits) to the full digest it named when the app was registered.
	// Loads of the stored app resolve it through the pin: a module
	// uploaded later whose digest starts the same (by chance, or ground
	// by an uploader: 32 bits for 8 digits) must not make the app
	// ambiguous, or name another module, at the next restart or reload.
	Pins map[string]string `json:"pins,omitempty"`
}

const defaultRoot = "root_agent.yaml"

func decodeDefinition(b []byte) (definition, error) {
	var d definition
	if err := json.Unmarshal(b, &d); err != nil {
		return d, fmt.Errorf("decoding stored app definition: %w", err)
	}
	return d, nil
}

// RegistryModules resolves a definition's module references from the
// registry: "sha256:<hex>", "<name>@sha256:<hex>", "<name>" (the newest
// module uploaded under that name) or "<name>@<version>" (the newest with
// that describe version). The hex may be a unique prefix of at least 8
// digits.
type RegistryModules struct {
	Registry registry.Registry
	// Pins, when not nil, maps short digests to the full digests they
	// resolve to: a short digest found there resolves to its pin, and one
	// resolved from the registry is added. Not safe for concurrent use
	// then.
	Pins map[string]string
}

// ResolveModule implements appdef.Modules.
func (r RegistryModules) ResolveModule(ctx context.Context, ref string) ([]byte, string, error) {
	name, version, _ := strings.Cut(ref, "@")
	if strings.HasPrefix(version, "sha256:") {
		name = version
	}
	if hex, ok := strings.CutPrefix(name, "sha256:"); ok {
		pinned := ""
		if isHexPrefix(hex) {
			if full, ok := r.Pins[hex]; ok {
				pinned, hex = hex, full
			} else {
				full, err := uniqueDigest(ctx, r.Registry, hex)
				if err != nil {
					return nil, "", fmt.Errorf("module %q: %w", ref, err)
				}
				if r.Pins != nil {
					r.Pins[hex] = full
				}
				hex = full
			}
		}
		wasm, _, err := r.Registry.Module(ctx, hex)
		if err != nil && pinned != "" {
			return nil, "", fmt.Errorf("module %q, pinned to sha256:%s when the app was registered: %w (register the app again to resolve sha256:%s anew)", ref, hex, err, pinned)
		}
		if err != nil {
			return nil, "", fmt.Errorf("module %q: %w", ref, err)
		}
		return wasm, "sha256:" + hex, nil
	}
	info, err := findModule(ctx, r.Registry, name, version)
	if err != nil {
		return nil, "", err
	}
	wasm, _, err := r.Registry.Module(ctx, info.SHA256)
	if err != nil {
		return nil, "", fmt.Errorf("module %q: %w", ref, err)
	}
	return wasm, "sha256:" + info.SHA256, nil
}

// uniqueDigest expands a short digest (a prefix, as `module list` shows
// it) to the one stored digest it starts.
func uniqueDigest(ctx context.Context, reg registry.Registry, prefix string) (string, error) {
	all, err := reg.Modules(ctx)
	if err != nil {
		return "", fmt.Errorf("listing modules: %w", err)
	}
	var found []string
	for _, m := range all {
		if strings.HasPrefix(m.SHA256, prefix) {
			found = append(found, m.SHA256)
		}
	}
	switch len(found) {
	case 0:
		return "", fmt.Errorf("no module has a digest starting with sha256:%s (%w)", prefix, bolt.ErrModuleNotFound)
	case 1:
		return found[0], nil
	}
	return "", fmt.Errorf("sha256:%s is the start of %d digests: give more digits", prefix, len(found))
}

// findModule returns the newest module uploaded under name (with that
// describe version, if version is set).
func findModule(ctx context.Context, reg registry.Registry, name, version string) (bolt.ModuleInfo, error) {
	all, err := reg.Modules(ctx)
	if err != nil {
		return bolt.ModuleInfo{}, fmt.Errorf("listing modules: %w", err)
	}
	var best bolt.ModuleInfo
	found := false
	for _, m := range all {
		if m.Name != name || (version != "" && m.Metadata["version"] != version) {
			continue
		}
		if !found || m.Created.After(best.Created) {
			best, found = m, true
		}
	}
	if !found {
		what := "no module of that name"
		if version != "" {
			what = "no module " + name + " with describe version " + version
		}
		return best, fmt.Errorf("%s (%w)%s: upload it first (adkhost module upload %s.wasm --name %s, or PUT /admin/v1/modules/%s)",
			what, bolt.ErrModuleNotFound, suggest.DidYouMean(name, moduleNames(all)), name, name, name)
	}
	return best, nil
}

func moduleNames(all []bolt.ModuleInfo) []string {
	out := make([]string, len(all))
	for i, m := range all {
		out[i] = m.Name
	}
	return out
}

// load builds version of app name from its definition: the app itself
// (cfg.Load) and its runner, with the server's observer plugin first so it
// sees every hook before an app plugin can end a chain.
func (s *Server) load(ctx context.Context, name string, version int, created time.Time, def definition) (*loadedApp, error) {
	src := appdef.Source{Name: name, Files: def.Files, Root: def.Root}
	// A module owner of this load's own: closing a replaced version's
	// pools must leave the new version's alone (same bytes, same app).
	owner := fmt.Sprintf("%s#%d", name, s.loads.Add(1))
	pins := maps.Clone(def.Pins)
	if pins == nil {
		pins = map[string]string{}
	}
	env := appdef.Env{Runtime: s.cfg.Runtime, Modules: RegistryModules{Registry: s.cfg.Stores.Registry, Pins: pins}, Models: s.cfg.Models,
		Logger: s.log, Owner: owner, StrictModels: s.cfg.StrictModels, AllowStdioMCP: s.cfg.AllowStdioMCP} // appdef adds the "app" attribute itself
	app, err := s.cfg.Load(ctx, src, env)
	if err != nil {
		return nil, err
	}
	if app == nil || app.Root == nil {
		return nil, errors.New("loader returned no root agent")
	}
	plugins := append([]callbacks.Plugin{s.obs}, app.Plugins...)
	runner, err := engine.NewRunner(engine.RunnerConfig{
		AppName:    name,
		Agent:      app.Root,
		Sessions:   s.cfg.Stores.Sessions,
		Artifacts:  s.cfg.Stores.Artifacts,
		Plugins:    plugins,
		Logger:     s.log.With("app", name),
		Memory:     s.cfg.Memory,
		Resumable:  app.Resumable,
		Compaction: app.Compaction,
	})
	if err != nil {
		closeErr := app.Close(ctx)
		return nil, errors.Join(fmt.Errorf("building the runner: %w", err), closeErr)
	}
	return &loadedApp{name: name, version: version, created: created, app: app, runner: runner, pins: pins, log: s.log}, nil
}

// loadRegistered loads the newest version of every registered app. An app
// that fails is logged and recorded, and the others still load: one broken
// definition must not keep the server down.
func (s *Server) loadRegistered(ctx context.Context) error {
	apps, err := s.cfg.Stores.Registry.Apps(ctx)
	if err != nil {
		return fmt.Errorf("server: listing registered apps: %w", err)
	}
	for _, a := range apps {
		def, err := decodeDefinition(a.Definition)
		var la *loadedApp
		if err == nil {
			la, err = s.load(ctx, a.Name, a.Version, a.Created, def)
		}
		if err != nil {
			s.log.Error("registered app failed to load", "app", a.Name, "version", a.Version, "err", err)
			s.apps.fail(a.Name, err)
			continue
		}
		s.apps.swap(la)
		s.log.Info("app loaded", "app", a.Name, "version", a.Version)
	}
	return nil
}

// mustJSON encodes a definition; it cannot fail for map[string][]byte.
func mustJSON(d definition) []byte {
	b, err := json.Marshal(d)
	if err != nil {
		panic(fmt.Sprintf("encoding definition: %v", err))
	}
	return b
}
