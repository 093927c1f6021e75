package server

import (
	"context"
	"errors"
	"log/slog"
	"strconv"
	"time"

	"go.opentelemetry.io/otel/trace"

	"github.com/adkhost/adkhost/engine"
	"github.com/adkhost/adkhost/engine/artifact"
	"github.com/adkhost/adkhost/engine/memory"
	"github.com/adkhost/adkhost/engine/session"
	"github.com/adkhost/adkhost/host/appdef"
	"github.com/adkhost/adkhost/sandbox"
	"github.com/adkhost/adkhost/store/bolt"
	"github.com/adkhost/adkhost/store/registry"
)

// Loader builds an app from its definition; appdef.Load is the default.
// Tests pass their own to construct apps directly.
type Loader func(ctx context.Context, src appdef.Source, env appdef.Env) (*appdef.App, error)

// Limits bound what one request may take: body sizes, and how long a
// client may keep a connection busy without making progress. Zero fields
// take the defaults.
type Limits struct {
	// ModuleBytes bounds an uploaded .wasm (default 64 MiB).
	ModuleBytes int64
	// DefinitionBytes bounds an app definition, YAML or multipart bundle
	// (default 1 MiB).
	DefinitionBytes int64
	// RequestBytes bounds run API bodies: /run, /run_sse, sessions
	// (default 1 MiB).
	RequestBytes int64
	// BodyTimeout bounds how long a client may take to send a request
	// body, once its headers are in (default 1 minute); past it the
	// request is a 408. Without it a client trickling a body held a
	// handler and its buffer for as long as it liked.
	BodyTimeout time.Duration
	// WriteTimeout bounds how long one write of an answer (an SSE frame,
	// a /run list) may wait for the client to read (default 30 seconds);
	// past it the connection is dropped and the run stops, as when the
	// client hangs up. It does not bound a run: a stream may stay quiet
	// for as long as the run needs.
	WriteTimeout time.Duration
	// IdleTimeout is how long Serve keeps a connection open between
	// requests (default 2 minutes).
	IdleTimeout time.Duration
	// MaxRuns bounds the runs in flight, all apps together: /run and
	// /run_sse requests, an SSE run for as long as its stream lasts, and
	// MCP tool calls while they run (default DefaultMaxRuns). A run past it is refused with 503 and
	// Retry-After before its body is read, so a burst of clients cannot
	// hold a request body and a run's memory each without end.
	MaxRuns int
	// StateBytes bounds each state scope, as JSON: a session's own state,
	// a user's user: state, an app's app: state (default
	// DefaultStateBytes, 16 MiB). A write that would take a
	// scope past it (a run's event, PATCH, a session's initial state) is
	// refused with 413 and stores nothing. Without it each request could
	// add up to RequestBytes to app state, which every read of every
	// session of the app loads.
	StateBytes int64
	// ListBytes bounds a session listing (GET .../sessions), as the JSON
	// its sessions' states make (default DefaultListBytes, 32 MiB). Each
	// listed session carries its state merged with the app's and the
	// user's, as google-adk lists them: a thousand sessions under 16 MiB
	// of app state made a 16 GB answer from state stored once. A listing
	// past it is refused with 413 before anything is encoded.
	ListBytes int64
	// MaxLLMCalls, MaxEvents and MaxFunctionCalls are each run's
	// engine.RunConfig bounds of the same names, an MCP tool call's
	// included: model calls of an invocation (google-adk's max_llm_calls,
	// default 500), events it stores with those of its agent tools
	// (default 10,000), function calls of one model response (default
	// 256). 0 takes the engine's default; a negative value means no limit.
	MaxLLMCalls, MaxEvents, MaxFunctionCalls int
	// MaxRunBytes is each run's engine.RunConfig.MaxBytes: what an
	// invocation produces (its events, its tools' results as they arrive)
	// with its agent tools' runs (default 64 MiB). 0 takes the engine's
	// default; a negative value means no limit.
	MaxRunBytes int64
}

// RunConfig is the engine.RunConfig of a run under l's bounds.
func (l Limits) RunConfig() engine.RunConfig {
	return engine.RunConfig{MaxLLMCalls: l.MaxLLMCalls, MaxEvents: l.MaxEvents, MaxFunctionCalls: l.MaxFunctionCalls, MaxBytes: l.MaxRunBytes}
}

// Default body limits.
const (
	DefaultModuleBytes     = 64 << 20
	DefaultDefinitionBytes = 1 << 20
	DefaultRequestBytes    = 1 << 20
	DefaultBodyTimeout     = time.Minute
	DefaultWriteTimeout    = 30 * time.Second
	DefaultIdleTimeout     = 2 * time.Minute
	// DefaultMaxRuns is a fixed number, not one derived from GOMAXPROCS:
	// a run spends its life waiting on model calls over the network, not
	// on a CPU, so 2 cores serve hundreds of runs at once (TestLoad runs
	// 200), and a CPU-based bound would refuse work a small machine can
	// do. 1024 is far above what one server's model quota sustains, and
	// bounds what a burst can hold at about 1 GiB of request bodies
	// (1024 × RequestBytes) rather than without limit. Equal to
	// DefaultMCPMaxSessions, the other server-wide bound.
	DefaultMaxRuns = 1024
	// DefaultStateBytes bounds each state scope (see Limits.StateBytes).
	DefaultStateBytes = session.DefaultMaxStateBytes
	// DefaultListBytes bounds a session listing (see Limits.ListBytes):
	// thousands of sessions of a few KiB of state each.
	DefaultListBytes = 32 << 20
)

