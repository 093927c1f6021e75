package main

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/spf13/cobra"
	"google.golang.org/genai"

	"github.com/adkhost/adkhost/engine"
	"github.com/adkhost/adkhost/engine/artifact"
	"github.com/adkhost/adkhost/engine/memory"
	"github.com/adkhost/adkhost/engine/session"
	"github.com/adkhost/adkhost/host/appdef"
	"github.com/adkhost/adkhost/host/server"
	"github.com/adkhost/adkhost/sandbox"
	"github.com/adkhost/adkhost/store/registry"
)

type runFlags struct {
	message, data, store, user, session, cacheDir, modules string
	asJSON, allowStdioMCP                                  bool
	storeConnectTimeout                                    time.Duration
	limits                                                 server.Limits
}

func newRun() *cobra.Command {
	var f runFlags
	cmd := &cobra.Command{
		Use:   "run APP.yaml|APP_DIR",
		Short: "Talk to an app locally, as `adk run` does",
		Long: "Loads the app definition in this process and reads messages from stdin,\n" +
			"one a line, printing the agent's replies; -m sends one message and exits.\n" +
			"Sessions live in memory unless --data names a directory (a bbolt store,\n" +
			"whose registered modules the definition may then refer to by name) or\n" +
			"--store names a PostgreSQL database (serve's, or a google-adk app's:\n" +
			"its sessions continue here with --session).\n" +
			"Module references ending in .wasm are files relative to the definition;\n" +
			"with --modules DIR, a reference NAME is the file DIR/NAME.wasm.",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error { return runLocal(cmd, args[0], f) },
	}
	fl := cmd.Flags()
	fl.StringVarP(&f.message, "message", "m", "", "send this one message and exit")
	fl.StringVar(&f.data, "data", "", "bbolt data directory (default: sessions in memory)")
	fl.StringVar(&f.store, "store", "", "postgres://USER:PASS@HOST:PORT/DB to keep sessions, artifacts and memories in PostgreSQL (google-adk's schema; modules resolve from its registry), or memory; default: bbolt in --data when given, else memory")
	fl.DurationVar(&f.storeConnectTimeout, "store-connect-timeout", 10*time.Second, "how long a postgres:// store is retried, with backoff, before run gives up")
	fl.StringVar(&f.user, "user", "user", "user id")
	fl.StringVar(&f.session, "session", "", "session id (default: a new one; with --data or --store an existing one continues)")
	fl.StringVar(&f.cacheDir, "cache-dir", defaultCacheDir(), "compilation cache directory (empty: no cache)")
	fl.StringVar(&f.modules, "modules", "", "directory of NAME.wasm files that module references by name resolve to")
	fl.BoolVar(&f.asJSON, "json", false, "print every event as a JSON line")
	addRunLimitFlags(cmd, &f.limits)
	fl.BoolVar(&f.allowStdioMCP, "allow-stdio-mcp", appdef.EnvEnabled(os.Getenv(appdef.AllowStdioMCPEnv)), "let the definition declare stdio MCP servers, run as local processes outside the sandbox; env "+appdef.AllowStdioMCPEnv)
	return cmd
}

// localModules resolves module references for a local run: "*.wasm" files
// relative to the definition, names to NAME.wasm in modulesDir when given,
// else the bbolt registry when there is one.
type localModules struct {
	dir, modulesDir string
	reg             registry.Registry
}

func (m localModules) ResolveModule(ctx context.Context, ref string) ([]byte, string, error) {
	if strings.HasSuffix(ref, ".wasm") {
		p := ref
		if !filepath.IsAbs(p) {
			p = filepath.Join(m.dir, ref)
		}
		wasm, err := os.ReadFile(p)
		if err != nil {
			return nil, "", fmt.Errorf("module %q: %w", ref, err)
		}
		sum := sha256.Sum256(wasm)
		return wasm, "sha256:" + hex.EncodeToString(sum[:]), nil
	}
	if m.modulesDir != "" {
		p := filepath.Join(m.modulesDir, filepath.Base(ref)+".wasm")
		if _, err := os.Stat(p); err == nil || m.reg == nil {
			return localModules{}.ResolveModule(ctx, p)
		}
	}
	if m.reg == nil {
		return nil, "", fmt.Errorf("module %q: only .wasm files resolve without --data or --store (a store with registered modules) or --modules DIR", ref)
	}
	return server.RegistryModules{Registry: m.reg}.ResolveModule(ctx, ref)
}

