package server

import (
	"context"
	"log/slog"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/adkhost/adkhost/engine"
	"github.com/adkhost/adkhost/host/appdef"
)

// loadedApp is one version of an app, loaded and ready to run. Runs hold a
// reference (acquire/release) so a replaced or deleted version stays open
// until its last in-flight invocation has finished, then closes.
type loadedApp struct {
	name    string
	version int
	created time.Time
	app     *appdef.App
	runner  *engine.Runner
	// pins are the short digests the load resolved (definition.Pins).
	pins map[string]string

	refs      atomic.Int64
	retired   atomic.Bool
	closed    atomic.Bool // set once close has run, for tests and logs
	closeOnce sync.Once
	log       *slog.Logger
	// afterClose, set when the version is retired, runs once it closed.
	afterClose func()
}

// close releases the app's modules once, whoever gets there first.
func (a *loadedApp) close() {
	a.closeOnce.Do(func() {
		// The app is out of every request's hands here, so no request
		// context applies; closing pools is quick and local.
		if err := a.app.Close(context.Background()); err != nil {
			a.log.Warn("closing app version", "app", a.name, "version", a.version, "err", err)
		}
		a.closed.Store(true)
		a.log.Info("app version closed", "app", a.name, "version", a.version)
		if a.afterClose != nil {
			a.afterClose()
		}
	})
}

// retire marks a version as replaced or deleted: no new run acquires it,
// and it closes when the runs holding it release it.
func (a *loadedApp) retire() {
	a.retired.Store(true)
	if a.refs.Load() == 0 {
		a.close()
	}
}

// release drops a run's reference.
func (a *loadedApp) release() {
	if a.refs.Add(-1) == 0 && a.retired.Load() {
		a.close()
	}
}

// appSet holds the current version of every app, and why the apps that
// failed to load at startup did.
type appSet struct {
	mu     sync.RWMutex
	apps   map[string]*loadedApp
	failed map[string]error
	// changed, when set, is told the name of an app whose current version
	// was replaced or removed (the MCP server re-syncs its tool list).
	changed func(name string)
	// gone, when set, is told the name of a deleted app once its last run
	// has ended, unless the name is served again by then (the metrics of
	// the app are dropped).
	gone func(name string)
	// moduleGone, when set, is told the describe name of a module of a
	// closed app version that no app served uses (its metrics are
	// dropped).
	moduleGone func(name string)
}

// retire retires a version of an app that left the set; removed says the
// app was deleted rather than replaced.
func (s *appSet) retire(old *loadedApp, removed bool) {
	// Set before retire: a run releasing the version closes it only once
	// it sees it retired.
	old.afterClose = func() {
		if removed && s.gone != nil && s.get(old.name) == nil {
			s.gone(old.name)
		}
		if s.moduleGone == nil || old.app == nil {
			return
		}
		for _, m := range old.app.Modules {
			if !s.usesModuleNamed(m.Name()) {
				s.moduleGone(m.Name())
			}
		}
	}
	old.retire()
}

// usesModuleNamed reports whether an app served has a module whose
// describe name is name.
func (s *appSet) usesModuleNamed(name string) bool {
	s.mu.RLock()
	defer s.mu.RUnlock()
	for _, a := range s.apps {
		for _, m := range a.app.Modules {
			if m.Name() == name {
				return true
			}
		}
	}
	return false
}

func newAppSet() *appSet {
	return &appSet{apps: map[string]*loadedApp{}, failed: map[string]error{}}
}

// acquire returns the current version of name with a reference taken, or
// nil. The reference is taken under the read lock, so a concurrent swap
// retires the version only after it can see the reference.
func (s *appSet) acquire(name string) *loadedApp {
	s.mu.RLock()
	defer s.mu.RUnlock()
	a := s.apps[name]
	if a != nil {
		a.refs.Add(1)
	}
	return a
}

// get returns the current version without a reference, for reading its
// metadata only.
func (s *appSet) get(name string) *loadedApp {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.apps[name]
}

// swap makes a the current version of its app and retires the previous one.
func (s *appSet) swap(a *loadedApp) {
	s.mu.Lock()
	old := s.apps[a.name]
	s.apps[a.name] = a
	delete(s.failed, a.name)
	s.mu.Unlock()
	if old != nil {
		s.retire(old, false)
	}
	if s.changed != nil {
		s.changed(a.name)
	}
}

// fail records why name could not be loaded.
func (s *appSet) fail(name string, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.failed[name] = err
}

// remove retires and forgets name; it reports whether name was known.
func (s *appSet) remove(name string) bool {
	s.mu.Lock()
	old := s.apps[name]
	_, failed := s.failed[name]
	delete(s.apps, name)
	delete(s.failed, name)
	s.mu.Unlock()
	if old != nil {
		s.retire(old, true)
	} else if failed && s.gone != nil && s.get(name) == nil {
		s.gone(name)
	}
	if s.changed != nil {
		s.changed(name)
	}
	return old != nil || failed
}

// names returns the names of the apps being served, sorted.
func (s *appSet) names() []string {
	s.mu.RLock()
	defer s.mu.RUnlock()
	out := make([]string, 0, len(s.apps))
	for n := range s.apps {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// loadError returns the startup load error of name, if any.
func (s *appSet) loadError(name string) error {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.failed[name]
}

// usersOf returns the apps whose current version uses the module digest
// (hex, with or without "sha256:").
func (s *appSet) usersOf(digest string) []string {
	digest = strings.TrimPrefix(digest, "sha256:")
	s.mu.RLock()
	defer s.mu.RUnlock()
	var out []string
	for name, a := range s.apps {
		for d := range a.app.Modules {
			if strings.TrimPrefix(d, "sha256:") == digest {
				out = append(out, name)
				break
			}
		}
	}
	sort.Strings(out)
	return out
}

// closeAll retires every app; versions still running close when done.
func (s *appSet) closeAll() {
	s.mu.Lock()
	apps := s.apps
	s.apps = map[string]*loadedApp{}
	s.mu.Unlock()
	for _, a := range apps {
		a.retire()
	}
}
