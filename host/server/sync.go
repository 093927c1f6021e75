package server

import (
	"context"
	"errors"
	"fmt"

	"github.com/adkhost/adkhost/store/registry"
)

// SyncApp brings the app name in line with the registry, for replicas
// that share one (store/postgres): the newest stored version is loaded
// if it is not the one served, and an app gone from the registry stops
// being served. Runs in flight finish on the version they started with,
// as after an admin PUT or DELETE. A version that fails to load is
// recorded, as at startup, and the version served before stays.
func (s *Server) SyncApp(ctx context.Context, name string) error {
	s.adminMu.Lock()
	defer s.adminMu.Unlock()
	a, err := s.cfg.Stores.Registry.App(ctx, name, registry.LatestVersion)
	if errors.Is(err, registry.ErrAppNotFound) {
		if s.apps.remove(name) {
			s.log.Info("app deleted in the registry", "app", name)
		}
		return nil
	}
	if err != nil {
		return fmt.Errorf("server: sync app %q: %w", name, err)
	}
	if cur := s.apps.get(name); cur != nil && cur.version == a.Version {
		return nil
	}
	def, err := decodeDefinition(a.Definition)
	var la *loadedApp
	if err == nil {
		la, err = s.load(ctx, a.Name, a.Version, a.Created, def)
	}
	if err != nil {
		s.log.Error("registered app failed to load", "app", a.Name, "version", a.Version, "err", err)
		s.apps.fail(a.Name, err)
		return nil
	}
	s.apps.swap(la)
	s.log.Info("app loaded from the registry", "app", a.Name, "version", a.Version)
	return nil
}

// Resync runs SyncApp for every app in the registry and every app
// served: after a replica lost its notifications (a reconnect), what it
// serves matches the registry again.
func (s *Server) Resync(ctx context.Context) error {
	apps, err := s.cfg.Stores.Registry.Apps(ctx)
	if err != nil {
		return fmt.Errorf("server: resync: %w", err)
	}
	names := map[string]bool{}
	for _, a := range apps {
		names[a.Name] = true
	}
	for _, n := range s.apps.names() {
		names[n] = true
	}
	var errs []error
	for n := range names {
		errs = append(errs, s.SyncApp(ctx, n))
	}
	return errors.Join(errs...)
}
