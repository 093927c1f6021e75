package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/adkhost/adkhost/engine"
	"github.com/adkhost/adkhost/engine/memory"
	"github.com/adkhost/adkhost/host/appdef"
	"github.com/adkhost/adkhost/host/server"
	"github.com/adkhost/adkhost/sandbox"
	"github.com/adkhost/adkhost/store/bolt"
	"github.com/adkhost/adkhost/store/mem"
	"github.com/adkhost/adkhost/store/postgres"
)

// version is reported by GET /version; set with -ldflags "-X main.version=…".
var version = "dev"

// defaultDataDir is where the server keeps its store, cache and token.
func defaultDataDir() string {
	if d := os.Getenv("ADKHOST_DATA"); d != "" {
		return d
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "adkhost-data"
	}
	return filepath.Join(home, ".adkhost")
}

type serveFlags struct {
	addr, data, adminToken, adminTokenFile, runToken, mcpToken, otelEndpoint, logLevel, devUI, store string
	drain, guestIdle, mcpSessionTimeout, storeConnectTimeout                                         time.Duration
	guestMemory, gcPercent, memoryLimit                                                              int64
	mcpMaxSessions                                                                                   int
	strict, allowStdioMCP                                                                            bool
	limits                                                                                           server.Limits
}

func newServe() *cobra.Command {
	var f serveFlags
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Serve the admin API (/admin/v1) and google-adk's run API",
		Long: "Serves apps registered through the admin API from a bbolt store in --data\n" +
			"(DIR/adkhost.db, compiled modules in DIR/cache), or from PostgreSQL with\n" +
			"--store postgres://... (replicas share it; each keeps its compile cache in DIR). The admin token comes from\n" +
			"--admin-token, ADKHOST_ADMIN_TOKEN or --admin-token-file; without any, one is\n" +
			"generated at first start into DIR/admin-token (mode 0600).\n" +
			"SIGINT or SIGTERM drains the runs in flight, then closes the store.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return serve(cmd, f) },
	}
	fl := cmd.Flags()
	fl.StringVar(&f.addr, "addr", ":8000", "listen address")
	fl.StringVar(&f.data, "data", defaultDataDir(), "data directory (store, compile cache, generated token); env ADKHOST_DATA")
	fl.BoolVar(&f.allowStdioMCP, "allow-stdio-mcp", appdef.EnvEnabled(os.Getenv(appdef.AllowStdioMCPEnv)), "let app definitions declare stdio MCP servers (MCPToolset with stdio_server_params), whose command runs as a local process outside the sandbox; only for a server that registers definitions it trusts; env "+appdef.AllowStdioMCPEnv)
	fl.BoolVar(&f.strict, "strict", false, "refuse an app whose model has no backend on this server (by default it registers with a warning and its model calls fail, as google-adk loads such a config)")
	fl.StringVar(&f.store, "store", cmp.Or(os.Getenv("ADKHOST_STORE"), "bolt"), "where sessions, apps and modules live: bolt (DIR/adkhost.db), memory (ephemeral, for development and benchmarks) or postgres://USER:PASS@HOST:PORT/DB (shared by replicas and with google-adk's DatabaseSessionService); env ADKHOST_STORE")
	fl.DurationVar(&f.storeConnectTimeout, "store-connect-timeout", time.Minute, "how long a postgres:// store is retried at start, with backoff, before serve gives up")
	fl.StringVar(&f.adminToken, "admin-token", "", "admin API bearer token (default: env ADKHOST_ADMIN_TOKEN, then --admin-token-file)")
	fl.StringVar(&f.adminTokenFile, "admin-token-file", "", "file holding the admin token (default DIR/admin-token, generated if missing)")
	fl.StringVar(&f.runToken, "run-token", os.Getenv("ADKHOST_RUN_TOKEN"), "bearer token required by the run API (default: open; env ADKHOST_RUN_TOKEN)")
	fl.StringVar(&f.mcpToken, "mcp-token", os.Getenv("ADKHOST_MCP_TOKEN"), "bearer token of the MCP endpoint /mcp/{app} (default: --run-token if set, else generated into DIR/"+MCPTokenFileName+"; env ADKHOST_MCP_TOKEN)")
	fl.DurationVar(&f.mcpSessionTimeout, "mcp-session-timeout", server.DefaultMCPSessionTimeout, "forget MCP sessions idle this long (their adkhost sessions stay in the store)")
	fl.IntVar(&f.mcpMaxSessions, "mcp-max-sessions", server.DefaultMCPMaxSessions, "MCP sessions open at once, all apps together; more are refused with 503")
	fl.StringVar(&f.otelEndpoint, "otel-endpoint", "", "OTLP/HTTP endpoint for spans, e.g. http://localhost:4318 (default: OTEL_EXPORTER_OTLP_ENDPOINT; off if unset)")
	fl.StringVar(&f.devUI, "dev-ui", "", "serve google-adk's dev UI from DIR at /dev-ui/ (DIR: google/adk/cli/browser of an installed google-adk wheel; default off)")
	fl.StringVar(&f.logLevel, "log-level", "info", "debug, info, warn or error")
	fl.DurationVar(&f.drain, "drain-timeout", 30*time.Second, "how long shutdown waits for runs in flight")
	mem := machineMemory() // read once for both defaults
	fl.Int64Var(&f.guestMemory, "guest-memory", mem/2, "bytes of guest memory all Wasm instances may reserve together (each reserves its memory_pages); calls past it close idle instances, wait up to 5s, then fail (default: half the machine's or cgroup's memory)")
	fl.Int64Var(&f.gcPercent, "gc-percent", defaultGCPercent, "the garbage collector's GOGC for this process: how far, in percent of what is live, the heap grows before a collection; higher trades memory for CPU (Go's default is 100; env GOGC is used if this flag is not given)")
	fl.Int64Var(&f.memoryLimit, "memory-limit", mem*3/4, "soft limit in bytes on this process's Go memory, guest memory included (GOMEMLIMIT): near it the collector runs as often as it must whatever --gc-percent says; 0: none (default: three quarters of the machine's or cgroup's memory; env GOMEMLIMIT is used if this flag is not given)")
	fl.DurationVar(&f.guestIdle, "guest-idle-timeout", sandbox.DefaultIdleTimeout, "close Wasm instances idle this long, giving their memory back")
	fl.Int64Var(&f.limits.ModuleBytes, "max-module-bytes", server.DefaultModuleBytes, "largest module upload")
	fl.Int64Var(&f.limits.DefinitionBytes, "max-definition-bytes", server.DefaultDefinitionBytes, "largest app definition")
	fl.Int64Var(&f.limits.RequestBytes, "max-request-bytes", server.DefaultRequestBytes, "largest run API request body")
	fl.Int64Var(&f.limits.ListBytes, "max-list-bytes", server.DefaultListBytes, "largest session listing (GET /apps/{app}/users/{user}/sessions), as the JSON of its sessions' states, each merged with the app's and the user's state; a larger one is refused with 413")
	fl.DurationVar(&f.limits.BodyTimeout, "body-timeout", server.DefaultBodyTimeout, "longest a client may take to send a request body (a module upload included)")
	fl.DurationVar(&f.limits.WriteTimeout, "write-timeout", server.DefaultWriteTimeout, "longest one write of an answer (an SSE event) may wait for the client to read it; a run may take longer")
	fl.DurationVar(&f.limits.IdleTimeout, "idle-timeout", server.DefaultIdleTimeout, "longest a kept-alive connection stays open between requests")
	fl.IntVar(&f.limits.MaxRuns, "max-runs", server.DefaultMaxRuns, "runs in flight at once (/run and /run_sse, an SSE run for its whole stream, an MCP tool call), all apps together; more are refused with 503 and Retry-After before their body is read")
	addRunLimitFlags(cmd, &f.limits)
	return cmd
}

