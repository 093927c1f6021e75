// Command benchserve measures the run API: 64 concurrent clients, each on a
// session of its own, post turns to /run over loopback HTTP against a bbolt
// store (or store/mem with -store memory), the reactive scripted model
// (appdef) and one Wasm tool call per turn
// (sdk/go/examples/weather), each client starting a new session every
// -turns-per-session turns. `make bench-serve` runs it; its last line is
// `run_turns_per_s=<turns/s> p99_ms=<p99 turn latency>`.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"mime/multipart"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/adkhost/adkhost/host/server"
	"github.com/adkhost/adkhost/internal/wasmbuild"
	"github.com/adkhost/adkhost/sandbox"
	"github.com/adkhost/adkhost/store/bolt"
	"github.com/adkhost/adkhost/store/mem"
)

func main() {
	clients := flag.Int("clients", 64, "concurrent clients")
	dur := flag.Duration("duration", 10*time.Second, "measured time")
	warm := flag.Duration("warmup", 2*time.Second, "warm-up time")
	perSession := flag.Int("turns-per-session", 10, "turns of a conversation before the client starts a new session (0: one session per client for the whole run)")
	cpuprofile := flag.String("cpuprofile", "", "write a CPU profile of the measured time to this file")
	store := flag.String("store", "bolt", "bolt (a bbolt file with fsync) or memory (store/mem, as adkhost serve --store memory)")
	flag.Parse()
	if err := run(*clients, *dur, *warm, *perSession, *cpuprofile, *store); err != nil {
		fmt.Fprintln(os.Stderr, "benchserve:", err)
		os.Exit(1)
	}
}

