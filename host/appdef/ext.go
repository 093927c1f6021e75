package appdef

import (
	"math"
	"reflect"
	"strconv"
	"strings"
	"time"

	"github.com/adkhost/adkhost/engine"
	"github.com/adkhost/adkhost/sandbox"
)

// extensionKey is the root file's block of adkhost settings, which
// google-adk's schema does not have.
const extensionKey = "adkhost"

// extension is the adkhost block: the app's plugins, its modules'
// settings, and the runner settings google-adk keeps on its App object
// (resumability_config, events_compaction_config), which its agent YAML
// cannot express.
type extension struct {
	resumable  bool
	compaction *engine.CompactionConfig
	plugins    []moduleUse
	// mcp is what the app's network MCP servers may reach.
	mcp mcpSettings
	// modules holds the settings by the name used in references.
	modules map[string]*moduleSettings
	order   []string
}

// moduleSettings is one entry of adkhost.modules.
type moduleSettings struct {
	at   val    // the entry's mapping
	name string // the key
	ref  string // what ResolveModule gets; the key by default
	// cfg holds Limits, Grants, WriteUserState and WriteAppState.
	limits         sandbox.Limits
	grants         sandbox.Grants
	writeUserState bool
	writeAppState  bool
}

// same reports whether two entries configure a module the same way.
func (s *moduleSettings) same(o *moduleSettings) bool {
	return reflect.DeepEqual(s.limits, o.limits) && reflect.DeepEqual(s.grants, o.grants) &&
		s.writeUserState == o.writeUserState && s.writeAppState == o.writeAppState
}

// parseExtension reads the root file's adkhost block.
func (l *loader) parseExtension(v val) {
	if v.isNull() {
		return
	}
	entries, ok := v.mapping()
	if !ok {
		l.add(v.errf("want a mapping with plugins, modules, resumable, compaction and mcp, got %s", v.kind()))
		return
	}
	for _, e := range entries {
		switch e.key {
		case "plugins":
			l.parsePlugins(e.val)
		case "modules":
			l.parseModules(e.val)
		case "resumable":
			l.ext.resumable, _ = l.optBool(e.val)
		case "compaction":
			l.ext.compaction = l.parseCompaction(e.val)
		case "mcp":
			l.parseMCPSettings(e.val)
		default:
			l.add(e.keyAt.errf("unknown field %q%s", e.key, didYouMean(e.key, []string{"plugins", "modules", "resumable", "compaction", "mcp"})))
		}
	}
}

func (l *loader) parsePlugins(v val) {
	if v.isNull() {
		return
	}
	items, ok := v.list()
	if !ok {
		l.add(v.errf("want a list of {module: <ref>}, got %s", v.kind()))
		return
	}
	for _, item := range items {
		entries, ok := item.mapping()
		if !ok {
			l.add(item.errf("want {module: <ref>}, got %s", item.kind()))
			continue
		}
		var use moduleUse
		for _, e := range entries {
			if e.key != "module" {
				l.add(e.keyAt.errf("unknown field %q%s", e.key, didYouMean(e.key, []string{"module"})))
				continue
			}
			if s, ok := l.str(e.val); ok {
				use = moduleUse{ref: s, at: e.val}
			}
		}
		if use.ref == "" {
			if len(entries) == 0 {
				l.add(item.errf("want {module: <ref>}"))
			}
			continue
		}
		l.ext.plugins = append(l.ext.plugins, use)
	}
}

func (l *loader) parseModules(v val) {
	if v.isNull() {
		return
	}
	entries, ok := v.mapping()
	if !ok {
		l.add(v.errf("want a mapping of module names to settings, got %s", v.kind()))
		return
	}
	for _, e := range entries {
		s := &moduleSettings{at: e.val, name: e.key, ref: e.key}
		fields, ok := e.val.mapping()
		if !ok && !e.val.isNull() {
			l.add(e.val.errf("want a mapping of module settings (ref, grants, limits, write_user_state, write_app_state), got %s", e.val.kind()))
			continue
		}
		for _, f := range fields {
			switch f.key {
			case "ref":
				s.ref, _ = l.str(f.val)
			case "grants":
				l.parseGrants(f.val, &s.grants)
			case "limits":
				l.parseLimits(f.val, &s.limits)
			case "write_user_state":
				s.writeUserState, _ = l.optBool(f.val)
			case "write_app_state":
				s.writeAppState, _ = l.optBool(f.val)
			default:
				l.add(f.keyAt.errf("unknown field %q%s", f.key,
					didYouMean(f.key, []string{"ref", "grants", "limits", "write_user_state", "write_app_state"})))
			}
		}
		l.ext.modules[e.key] = s
		l.ext.order = append(l.ext.order, e.key)
	}
}