// addRunLimitFlags registers the bounds of each run and of state, which
// serve and run share: a run of `adkhost run` on a store serve uses is
// bounded as serve bounds it.
func addRunLimitFlags(cmd *cobra.Command, l *server.Limits) {
	fl := cmd.Flags()
	fl.IntVar(&l.MaxLLMCalls, "max-llm-calls", defaultMaxLLMCalls(), "model calls of one run (google-adk's --max_llm_calls; an agent tool's run counts its own); 0 or less: no limit; env ADK_MAX_LLM_CALLS, as google-adk")
	fl.IntVar(&l.MaxEvents, "max-events", engine.DefaultMaxEvents, "events one run stores, those of its agent tools' runs included (an agent looping without calling the model stops here); 0 or less: no limit")
	fl.IntVar(&l.MaxFunctionCalls, "max-function-calls", engine.DefaultMaxFunctionCalls, "function calls of one model response; a response asking for more fails its agent's step before any runs; 0 or less: no limit")
	fl.Int64Var(&l.MaxRunBytes, "max-run-bytes", engine.DefaultMaxBytes, "bytes one run produces, those of its agent tools' runs included: the events it stores, the artifacts it saves and its tools' results as they arrive (a response's results are held together); past it the run ends with an error event; 0 or less: no limit")
	fl.Int64Var(&l.StateBytes, "max-state-bytes", server.DefaultStateBytes, "largest JSON of each state scope: a session's own state, a user's user: state, an app's app: state; a write (run, PATCH, session creation) that would pass it is refused with 413")
}