func (l Limits) withDefaults() Limits {
	if l.ModuleBytes <= 0 {
		l.ModuleBytes = DefaultModuleBytes
	}
	if l.DefinitionBytes <= 0 {
		l.DefinitionBytes = DefaultDefinitionBytes
	}
	if l.RequestBytes <= 0 {
		l.RequestBytes = DefaultRequestBytes
	}
	if l.BodyTimeout <= 0 {
		l.BodyTimeout = DefaultBodyTimeout
	}
	if l.WriteTimeout <= 0 {
		l.WriteTimeout = DefaultWriteTimeout
	}
	if l.IdleTimeout <= 0 {
		l.IdleTimeout = DefaultIdleTimeout
	}
	if l.MaxRuns <= 0 {
		l.MaxRuns = DefaultMaxRuns
	}
	if l.StateBytes <= 0 {
		l.StateBytes = DefaultStateBytes
	}
	if l.ListBytes <= 0 {
		l.ListBytes = DefaultListBytes
	}
	return l
}

// Config configures New.
type Config struct {
	// DB stores sessions, artifacts, apps and modules in a bbolt file;
	// it fills Stores when Stores is not set. The server does not close
	// it.
	DB *bolt.DB
	// Stores are where sessions, artifacts, apps and modules live (e.g.
	// store/postgres's, shared by replicas); DB or all of Stores is
	// required.
	Stores Stores
	// StrictModels refuses an app whose model has no configured backend
	// (appdef.Env.StrictModels); by default it registers with a warning,
	// and its model calls fail, as google-adk loads such a config.
	StrictModels bool
	// AllowStdioMCP lets app definitions declare stdio MCP servers
	// (appdef.Env.AllowStdioMCP).
	AllowStdioMCP bool
	// Runtime compiles and runs modules; required. The server does not
	// close it.
	Runtime *sandbox.Runtime
	// AdminToken guards /admin/v1; required, so the admin API is never
	// open by accident.
	AdminToken string
	// RunToken, when set, guards the run API (everything but /health and
	// /metrics).
	RunToken string
	// MCPToken guards the MCP endpoint /mcp/{app} (mcp.go); empty means
	// RunToken. With both empty there is no MCP endpoint: it is never
	// served without a token.
	MCPToken string
	// MCPSessionTimeout is how long an idle MCP session is kept; 0 means
	// DefaultMCPSessionTimeout.
	MCPSessionTimeout time.Duration
	// MCPMaxSessions bounds the MCP sessions open at once, all apps
	// together; past it a new session is refused with 503. 0 means
	// DefaultMCPMaxSessions.
	MCPMaxSessions int
	// Load builds apps; nil means appdef.Load.
	Load Loader
	// Models resolves model names of definitions; nil means
	// appdef.NewModelRegistryFromEnv(os.Getenv) (Gemini, OpenAI,
	// Anthropic and scripted models, keys from the environment).
	Models appdef.Models
	Limits Limits
	// Tracer receives the spans of invocations; nil means none are made.
	Tracer trace.TracerProvider
	// Version is reported by GET /version.
	Version string
	// Logger receives JSON logs; nil discards.
	Logger *slog.Logger
	// Memory is the memory service of every app's runner (load_memory,
	// preload_memory, PATCH .../memory), e.g. DB.Memory() to keep
	// memories in the store file (adkhost serve does). nil means a
	// memory.InMemoryService of the server's own, as google-adk's
	// api_server has by default, which does not persist across restarts.
	Memory memory.Service
	// DevUIDir, when set, is a build of google-adk's dev UI (the wheel's
	// google/adk/cli/browser) served at /dev-ui/ with the endpoints it
	// calls beyond the run API (devui.go). Off by default.
	DevUIDir string
}

// Stores are the services a server keeps its state in.
type Stores struct {
	Sessions  session.Service
	Artifacts artifact.Service
	Registry  registry.Registry
}

func (c *Config) check() error {
	var errs []error
	if c.Stores == (Stores{}) && c.DB != nil {
		c.Stores = Stores{Sessions: c.DB.Sessions(), Artifacts: c.DB.Artifacts(), Registry: c.DB.Registry()}
	}
	if c.Stores.Sessions == nil || c.Stores.Artifacts == nil || c.Stores.Registry == nil {
		errs = append(errs, errors.New("server: Config.DB, or Config.Stores with sessions, artifacts and registry, is required"))
	}
	if c.Runtime == nil {
		errs = append(errs, errors.New("server: Config.Runtime is required"))
	}
	if c.AdminToken == "" {
		errs = append(errs, errors.New("server: Config.AdminToken is required (the admin API is never left open)"))
	}
	return errors.Join(errs...)
}

func itoa64(n int64) string { return strconv.FormatInt(n, 10) }