// yamlNames spells engine.CompactionConfig's field names, in its errors,
// as the definition does.
var yamlNames = strings.NewReplacer("CompactionInterval", "compaction_interval", "OverlapSize", "overlap_size",
	"TokenThreshold", "token_threshold", "EventRetentionSize", "event_retention_size")

// parseCompaction reads the event compaction settings (google-adk's
// EventsCompactionConfig, engine.CompactionConfig); null is none.
func (l *loader) parseCompaction(v val) *engine.CompactionConfig {
	if v.isNull() {
		return nil
	}
	entries, ok := v.mapping()
	if !ok {
		l.add(v.errf("want a mapping of compaction settings, got %s", v.kind()))
		return nil
	}
	names := []string{"compaction_interval", "overlap_size", "token_threshold", "event_retention_size"}
	cfg := &engine.CompactionConfig{}
	errs := len(l.errs)
	for _, e := range entries {
		n := new(int)
		switch e.key {
		case "compaction_interval":
			*n, cfg.CompactionInterval = l.size(e.val), n
		case "overlap_size":
			*n, cfg.OverlapSize = l.count(e.val), n
		case "token_threshold":
			*n, cfg.TokenThreshold = l.size(e.val), n
		case "event_retention_size":
			*n, cfg.EventRetentionSize = l.count(e.val), n
		default:
			l.add(e.keyAt.errf("unknown compaction setting %q%s; settings: %s", e.key, didYouMean(e.key, names), quoteList(names)))
		}
	}
	if len(l.errs) > errs {
		return nil // a field is wrong: say only that
	}
	if err := cfg.Validate(); err != nil {
		l.add(v.errf("%s", yamlNames.Replace(strings.TrimPrefix(err.Error(), "compaction: "))))
		return nil
	}
	return cfg
}

// parseGrants reads a module's grants (sandbox.Grants). Host directories
// are not grantable from a definition: an app must not choose what part of
// the server's disk it reads.
func (l *loader) parseGrants(v val, g *sandbox.Grants) {
	if v.isNull() {
		return
	}
	entries, ok := v.mapping()
	if !ok {
		l.add(v.errf("want a mapping of grants, got %s", v.kind()))
		return
	}
	names := []string{"state", "actions", "artifacts", "memory", "config", "http", "env", "clock", "random"}
	for _, e := range entries {
		switch e.key {
		case "state":
			g.State, _ = l.optBool(e.val)
		case "actions":
			g.Actions, _ = l.optBool(e.val)
		case "artifacts":
			g.Artifacts, _ = l.optBool(e.val)
		case "memory":
			g.Memory, _ = l.optBool(e.val)
		case "clock":
			g.Clock, _ = l.optBool(e.val)
		case "random":
			g.Random, _ = l.optBool(e.val)
		case "config":
			g.Config = l.stringMap(e.val)
		case "env":
			g.Env = l.stringMap(e.val)
		case "http":
			l.parseHTTPGrant(e.val, &g.HTTP)
		case "dirs":
			l.add(e.keyAt.errf("host directories cannot be granted by an app definition"))
		default:
			l.add(e.keyAt.errf("unknown grant %q%s; grants: %s", e.key, didYouMean(e.key, names), quoteList(names)))
		}
	}
}

func (l *loader) parseHTTPGrant(v val, h *sandbox.HTTPGrant) {
	if v.isNull() {
		return
	}
	entries, ok := v.mapping()
	if !ok {
		l.add(v.errf("want {hosts: [...], allow_private: false, max_response_bytes: N}, got %s", v.kind()))
		return
	}
	for _, e := range entries {
		if !l.httpGrantField(e, h) {
			l.add(e.keyAt.errf("unknown field %q%s", e.key, didYouMean(e.key, []string{"hosts", "allow_private", "max_response_bytes"})))
		}
	}
}