// resolveRunLimits maps the flags' "0 or less: no limit" (google-adk's
// --max_llm_calls) to server.Limits' negative value.
func resolveRunLimits(l *server.Limits) {
	l.MaxLLMCalls, l.MaxEvents, l.MaxFunctionCalls = noLimit(l.MaxLLMCalls), noLimit(l.MaxEvents), noLimit(l.MaxFunctionCalls)
	if l.MaxRunBytes <= 0 {
		l.MaxRunBytes = -1
	}
}

// defaultMaxLLMCalls is --max-llm-calls' default: ADK_MAX_LLM_CALLS when
// it is an integer, as google-adk's RunConfig reads it, else google-adk's
// 500.
func defaultMaxLLMCalls() int {
	if n, err := strconv.Atoi(os.Getenv("ADK_MAX_LLM_CALLS")); err == nil {
		return n
	}
	return engine.DefaultMaxLLMCalls
}

// noLimit maps a flag's "0 or less: no limit" (google-adk's
// --max_llm_calls) to server.Limits' negative value.
func noLimit(n int) int {
	if n <= 0 {
		return -1
	}
	return n
}

func serve(cmd *cobra.Command, f serveFlags) error {
	ctx := cmd.Context()
	tuneGC(f.gcPercent, f.memoryLimit, cmd.Flags().Changed("gc-percent"), cmd.Flags().Changed("memory-limit"))
	resolveRunLimits(&f.limits)
	log, err := newLogger(cmd, f.logLevel)
	if err != nil {
		return err
	}
	// Listen first: a busy port or a bad address fails before anything is
	// created on disk (a data directory, a token).
	ln, err := net.Listen("tcp", f.addr)
	if err != nil {
		return fmt.Errorf("listening on %s: %w (is another server running? see --addr)", f.addr, err)
	}
	defer ln.Close()
	if err := os.MkdirAll(f.data, 0o700); err != nil {
		return fmt.Errorf("creating the data directory: %w", err)
	}
	if f.devUI != "" {
		if err := server.CheckDevUIDir(f.devUI); err != nil {
			return fmt.Errorf("--dev-ui: %w", err)
		}
		if f.runToken != "" {
			// The UI sends no Authorization header: its API calls would all be 401.
			log.Warn("--dev-ui with a run token: the dev UI cannot authenticate to the run API")
		}
	}
	token, err := adminToken(cmd, f)
	if err != nil {
		return err
	}
	mcpToken, err := mcpToken(cmd, f)
	if err != nil {
		return err
	}
	st, err := openStore(ctx, f.store, f.data, f.storeConnectTimeout, log)
	if err != nil {
		return err
	}
	defer st.close()
	rt, err := sandbox.New(ctx, sandbox.Config{CacheDir: filepath.Join(f.data, "cache"), Logger: log,
		MemoryBudget: f.guestMemory, IdleTimeout: f.guestIdle})
	if err != nil {
		return fmt.Errorf("starting the Wasm runtime: %w", err)
	}
	// Closed after the server has drained, with a fresh context: ctx is
	// already canceled by then.
	defer rt.Close(context.WithoutCancel(ctx))
	tp, err := server.NewTracerProvider(ctx, f.otelEndpoint, version)
	if err != nil {
		return err
	}
	// Memories live in the store, so they survive restarts.
	cfg := server.Config{Stores: st.stores, Runtime: rt, AdminToken: token, RunToken: f.runToken, MCPToken: mcpToken, MCPSessionTimeout: f.mcpSessionTimeout, MCPMaxSessions: f.mcpMaxSessions, Memory: st.memory, StrictModels: f.strict,
		Models: appdef.NewModelRegistryFromEnv(os.Getenv), Limits: f.limits, Version: version, Logger: log, DevUIDir: f.devUI}
	if tp != nil {
		cfg.Tracer = tp
		defer tp.Shutdown(context.WithoutCancel(ctx))
	}
	srv, err := server.New(ctx, cfg)
	if err != nil {
		return err
	}
	if st.watch != nil {
		// Apps registered or deleted through another replica serve here
		// within a notification's round trip; a reconnect re-reads them all.
		watchCtx, stopWatch := context.WithCancel(ctx)
		defer stopWatch()
		go st.watch(watchCtx, func(name string) {
			if err := srv.SyncApp(watchCtx, name); err != nil {
				log.Error("syncing an app from the registry", "app", name, "err", err)
			}
		}, func() {
			if err := srv.Resync(watchCtx); err != nil {
				log.Error("resyncing apps from the registry", "err", err)
			}
		})
	}
	log.Info("serving", "addr", ln.Addr().String(), "data", f.data, "tracing", tp != nil)
	fmt.Fprintf(cmd.ErrOrStderr(), "adkhost serving on %s\n", ln.Addr())
	return srv.Serve(ctx, ln, f.drain)
}

