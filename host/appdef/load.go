package appdef

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path"
	"strings"
	"unicode/utf8"

	"github.com/adkhost/adkhost/engine/tool/mcptool"
	"github.com/adkhost/adkhost/host"
)

// DefaultRoot is the root agent's file when Source.Root is "", as
// google-adk's `adk web` looks for it.
const DefaultRoot = "root_agent.yaml"

// loader holds the state of one Load.
type loader struct {
	ctx   context.Context
	src   Source
	env   Env
	log   *slog.Logger
	files map[string][]byte // Source.Files by cleaned path
	root  string

	errs     []error
	dropped  int            // errors past maxErrors
	stack    []string       // files being parsed, for cycles
	depth    int            // agents being parsed, AgentTools' included
	used     map[string]val // files already used as an agent's config, by the reference
	warnings []string
	agents   int
	names    map[string]val // agent names, for duplicates
	ext      extension
	toolsets []*mcptool.Toolset
}

// add records an error; past maxErrors they are only counted, so a
// definition built to fail everywhere cannot make a huge answer.
func (l *loader) add(e *Error) {
	if len(l.errs) >= maxErrors {
		l.dropped++
		return
	}
	// Messages quote the keys and values they are about, which may be as
	// long as the file, and aliases repeat one value in many errors.
	e.Msg = clip(e.Msg, maxErrorMsg)
	e.Field = clip(e.Field, maxErrorField)
	l.errs = append(l.errs, e)
}

// Bounds on what one error keeps of its message and field path.
const (
	maxErrorMsg   = 2 << 10
	maxErrorField = 256
)

// clip shortens s to about max bytes, keeping its start and end (where a
// message's hint is) around a note of what was cut, on UTF-8 boundaries.
func clip(s string, max int) string {
	if len(s) <= max {
		return s
	}
	head, tail := max*3/4, max/4
	for head > 0 && !utf8.RuneStart(s[head]) {
		head--
	}
	start := len(s) - tail
	for start < len(s) && !utf8.RuneStart(s[start]) {
		start++
	}
	return s[:head] + fmt.Sprintf("…(%d bytes cut)…", start-head) + s[start:]
}

// Load parses, validates and builds a definition. Errors are *Error values
// (several joined with errors.Join when there is more than one; Errors
// lists them). Load reports every error it can find in one pass: the
// files' fields, the modules' tools and hooks, the models.
//
// Each module is loaded once (host.Load with Owner src.Name, or
// env.Owner), whatever the number of references; a failed Load closes what
// it loaded.
func Load(ctx context.Context, src Source, env Env) (*App, error) {
	l := &loader{ctx: ctx, src: src, env: env, log: env.Logger, names: map[string]val{}, used: map[string]val{}}
	if l.log == nil {
		l.log = slog.New(slog.DiscardHandler)
	}
	l.ext.modules = map[string]*moduleSettings{}
	l.files = make(map[string][]byte, len(src.Files))
	for p, data := range src.Files {
		l.files[cleanPath(p)] = data
	}
	l.root = cleanPath(src.Root)
	if src.Root == "" {
		l.root = DefaultRoot
	}
	if src.Name == "" {
		return nil, &Error{File: l.root, Msg: "the app has no name (Source.Name)"}
	}

	root := l.loadAgentFile(l.root, val{})
	if root == nil {
		return nil, l.joined()
	}
	mods := l.loadModules(root)
	app := &App{Name: src.Name, Modules: map[string]*host.Module{}}
	for _, m := range mods.byDigest {
		if m.m != nil {
			app.Modules[m.digest] = m.m
		}
	}
	models := l.resolveModels(root)
	plugins := l.plugins(mods)
	if len(l.errs) == 0 {
		app.Root = l.build(root, models, mods)
	}
	app.Toolsets = l.toolsets
	if len(l.errs) > 0 {
		if err := app.Close(context.WithoutCancel(ctx)); err != nil {
			l.log.Warn("appdef: closing modules of a failed load", "app", src.Name, "err", err)
		}
		return nil, l.joined()
	}
	app.Plugins = plugins
	app.Resumable, app.Compaction = l.ext.resumable, l.ext.compaction
	app.Warnings = l.warnings
	return app, nil
}

// joined is the load's error: the errors recorded, and how many more
// there were.
func (l *loader) joined() error {
	errs := l.errs
	if l.dropped > 0 {
		errs = append(errs[:len(errs):len(errs)], &Error{File: l.root, Msg: fmt.Sprintf("and %d more errors", l.dropped)})
	}
	return errors.Join(errs...)
}

// cleanPath normalises a file's path in the definition: slash-separated,
// relative, without "./".
func cleanPath(p string) string {
	p = path.Clean(strings.ReplaceAll(p, `\`, "/"))
	return strings.TrimPrefix(p, "/")
}

// walk calls f for a and every agent below it, parents first.
func walk(a *agentSpec, f func(a *agentSpec, parents []*agentSpec)) {
	var rec func(a *agentSpec, parents []*agentSpec)
	rec = func(a *agentSpec, parents []*agentSpec) {
		f(a, parents)
		for _, s := range a.subAgents {
			rec(s, append(parents, a))
		}
		// An AgentTool's agent is a tree of its own: no ancestors.
		for _, t := range a.tools {
			if t.agentTool != nil {
				rec(t.agentTool.agent, nil)
			}
		}
	}
	rec(a, nil)
}