// httpGrantField reads e into h when it is a field of the HTTP grant's
// shape (hosts, allow_private, max_response_bytes), which adkhost.mcp
// shares, and reports whether it was.
func (l *loader) httpGrantField(e entry, h *sandbox.HTTPGrant) bool {
	switch e.key {
	case "hosts":
		items, ok := e.val.list()
		if !ok {
			l.add(e.val.errf("want a list of host names, got %s", e.val.kind()))
			return true
		}
		for _, item := range items {
			if s, ok := l.str(item); ok {
				h.Hosts = append(h.Hosts, s)
			}
		}
	case "allow_private":
		h.AllowPrivate, _ = l.optBool(e.val)
	case "max_response_bytes":
		h.MaxResponseBytes = l.size(e.val)
	default:
		return false
	}
	return true
}

// parseLimits reads a module's limits (sandbox.Limits); absent fields keep
// the sandbox's defaults.
func (l *loader) parseLimits(v val, lim *sandbox.Limits) {
	if v.isNull() {
		return
	}
	entries, ok := v.mapping()
	if !ok {
		l.add(v.errf("want a mapping of limits, got %s", v.kind()))
		return
	}
	names := []string{"memory_pages", "timeout", "init_timeout", "max_input_bytes", "max_output_bytes", "max_instances", "max_host_calls", "max_call_depth"}
	for _, e := range entries {
		switch e.key {
		case "memory_pages":
			n := l.size(e.val)
			if n > math.MaxUint32 {
				l.add(e.val.errf("memory_pages is at most %d", uint32(math.MaxUint32)))
				continue
			}
			lim.MemoryPages = uint32(n)
		case "timeout":
			lim.Timeout = l.duration(e.val)
		case "init_timeout":
			lim.InitTimeout = l.duration(e.val)
		case "max_input_bytes":
			lim.MaxInputBytes = l.size(e.val)
		case "max_output_bytes":
			lim.MaxOutputBytes = l.size(e.val)
		case "max_instances":
			lim.MaxInstances = l.size(e.val)
		case "max_host_calls":
			lim.MaxHostCalls = l.size(e.val)
		case "max_call_depth":
			lim.MaxCallDepth = l.size(e.val)
		default:
			l.add(e.keyAt.errf("unknown limit %q%s; limits: %s", e.key, didYouMean(e.key, names), quoteList(names)))
		}
	}
}

// size reads a positive integer.
func (l *loader) size(v val) int {
	n, ok := v.integer()
	if !ok || n <= 0 || n > math.MaxInt32 {
		l.add(v.errf("want a positive integer, got %s", intOrKind(v)))
		return 0
	}
	return int(n)
}

// intOrKind names what v is for an error: its value if it is an integer.
func intOrKind(v val) string {
	if n, ok := v.integer(); ok {
		return strconv.FormatInt(n, 10)
	}
	return v.kind()
}

// count reads a non-negative integer.
func (l *loader) count(v val) int {
	n, ok := v.integer()
	if !ok || n < 0 || n > math.MaxInt32 {
		l.add(v.errf("want a non-negative integer, got %s", intOrKind(v)))
		return 0
	}
	return int(n)
}

// duration reads a Go duration ("2s", "500ms") or a number of seconds.
func (l *loader) duration(v val) time.Duration {
	if f, ok := v.number(); ok && f > 0 && f < math.MaxInt64/float64(time.Second) {
		return time.Duration(f * float64(time.Second))
	}
	if s, ok := v.str(); ok {
		d, err := time.ParseDuration(s)
		if err == nil && d > 0 {
			return d
		}
	}
	l.add(v.errf("want a positive duration such as 2s or 500ms, or a number of seconds"))
	return 0
}

// stringMap reads a mapping of string values; null is nil (not granted).
func (l *loader) stringMap(v val) map[string]string {
	if v.isNull() {
		return nil
	}
	entries, ok := v.mapping()
	if !ok {
		l.add(v.errf("want a mapping of strings, got %s", v.kind()))
		return nil
	}
	out := make(map[string]string, len(entries))
	for _, e := range entries {
		if s, ok := l.str(e.val); ok {
			out[e.key] = s
		}
	}
	return out
}