// openedStore is the store serve runs on.
type openedStore struct {
	stores server.Stores
	memory memory.Service
	close  func() error
	// watch, for a store replicas share, reports registry changes any
	// replica commits (store/postgres's Registry.Watch); nil for bolt.
	watch func(ctx context.Context, app func(name string), resync func())
}

// openStore opens the store --store names: "bolt" (the default), DIR's
// adkhost.db; "memory", an ephemeral store for development and
// benchmarks: bbolt in a temporary file without fsync, removed at exit,
// so nothing survives the process; a postgres:// URL, a PostgreSQL
// database shared by replicas (and by google-adk apps), reached within
// --store-connect-timeout.
func openStore(ctx context.Context, kind, dataDir string, connectTimeout time.Duration, log *slog.Logger) (*openedStore, error) {
	if strings.HasPrefix(kind, "postgres://") || strings.HasPrefix(kind, "postgresql://") {
		db, err := postgres.Open(ctx, kind, postgres.Config{ConnectTimeout: connectTimeout, Logger: log})
		if err != nil {
			return nil, fmt.Errorf("--store: %w", err)
		}
		return &openedStore{
			stores: server.Stores{Sessions: db.Sessions(), Artifacts: db.Artifacts(), Registry: db.Registry()},
			memory: db.Memory(), close: db.Close, watch: db.Registry().Watch,
		}, nil
	}
	var db *bolt.DB
	switch kind {
	case "", "bolt":
		var err error
		db, err = bolt.Open(filepath.Join(dataDir, "adkhost.db"), bolt.Config{})
		if err != nil {
			return nil, fmt.Errorf("opening the store: %w", err)
		}
	case "memory":
		m := mem.New()
		log.Warn("--store memory: sessions, apps and modules last only as long as this process")
		return &openedStore{
			stores: server.Stores{Sessions: m.Sessions(), Artifacts: m.Artifacts(), Registry: m.Registry()},
			memory: m.Memory(), close: func() error { return nil },
		}, nil
	default:
		return nil, fmt.Errorf("--store %q: want bolt (the default, in --data), memory (ephemeral) or a postgres:// URL", postgres.Redact(kind))
	}
	return &openedStore{
		stores: server.Stores{Sessions: db.Sessions(), Artifacts: db.Artifacts(), Registry: db.Registry()},
		memory: db.Memory(), close: db.Close,
	}, nil
}

// adminToken resolves the admin token: flag, environment, token file; or a
// new one written to DIR/admin-token.
func adminToken(cmd *cobra.Command, f serveFlags) (string, error) {
	if f.adminToken != "" {
		return f.adminToken, nil
	}
	if t := strings.TrimSpace(os.Getenv("ADKHOST_ADMIN_TOKEN")); t != "" {
		return t, nil
	}
	if f.adminTokenFile != "" {
		return server.ReadToken(f.adminTokenFile)
	}
	path := filepath.Join(f.data, server.TokenFileName)
	token, created, err := server.LoadOrCreateToken(path)
	if err != nil {
		return "", err
	}
	if created {
		fmt.Fprintf(cmd.ErrOrStderr(), "adkhost: generated an admin token in %s\n", path)
	} else {
		fmt.Fprintf(cmd.ErrOrStderr(), "adkhost: admin token in %s\n", path)
	}
	return token, nil
}

// MCPTokenFileName is the file in the data directory where serve keeps
// the MCP token it generated.
const MCPTokenFileName = "mcp-token"

// mcpToken resolves the MCP endpoint's token: flag or environment, the run
// token, or the one in DIR/mcp-token (generated there, mode 0600, if
// missing). The endpoint is never open.
func mcpToken(cmd *cobra.Command, f serveFlags) (string, error) {
	if t := strings.TrimSpace(f.mcpToken); t != "" {
		return t, nil
	}
	if f.runToken != "" {
		return f.runToken, nil
	}
	path := filepath.Join(f.data, MCPTokenFileName)
	token, created, err := server.LoadOrCreateToken(path)
	if err != nil {
		return "", fmt.Errorf("the MCP token: %w", err)
	}
	verb := "MCP token in"
	if created {
		verb = "generated an MCP token in"
	}
	fmt.Fprintf(cmd.ErrOrStderr(), "adkhost: %s %s\n", verb, path)
	return token, nil
}

// newLogger returns a JSON logger on stderr at level.
func newLogger(cmd *cobra.Command, level string) (*slog.Logger, error) {
	var l slog.Level
	if err := l.UnmarshalText([]byte(level)); err != nil {
		return nil, errors.New("--log-level: want debug, info, warn or error")
	}
	return slog.New(slog.NewJSONHandler(cmd.ErrOrStderr(), &slog.HandlerOptions{Level: l})), nil
}
