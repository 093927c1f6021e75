package adkhost

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"github.com/adkhost/adkhost/abi"
)

// registry holds what a module registered: its name, capabilities, tools
// and callbacks. The package has one, std; tests make their own.
type registry struct {
	name, version string
	caps          []abi.Capability
	tools         []*toolEntry
	byName        map[string]*toolEntry
	cb            callbacks
}

var std = newRegistry()

func newRegistry() *registry { return &registry{byName: map[string]*toolEntry{}} }

// tool returns the tool registered as name. A module has a few tools:
// comparing names costs less in a guest than hashing one (a Go guest has
// no hardware-assisted hash) and runs less code.
func (r *registry) tool(name string) (*toolEntry, bool) {
	if len(r.tools) > 8 {
		t, ok := r.byName[name]
		return t, ok
	}
	for _, t := range r.tools {
		if t.decl.Name == name {
			return t, true
		}
	}
	return nil, false
}

// Module names the module and asks for capabilities. Call it once, from an
// init function of the guest's main package. name is what the host calls
// the module: a letter or underscore, then letters, digits, '_', '.' or
// '-', 64 bytes at most. version is for people; the host ignores it.
//
// caps are the capabilities the module asks for (abi.CapState,
// abi.CapActions, ...): nothing is available unless asked for here and
// granted by the embedder, and a host function outside them returns
// abi.StatusDenied. Require adds more.
//
// Module panics if name is not valid or a capability is unknown.
func Module(name, version string, caps ...abi.Capability) { std.module(name, version, caps) }

// Require asks for more capabilities, for a library that registers
// callbacks needing them. It panics for an unknown capability.
func Require(caps ...abi.Capability) { std.require(caps) }

// Describe returns the describe message of the registered module, as the
// module's adkhost_describe export answers it, after checking it with
// abi.Describe.Validate.
func Describe() (*abi.Describe, error) { return std.describe() }

func (r *registry) module(name, version string, caps []abi.Capability) {
	if !abi.ValidName(name) {
		panic(fmt.Sprintf("adkhost.Module: %q is not a valid module name (a letter or underscore, then letters, digits, '_', '.', '-'; 64 bytes at most)", name))
	}
	r.name, r.version = name, version
	r.require(caps)
}

func (r *registry) require(caps []abi.Capability) {
	for _, c := range caps {
		if !c.Known() {
			panic(fmt.Sprintf("adkhost: unknown capability %q", c))
		}
		if !slices.Contains(r.caps, c) {
			r.caps = append(r.caps, c)
		}
	}
}

func (r *registry) addTool(t *toolEntry) {
	if _, dup := r.byName[t.decl.Name]; dup {
		panic(fmt.Sprintf("adkhost.Tool: tool %q is registered twice", t.decl.Name))
	}
	r.byName[t.decl.Name] = t
	r.tools = append(r.tools, t)
}

// hooks lists the implemented hooks in the order of ABI.md.
func (r *registry) hooks() []abi.Hook {
	var hs []abi.Hook
	for _, h := range abi.Hooks() {
		if r.implements(h) {
			hs = append(hs, h)
		}
	}
	return hs
}

func (r *registry) implements(h abi.Hook) bool {
	if h == abi.HookToolCall {
		return len(r.tools) > 0
	}
	return r.cb.count(h) > 0
}

func (r *registry) describe() (*abi.Describe, error) {
	if r.name == "" {
		return nil, errors.New("adkhost: the module has no name: call adkhost.Module(name, version, capabilities...) in an init function of the main package (a c-shared guest never runs main)")
	}
	d := &abi.Describe{
		Header:       abi.Header{ABIVersion: abi.Version},
		Name:         r.name,
		Version:      r.version,
		Hooks:        r.hooks(),
		Capabilities: slices.Clone(r.caps),
	}
	if d.Hooks == nil {
		d.Hooks = []abi.Hook{}
	}
	for _, t := range r.tools {
		decl := t.decl
		if t.params != nil {
			b, err := json.Marshal(t.params)
			if err != nil {
				return nil, fmt.Errorf("adkhost: tool %q: its parameters' schema: %w", decl.Name, err)
			}
			decl.Parameters = b
		}
		d.Tools = append(d.Tools, decl)
	}
	if err := d.Validate(); err != nil {
		return nil, err
	}
	return d, nil
}