func runLocal(cmd *cobra.Command, path string, f runFlags) error {
	ctx := cmd.Context()
	files, err := readDefinition(path)
	if err != nil {
		return err
	}
	dir := path
	if st, err := os.Stat(path); err == nil && !st.IsDir() {
		dir = filepath.Dir(path)
	}
	name := strings.TrimSuffix(filepath.Base(path), filepath.Ext(path))
	var sessions session.Service = session.NewInMemoryService()
	var artifacts artifact.Service = artifact.NewInMemoryService()
	var mems memory.Service = memory.NewInMemoryService()
	var reg registry.Registry
	kind := f.store
	if kind == "" && f.data != "" {
		kind = "bolt"
	}
	switch {
	case kind == "" || kind == "memory":
	case kind == "bolt" && f.data == "":
		return errors.New("--store bolt: name the store's directory with --data DIR")
	default:
		log := slog.New(slog.NewTextHandler(cmd.ErrOrStderr(), &slog.HandlerOptions{Level: slog.LevelWarn}))
		st, err := openStore(ctx, kind, f.data, f.storeConnectTimeout, log)
		if err != nil {
			return err
		}
		defer st.close()
		sessions, artifacts, mems, reg = st.stores.Sessions, st.stores.Artifacts, st.memory, st.stores.Registry
	}
	// The bounds serve puts on every store: a store serve or google-adk
	// may read too must hold nothing they refuse (values nested past what
	// they read back, state scopes past --max-state-bytes), and a session
	// in memory grows in this process.
	sessions = session.WithDepthLimit(session.WithStateLimit(sessions, f.limits.StateBytes), session.DefaultMaxValueDepth)
	resolveRunLimits(&f.limits)
	rt, err := sandbox.New(ctx, sandbox.Config{CacheDir: f.cacheDir})
	if err != nil {
		return err
	}
	defer rt.Close(context.WithoutCancel(ctx))
	app, err := appdef.Load(ctx, appdef.Source{Name: name, Files: files}, appdef.Env{
		Runtime: rt, Modules: localModules{dir: dir, modulesDir: f.modules, reg: reg}, Models: appdef.NewModelRegistryFromEnv(os.Getenv),
		AllowStdioMCP: f.allowStdioMCP,
	})
	if err != nil {
		return fmt.Errorf("loading %s: %w", path, err)
	}
	defer app.Close(context.WithoutCancel(ctx))
	runner, err := engine.NewRunner(engine.RunnerConfig{AppName: name, Agent: app.Root, Sessions: sessions, Artifacts: artifacts, Plugins: app.Plugins,
		Memory: mems, AutoCreateSession: true, Resumable: app.Resumable, Compaction: app.Compaction})
	if err != nil {
		return err
	}
	sid := f.session
	if sid == "" {
		sid = uuid.NewString()
	}
	out := cmd.OutOrStdout()
	turn := func(text string) error {
		msg := genai.NewContentFromText(text, genai.RoleUser)
		for ev, err := range runner.Run(ctx, f.user, sid, msg, f.limits.RunConfig()) {
			if err != nil {
				return err
			}
			printEvent(out, ev, f.asJSON)
		}
		return nil
	}
	if f.message != "" {
		return turn(f.message)
	}
	interactive := isTerminal(cmd.InOrStdin())
	sc := bufio.NewScanner(cmd.InOrStdin())
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for {
		if interactive {
			fmt.Fprint(out, "[user]: ")
		}
		if !sc.Scan() {
			return sc.Err()
		}
		text := strings.TrimSpace(sc.Text())
		if text == "" {
			continue
		}
		if text == "exit" || text == "quit" {
			return nil
		}
		if err := turn(text); err != nil {
			if errors.Is(err, context.Canceled) {
				return nil
			}
			// A failed turn is reported and the conversation goes on, as
			// adk run keeps its prompt.
			fmt.Fprintln(cmd.ErrOrStderr(), "adkhost: turn failed:", err)
		}
	}
}

// printEvent prints an event as `adk run` does: "[author]: text", tool
// calls and responses abbreviated; or the event's JSON.
func printEvent(w io.Writer, ev *session.Event, asJSON bool) {
	if asJSON {
		b, _ := json.Marshal(ev)
		fmt.Fprintln(w, string(b))
		return
	}
	if ev.Content == nil {
		return
	}
	for _, p := range ev.Content.Parts {
		switch {
		case p.Text != "" && !p.Thought:
			fmt.Fprintf(w, "[%s]: %s\n", ev.Author, p.Text)
		case p.FunctionCall != nil:
			args, _ := json.Marshal(p.FunctionCall.Args)
			fmt.Fprintf(w, "[%s]: calls %s(%s)\n", ev.Author, p.FunctionCall.Name, args)
		case p.FunctionResponse != nil:
			resp, _ := json.Marshal(p.FunctionResponse.Response)
			fmt.Fprintf(w, "[%s]: %s returned %s\n", ev.Author, p.FunctionResponse.Name, resp)
		}
	}
}

// isTerminal reports whether r is a character device (a prompt is printed
// then, and not when stdin is a pipe).
func isTerminal(r io.Reader) bool {
	f, ok := r.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}