func run(clients int, dur, warm time.Duration, perSession int, cpuprofile, store string) error {
	ctx := context.Background()
	root, err := wasmbuild.ModuleRoot()
	if err != nil {
		return err
	}
	wasm, err := wasmbuild.Build(wasmbuild.SDKExample(root, "weather", "adkhost-server-guests"))
	if err != nil {
		return fmt.Errorf("building the weather guest: %w", err)
	}
	dir, err := os.MkdirTemp("", "adkhost-bench-serve")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	var stores server.Stores
	switch store {
	case "bolt":
		db, err := bolt.Open(filepath.Join(dir, "adkhost.db"), bolt.Config{})
		if err != nil {
			return err
		}
		defer db.Close()
		stores = server.Stores{Sessions: db.Sessions(), Artifacts: db.Artifacts(), Registry: db.Registry()}
	case "memory":
		m := mem.New()
		stores = server.Stores{Sessions: m.Sessions(), Artifacts: m.Artifacts(), Registry: m.Registry()}
	default:
		return fmt.Errorf("-store %q: want bolt or memory", store)
	}
	rt, err := sandbox.New(ctx, sandbox.Config{CacheDir: filepath.Join(os.TempDir(), "adkhost-server-test-cache")})
	if err != nil {
		return err
	}
	defer rt.Close(ctx)
	srv, err := server.New(ctx, server.Config{Stores: stores, Runtime: rt, AdminToken: "bench",
		Logger: slog.New(slog.NewJSONHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))})
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	sctx, stop := context.WithCancel(ctx)
	served := make(chan error, 1)
	go func() { served <- srv.Serve(sctx, ln, 10*time.Second) }()
	defer func() { stop(); <-served }()
	base := "http://" + ln.Addr().String()
	hc := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: clients, MaxConnsPerHost: clients}}

	do := func(method, path, ctype string, body []byte, token string) ([]byte, error) {
		req, _ := http.NewRequest(method, base+path, bytes.NewReader(body))
		req.Header.Set("Content-Type", ctype)
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := hc.Do(req)
		if err != nil {
			return nil, err
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		if err == nil && resp.StatusCode >= 300 {
			err = fmt.Errorf("%s %s: %d %s", method, path, resp.StatusCode, b)
		}
		return b, err
	}
	if _, err := do("PUT", "/admin/v1/modules/weather", "application/wasm", wasm, "bench"); err != nil {
		return err
	}
	bundle, ctype, err := benchApp()
	if err != nil {
		return err
	}
	if _, err := do("PUT", "/admin/v1/apps/bench", ctype, bundle, "bench"); err != nil {
		return err
	}

	var measuring, stopping atomic.Bool
	var mu sync.Mutex
	var lat []time.Duration
	var turns, errs atomic.Int64
	var firstErr atomic.Value
	var wg sync.WaitGroup
	for i := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var sess string
			newSession := func(k int) bool {
				sess = fmt.Sprintf("c%d-s%d", i, k)
				if _, err := do("POST", "/apps/bench/users/u/sessions", "application/json", []byte(`{"sessionId":"`+sess+`"}`), ""); err != nil {
					errs.Add(1)
					firstErr.CompareAndSwap(nil, err)
					return false
				}
				return true
			}
			if !newSession(0) {
				return
			}
			var mine []time.Duration
			for n := 0; !stopping.Load(); n++ {
				// Conversations of bounded length: the engine reads a
				// session's whole history on every turn, so the figure
				// would otherwise depend on how long the benchmark ran.
				if perSession > 0 && n > 0 && n%perSession == 0 && !newSession(n/perSession) {
					return
				}
				body, _ := json.Marshal(map[string]any{"appName": "bench", "userId": "u", "sessionId": sess,
					"newMessage": map[string]any{"role": "user", "parts": []any{map[string]any{"text": fmt.Sprintf("city %d", n)}}}})
				t0 := time.Now()
				_, err := do("POST", "/run", "application/json", body, "")
				d := time.Since(t0)
				if err != nil {
					errs.Add(1)
					firstErr.CompareAndSwap(nil, err)
					continue
				}
				if measuring.Load() {
					turns.Add(1)
					mine = append(mine, d)
				}
			}
			mu.Lock()
			lat = append(lat, mine...)
			mu.Unlock()
		}()
	}
	time.Sleep(warm)
	measuring.Store(true)
	if cpuprofile != "" {
		f, err := os.Create(cpuprofile)
		if err != nil {
			return err
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return err
		}
	}
	start := time.Now()
	time.Sleep(dur)
	measuring.Store(false)
	if cpuprofile != "" {
		pprof.StopCPUProfile()
	}
	elapsed := time.Since(start)
	stopping.Store(true)
	wg.Wait()
	if e := firstErr.Load(); e != nil {
		return fmt.Errorf("%d errors, first: %v", errs.Load(), e)
	}
	slices.Sort(lat)
	p := func(q float64) float64 {
		if len(lat) == 0 {
			return 0
		}
		return float64(lat[min(len(lat)-1, int(q*float64(len(lat))))].Microseconds()) / 1000
	}
	fmt.Printf("turns_per_session=%d clients=%d GOMAXPROCS=%d turns=%d elapsed=%.1fs p50_ms=%.1f p90_ms=%.1f errors=%d\n",
		perSession, clients, runtime.GOMAXPROCS(0), turns.Load(), elapsed.Seconds(), p(0.5), p(0.9), errs.Load())
	fmt.Printf("run_turns_per_s=%.0f p99_ms=%.1f\n", float64(turns.Load())/elapsed.Seconds(), p(0.99))
	return nil
}

// benchApp is the app's multipart bundle: agent bench_agent on the reactive
// scripted model, which calls get_weather with the user's text and answers
// from its response.
func benchApp() ([]byte, string, error) {
	files := map[string]string{
		"root_agent.yaml": "name: bench_agent\nmodel: scripted\ninstruction: Answer about the weather.\n" +
			"tools:\n  - module: weather\nadkhost:\n  modules:\n    weather:\n      grants: {state: true}\n      write_user_state: true\n",
		"scripted_model.yaml": "rules:\n  - when: {function_response: get_weather}\n    respond: {text: 'weather in {{response.city}}'}\n" +
			"  - respond: {function_calls: [{name: get_weather, args: {city: '{{text}}'}}]}\n",
	}
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	for name, content := range files {
		w, err := mw.CreateFormFile(name, name)
		if err != nil {
			return nil, "", err
		}
		if _, err := w.Write([]byte(content)); err != nil {
			return nil, "", err
		}
	}
	if err := mw.Close(); err != nil {
		return nil, "", err
	}
	return buf.Bytes(), mw.FormDataContentType(), nil
}
