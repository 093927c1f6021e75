package appdef

import (
	"errors"
	"slices"

	"github.com/adkhost/adkhost/callbacks"
	"github.com/adkhost/adkhost/host"
	"github.com/adkhost/adkhost/sandbox"
)

// loadedModule is one module of the app, loaded once whatever the number
// of references to it.
type loadedModule struct {
	digest   string
	wasm     []byte
	settings *moduleSettings // nil: the defaults (no grants)
	first    moduleUse       // the first reference, where errors go
	m        *host.Module    // nil when it failed to load
}

// appModules are the app's modules by reference and by digest.
type appModules struct {
	byRef    map[string]*loadedModule
	byDigest map[string]*loadedModule
}

// module returns the loaded module a reference names, or nil when it
// failed (the error is recorded already).
func (a appModules) module(ref string) *host.Module {
	if lm := a.byRef[ref]; lm != nil {
		return lm.m
	}
	return nil
}

// uses lists every module reference of the tree and the plugins, in order.
func (l *loader) uses(root *agentSpec) []moduleUse {
	out := slices.Clone(l.ext.plugins)
	walk(root, func(a *agentSpec, _ []*agentSpec) {
		for _, t := range a.tools {
			if t.module.ref != "" {
				out = append(out, t.module)
			}
		}
		for _, c := range a.callbacks {
			out = append(out, c.module)
		}
	})
	return out
}

// loadModules resolves every module reference, loads each module once, and
// checks that each reference finds what it names (a tool, a hook).
func (l *loader) loadModules(root *agentSpec) appModules {
	mods := appModules{byRef: map[string]*loadedModule{}, byDigest: map[string]*loadedModule{}}
	uses := l.uses(root)
	if len(uses) > 0 && (l.env.Modules == nil || l.env.Runtime == nil) {
		l.add(uses[0].at.errf("the definition uses modules, but the server has no module resolver or runtime (Env.Modules, Env.Runtime)"))
		return mods
	}
	for _, u := range uses {
		if _, done := mods.byRef[u.ref]; done {
			continue
		}
		mods.byRef[u.ref] = l.resolveModule(u, mods.byDigest)
	}
	for name := range l.ext.modules {
		if _, used := mods.byRef[name]; !used {
			l.log.Warn("appdef: module settings for a module no agent or plugin uses", "app", l.src.Name, "module", name)
		}
	}
	for _, lm := range mods.byDigest {
		l.instantiate(lm)
	}
	l.checkUses(root, mods)
	return mods
}

// resolveModule resolves one reference (through its adkhost.modules
// entry's ref, if any) and merges it with the references to the same
// digest. It returns nil when the reference does not resolve.
func (l *loader) resolveModule(u moduleUse, byDigest map[string]*loadedModule) *loadedModule {
	settings := l.ext.modules[u.ref]
	ref := u.ref
	if settings != nil && settings.ref != "" {
		ref = settings.ref
	}
	wasm, digest, err := l.env.Modules.ResolveModule(l.ctx, ref)
	if err != nil {
		l.add(u.at.wrap(err, "unknown module %q: %v", ref, err))
		return nil
	}
	lm := byDigest[digest]
	if lm == nil {
		lm = &loadedModule{digest: digest, wasm: wasm, first: u}
		byDigest[digest] = lm
	}
	switch {
	case settings == nil:
	case lm.settings == nil:
		lm.settings = settings
	case lm.settings != settings && !lm.settings.same(settings):
		l.add(settings.at.errf("module settings %q and %q name the same module (%s) with different settings; keep one",
			lm.settings.name, settings.name, digest))
	}
	return lm
}

// instantiate loads a module for the app, with its settings.
func (l *loader) instantiate(lm *loadedModule) {
	owner := l.env.Owner
	if owner == "" {
		owner = l.src.Name
	}
	cfg := host.ModuleConfig{Owner: owner, Logger: l.log.With("app", l.src.Name)}
	at, name := lm.first.at, lm.first.ref
	if s := lm.settings; s != nil {
		cfg.Limits, cfg.Grants = s.limits, s.grants
		cfg.WriteUserState, cfg.WriteAppState = s.writeUserState, s.writeAppState
		at, name = s.at, s.name
	}
	m, err := host.Load(l.ctx, l.env.Runtime, lm.wasm, cfg)
	if err == nil {
		lm.m = m
		return
	}
	hint := ""
	switch {
	case errors.Is(err, sandbox.ErrNotGranted):
		hint = "; grant what it asks for under " + extensionKey + ".modules." + name + ".grants"
	case errors.Is(err, sandbox.ErrLimits):
		hint = "; adjust " + extensionKey + ".modules." + name + ".limits"
	case errors.Is(err, sandbox.ErrPoolConflict):
		hint = "; another definition of this app still runs the module with other settings: close it first, or load with another Env.Owner"
	}
	l.add(at.wrap(err, "module %q does not load: %v%s", lm.first.ref, err, hint))
}

// checkUses checks that each tool and hook reference finds its tool or hook.
func (l *loader) checkUses(root *agentSpec, mods appModules) {
	walk(root, func(a *agentSpec, _ []*agentSpec) {
		for _, t := range a.tools {
			m := mods.module(t.module.ref)
			if m == nil || t.tool == "" {
				if m != nil && len(m.Tools()) == 0 {
					l.add(t.module.at.errf("module %q (%s) declares no tools", t.module.ref, m.Name()))
				}
				continue
			}
			if findTool(m, t.tool) == nil {
				l.add(t.toolAt.errf("module %q (%s) has no tool %q%s; its tools: %s",
					t.module.ref, m.Name(), t.tool, didYouMean(t.tool, toolNames(m)), quoteList(toolNames(m))))
			}
		}
		for _, c := range a.callbacks {
			if m := mods.module(c.module.ref); m != nil && !m.Implements(c.hook) {
				at := c.hookAt
				if at.n == nil {
					at = c.module.at
				}
				l.add(at.errf("module %q (%s) does not implement hook %s; it implements: %s",
					c.module.ref, m.Name(), c.hook, quoteList(hooksOf(m))))
			}
		}
	})
	for _, p := range l.ext.plugins {
		m := mods.module(p.ref)
		if m == nil {
			continue
		}
		if !slices.ContainsFunc(pluginHooks(), m.Implements) {
			l.add(p.at.errf("module %q (%s) implements no plugin hook (it implements: %s)", p.ref, m.Name(), quoteList(hooksOf(m))))
		}
	}
}

// plugins returns the runner plugins, in the order listed.
func (l *loader) plugins(mods appModules) []callbacks.Plugin {
	var out []callbacks.Plugin
	for _, p := range l.ext.plugins {
		if m := mods.module(p.ref); m != nil {
			out = append(out, m.Plugin())
		}
	}
	return out
}

func findTool(m *host.Module, name string) *host.Tool {
	for _, t := range m.Tools() {
		if t.Name() == name {
			if ht, ok := t.(*host.Tool); ok {
				return ht
			}
		}
	}
	return nil
}

func toolNames(m *host.Module) []string {
	var out []string
	for _, t := range m.Tools() {
		out = append(out, t.Name())
	}
	return out
}

func hooksOf(m *host.Module) []string {
	var out []string
	for _, h := range m.Describe().Hooks {
		out = append(out, string(h))
	}
	if len(out) == 0 {
		return []string{"none"}
	}
	return out
}
