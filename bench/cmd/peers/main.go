// Command peers measures the same app served by adkhost and by the servers
// users would run instead: google-adk 2.13's `adk api_server` (in-memory
// sessions, and its default SQLite file), adk-go v2's REST server
// (bench/cmd/adkgoserver), and `adkhost serve` with the tool as a Go Wasm
// module (and as a Python module when one is given). One load generator
// drives them all over loopback: -clients concurrent clients, each posting
// turns to /run and starting a new session every -turns-per-session turns.
// Servers run one after another, -runs times in alternation, each as a
// process of its own whose CPU time (the whole process tree, from /proc) is
// read around the measured window. `make bench-peers` runs it; the last
// line is `serve_vs_adk_python=… serve_vs_adkgo=…
// serve_python_tool_vs_go_tool=…`, medians of the runs.
package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"mime/multipart"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

func main() {
	o := options{}
	flag.IntVar(&o.clients, "clients", 64, "concurrent clients")
	flag.DurationVar(&o.duration, "duration", 15*time.Second, "measured time per server and run")
	flag.DurationVar(&o.warmup, "warmup", 3*time.Second, "warm-up before each measured window")
	flag.IntVar(&o.runs, "runs", 3, "runs, alternating the servers")
	flag.IntVar(&o.perSession, "turns-per-session", 10, "turns before a client starts a new session")
	flag.StringVar(&o.adkhost, "adkhost", "", "the adkhost binary (required)")
	flag.StringVar(&o.adkgo, "adkgo", "", "the adkgoserver binary (required)")
	flag.StringVar(&o.adk, "adk", "", "google-adk's adk command (required)")
	flag.StringVar(&o.peersDir, "peers", "", "bench/peers, holding the apps (required)")
	flag.StringVar(&o.goModule, "go-module", "", "the Go weather tool module (.wasm, required)")
	flag.StringVar(&o.pyModule, "python-module", "", "the same tool as a Python module (.wasm; optional)")
	flag.StringVar(&o.only, "only", "", "comma-separated server names to run (default: all)")
	floorAddr := flag.String("serve-floor", "", "internal: serve the floor server on this address")
	flag.Parse()
	if *floorAddr != "" {
		if err := serveFloor(*floorAddr); err != nil {
			fmt.Fprintln(os.Stderr, "peers:", err)
			os.Exit(1)
		}
		return
	}
	if o.adkhost == "" || o.adkgo == "" || o.adk == "" || o.peersDir == "" || o.goModule == "" {
		fmt.Fprintln(os.Stderr, "peers: -adkhost, -adkgo, -adk, -peers and -go-module are required (make bench-peers sets them)")
		os.Exit(2)
	}
	// The servers run in directories of their own: make the paths absolute.
	for _, p := range []*string{&o.adkhost, &o.adkgo, &o.adk, &o.peersDir, &o.goModule, &o.pyModule} {
		if *p != "" {
			abs, err := filepath.Abs(*p)
			if err != nil {
				fmt.Fprintln(os.Stderr, "peers:", err)
				os.Exit(2)
			}
			*p = abs
		}
	}
	if err := run(o); err != nil {
		fmt.Fprintln(os.Stderr, "peers:", err)
		os.Exit(1)
	}
}

type options struct {
	clients, runs, perSession                         int
	duration, warmup                                  time.Duration
	adkhost, adkgo, adk, peersDir, goModule, pyModule string
	only                                              string
}

// server is one way of serving the app.
type server struct {
	name  string
	start func(ctx context.Context, port int, dir string) (*exec.Cmd, error)
}

// result is one measured window.
type result struct {
	turns, errors int
	elapsed       time.Duration
	cpu, client   time.Duration // the server's CPU time, the load generator's
	p50, p99      time.Duration
}

func (r result) perSecond() float64 { return float64(r.turns) / r.elapsed.Seconds() }
func (r result) cpuPerTurn() time.Duration {
	if r.turns == 0 {
		return 0
	}
	return r.cpu / time.Duration(r.turns)
}

func run(o options) error {
	servers := []server{
		{"adk_python_memory", o.adkPython("memory://")},
		{"adk_python_sqlite", o.adkPython("")},
		{"adkgo", o.adkGo},
		{"adkhost_go_tool", o.adkhostServe(o.goModule)},
		{"adkhost_go_tool_memory_store", o.adkhostServe(o.goModule, "--store", "memory")},
		{"floor", floor},
	}
	if o.pyModule != "" {
		servers = append(servers, server{"adkhost_python_tool", o.adkhostServe(o.pyModule)})
	}
	if o.only != "" {
		keep := strings.Split(o.only, ",")
		servers = slices.DeleteFunc(servers, func(s server) bool { return !slices.Contains(keep, s.name) })
	}
	fmt.Printf("machine: %d CPUs, GOMAXPROCS of the servers unset; clients=%d warmup=%s duration=%s runs=%d turns_per_session=%d\n",
		numCPU(), o.clients, o.warmup, o.duration, o.runs, o.perSession)
	results := map[string][]result{}
	for i := range o.runs {
		for _, s := range servers {
			r, err := o.measure(s)
			if err != nil {
				return fmt.Errorf("run %d, %s: %w", i+1, s.name, err)
			}
			results[s.name] = append(results[s.name], r)
			fmt.Printf("run=%d server=%s turns_per_s=%.0f cpu_ms_per_turn=%.3f loadgen_cpu_ms_per_turn=%.3f p50_ms=%.1f p99_ms=%.1f errors=%d\n",
				i+1, s.name, r.perSecond(), ms(r.cpuPerTurn()), ms(r.client)/float64(max(r.turns, 1)), ms(r.p50), ms(r.p99), r.errors)
		}
	}
	med := func(name string) float64 {
		var v []float64
		for _, r := range results[name] {
			v = append(v, r.perSecond())
		}
		if len(v) == 0 {
			return 0
		}
		slices.Sort(v)
		return v[len(v)/2]
	}
	ratio := func(a, b string) string {
		if med(a) == 0 || med(b) == 0 {
			return "n/a"
		}
		return fmt.Sprintf("%.2f", med(a)/med(b))
	}
	for _, s := range servers {
		var cpu []float64
		for _, r := range results[s.name] {
			cpu = append(cpu, ms(r.cpuPerTurn()))
		}
		slices.Sort(cpu)
		fmt.Printf("median server=%s turns_per_s=%.0f cpu_ms_per_turn=%.2f\n", s.name, med(s.name), cpu[len(cpu)/2])
	}
	fmt.Printf("information: adkgo_vs_floor=%s adkhost_vs_floor=%s (the floor server answers with canned bytes: no Go server can pass it here)\n",
		ratio("adkgo", "floor"), ratio("adkhost_go_tool", "floor"))
	fmt.Printf("information: memory_store_vs_adkgo=%s memory_store_vs_adk_python=%s (adkhost with --store memory; adk-go and google-adk keep sessions in memory too)\n",
		ratio("adkhost_go_tool_memory_store", "adkgo"), ratio("adkhost_go_tool_memory_store", "adk_python_memory"))
	fmt.Printf("serve_vs_adk_python=%s serve_vs_adkgo=%s serve_python_tool_vs_go_tool=%s\n",
		ratio("adkhost_go_tool", "adk_python_memory"), ratio("adkhost_go_tool", "adkgo"),
		ratio("adkhost_python_tool", "adkhost_go_tool"))
	return nil
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

func numCPU() int {
	b, _ := os.ReadFile("/proc/cpuinfo")
	return strings.Count(string(b), "processor\t:")
}

// floor is the least any Go server can spend on a turn here: net/http
// answering session creation and /run with canned bytes the size of the
// real answers, and no agent behind them. It bounds every ratio to a Go
// server: with the load generator's own CPU on the same two cores, no
// server can be faster than this one.
func floor(ctx context.Context, port int, _ string) (*exec.Cmd, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	return exec.CommandContext(ctx, self, "-serve-floor", "127.0.0.1:"+strconv.Itoa(port)), nil
}

func serveFloor(addr string) error {
	session := []byte(`{"id":"s","appName":"weather_assistant","userId":"u","state":{},"events":[],"lastUpdateTime":1}`)
	// Three events, as the real servers answer a turn (about 1.5 KB).
	event := `{"id":"00000000-0000-0000-0000-000000000000","invocationId":"e-00000000-0000-0000-0000-000000000000","author":"weather_assistant","actions":{"stateDelta":{},"artifactDelta":{}},"content":{"role":"model","parts":[{"text":"It is sunny in Paris."}]},"timestamp":1795524613.5}`
	run := []byte("[" + event + "," + event + "," + event + "]")
	mux := http.NewServeMux()
	mux.HandleFunc("GET /list-apps", func(w http.ResponseWriter, _ *http.Request) { w.Write([]byte(`["weather_assistant"]`)) })
	mux.HandleFunc("POST /apps/{app}/users/{user}/sessions/{id}", func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		w.Write(session)
	})
	mux.HandleFunc("POST /run", func(w http.ResponseWriter, r *http.Request) {
		var req map[string]any
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Write(run)
	})
	fmt.Printf("listening on %s\n", addr)
	return http.ListenAndServe(addr, mux)
}

// adkPython serves the app with `adk api_server` (uvicorn, no reload) with
// the given session service URI ("" for google-adk's default, a SQLite
// file in the agent's folder).
func (o options) adkPython(uri string) func(context.Context, int, string) (*exec.Cmd, error) {
	return func(ctx context.Context, port int, dir string) (*exec.Cmd, error) {
		agents := filepath.Join(dir, "agents")
		if err := os.CopyFS(agents, os.DirFS(filepath.Join(o.peersDir, "adkpy"))); err != nil {
			return nil, err
		}
		args := []string{"api_server", "--port", strconv.Itoa(port), "--no-reload", "--log_level", "warning"}
		if uri != "" {
			args = append(args, "--session_service_uri", uri)
		}
		return exec.CommandContext(ctx, o.adk, append(args, agents)...), nil
	}
}

func (o options) adkGo(ctx context.Context, port int, _ string) (*exec.Cmd, error) {
	return exec.CommandContext(ctx, o.adkgo, "-addr", "127.0.0.1:"+strconv.Itoa(port)), nil
}

// adkhostServe serves the app with `adkhost serve` on a new bbolt store,
// with module as the weather tool, uploaded and registered over the admin
// API as a user would.
func (o options) adkhostServe(module string, extra ...string) func(context.Context, int, string) (*exec.Cmd, error) {
	return func(ctx context.Context, port int, dir string) (*exec.Cmd, error) {
		const token = "bench-admin-token"
		args := append([]string{"serve", "--addr", "127.0.0.1:" + strconv.Itoa(port),
			"--data", filepath.Join(dir, "data"), "--admin-token", token, "--log-level", "warn"}, extra...)
		cmd := exec.CommandContext(ctx, o.adkhost, args...)
		cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
		cmd.WaitDelay = 10 * time.Second
		// Registration happens once the server answers: see measure.
		cmd.Env = append(os.Environ(), "ADKHOST_BENCH_SETUP="+module)
		return cmd, nil
	}
}

// measure starts s, waits until it answers, warms it up, measures one
// window and stops it.
func (o options) measure(s server) (result, error) {
	dir, err := os.MkdirTemp("", "adkhost-peers-"+s.name)
	if err != nil {
		return result{}, err
	}
	defer os.RemoveAll(dir)
	port, err := freePort()
	if err != nil {
		return result{}, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cmd, err := s.start(ctx, port, dir)
	if err != nil {
		return result{}, err
	}
	var logs bytes.Buffer
	cmd.Stdout, cmd.Stderr = &logs, &logs
	cmd.Dir = dir
	if err := cmd.Start(); err != nil {
		return result{}, err
	}
	defer func() { cancel(); cmd.Wait() }()
	base := "http://127.0.0.1:" + strconv.Itoa(port)
	client := &http.Client{Transport: &http.Transport{MaxIdleConns: o.clients * 2, MaxIdleConnsPerHost: o.clients * 2}, Timeout: 60 * time.Second}
	if err := waitUp(client, base, 60*time.Second); err != nil {
		return result{}, fmt.Errorf("%w\n%s", err, logs.String())
	}
	for _, kv := range cmd.Env {
		if module, ok := strings.CutPrefix(kv, "ADKHOST_BENCH_SETUP="); ok {
			if err := setupAdkhost(client, base, module, filepath.Join(o.peersDir, "adkhost", "weather_assistant")); err != nil {
				return result{}, err
			}
		}
	}
	l := &load{client: client, base: base, perSession: o.perSession}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for c := range o.clients {
		wg.Add(1)
		go func() { defer wg.Done(); l.client_(c, stop) }()
	}
	time.Sleep(o.warmup)
	l.measuring.Store(true)
	cpu0, err := treeCPU(cmd.Process.Pid)
	if err != nil {
		return result{}, err
	}
	self0 := selfCPU()
	t0 := time.Now()
	time.Sleep(o.duration)
	cpu1, err := treeCPU(cmd.Process.Pid)
	elapsed := time.Since(t0)
	self1 := selfCPU()
	l.measuring.Store(false)
	close(stop)
	wg.Wait()
	if err != nil {
		return result{}, err
	}
	r := result{turns: int(l.turns.Load()), errors: int(l.errors.Load()), elapsed: elapsed, cpu: cpu1 - cpu0, client: self1 - self0}
	lat := l.latencies()
	if len(lat) > 0 {
		slices.Sort(lat)
		r.p50, r.p99 = lat[len(lat)/2], lat[len(lat)*99/100]
	}
	if r.turns == 0 {
		return r, fmt.Errorf("no turn succeeded (%d errors; first: %s)\n%s", r.errors, l.firstErr(), logs.String())
	}
	return r, nil
}

func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

func waitUp(c *http.Client, base string, limit time.Duration) error {
	deadline := time.Now().Add(limit)
	for time.Now().Before(deadline) {
		resp, err := c.Get(base + "/list-apps")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	return errors.New("the server did not answer /list-apps in time")
}

// setupAdkhost uploads the module as "weather" and registers the app
// folder as weather_assistant.
func setupAdkhost(c *http.Client, base, module, appDir string) error {
	wasm, err := os.ReadFile(module)
	if err != nil {
		return err
	}
	if err := adminPut(c, base+"/admin/v1/modules/weather", "application/wasm", wasm); err != nil {
		return fmt.Errorf("uploading %s: %w", module, err)
	}
	root, err := os.ReadFile(filepath.Join(appDir, "root_agent.yaml"))
	if err != nil {
		return err
	}
	script, err := os.ReadFile(filepath.Join(appDir, "scripted_model.yaml"))
	if err != nil {
		return err
	}
	var body bytes.Buffer
	w := multipart.NewWriter(&body)
	for name, content := range map[string][]byte{"root_agent.yaml": root, "scripted_model.yaml": script} {
		fw, err := w.CreateFormFile(name, name)
		if err != nil {
			return err
		}
		fw.Write(content)
	}
	if err := w.Close(); err != nil {
		return err
	}
	return adminPut(c, base+"/admin/v1/apps/weather_assistant", w.FormDataContentType(), body.Bytes())
}

func adminPut(c *http.Client, url, ctype string, body []byte) error {
	req, err := http.NewRequest(http.MethodPut, url, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer bench-admin-token")
	req.Header.Set("Content-Type", ctype)
	resp, err := c.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("%s: %d %s", url, resp.StatusCode, b)
	}
	return nil
}

// load is the clients' shared tally.
type load struct {
	client     *http.Client
	base       string
	perSession int
	measuring  atomic.Bool
	turns      atomic.Int64
	errors     atomic.Int64
	sessions   atomic.Int64

	mu    sync.Mutex
	lat   []time.Duration
	first string
}

func (l *load) latencies() []time.Duration {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.lat)
}

func (l *load) firstErr() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.first
}

func (l *load) fail(msg string) {
	l.mu.Lock()
	if l.first == "" {
		l.first = msg
	}
	l.mu.Unlock()
	if l.measuring.Load() {
		l.errors.Add(1)
	}
}

// client_ is one client: a session, -turns-per-session turns, a new one.
func (l *load) client_(id int, stop <-chan struct{}) {
	user := "u" + strconv.Itoa(id)
	const app = "weather_assistant"
	msg := []byte(`{"appName":"` + app + `","userId":"` + user + `","sessionId":"%s","newMessage":{"role":"user","parts":[{"text":"What's the weather in Paris?"}]}}`)
	for {
		sid := "s" + strconv.FormatInt(l.sessions.Add(1), 10)
		resp, err := l.client.Post(l.base+"/apps/"+app+"/users/"+user+"/sessions/"+sid, "application/json", strings.NewReader("{}"))
		if err != nil {
			l.fail(err.Error())
			if sleepOrStop(stop) {
				return
			}
			continue
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			l.fail("create session: " + resp.Status)
			continue
		}
		body := bytes.Replace(msg, []byte("%s"), []byte(sid), 1)
		for range l.perSession {
			select {
			case <-stop:
				return
			default:
			}
			t0 := time.Now()
			resp, err := l.client.Post(l.base+"/run", "application/json", bytes.NewReader(body))
			if err != nil {
				l.fail(err.Error())
				continue
			}
			events, err := countEvents(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK || err != nil || events < 3 {
				l.fail(fmt.Sprintf("run: %s, %d events, %v", resp.Status, events, err))
				continue
			}
			if l.measuring.Load() {
				d := time.Since(t0)
				l.turns.Add(1)
				l.mu.Lock()
				l.lat = append(l.lat, d)
				l.mu.Unlock()
			}
		}
	}
}

func sleepOrStop(stop <-chan struct{}) bool {
	select {
	case <-stop:
		return true
	case <-time.After(50 * time.Millisecond):
		return false
	}
}

// countEvents reads a /run answer, a JSON list of events.
func countEvents(r io.Reader) (int, error) {
	var events []json.RawMessage
	if err := json.NewDecoder(bufio.NewReader(r)).Decode(&events); err != nil {
		return 0, err
	}
	return len(events), nil
}

// selfCPU is the load generator's own user+system CPU time.
func selfCPU() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// treeCPU is the user+system CPU time of pid and all its descendants.
func treeCPU(pid int) (time.Duration, error) {
	var total time.Duration
	seen := map[int]bool{}
	var walk func(int) error
	walk = func(p int) error {
		if seen[p] {
			return nil
		}
		seen[p] = true
		stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", p))
		if err != nil {
			return err
		}
		// Fields after the command (which may hold spaces) start at ") ".
		f := strings.Fields(string(stat[bytes.LastIndexByte(stat, ')')+2:]))
		utime, _ := strconv.ParseInt(f[11], 10, 64)
		stime, _ := strconv.ParseInt(f[12], 10, 64)
		total += time.Duration(utime+stime) * time.Second / 100 // USER_HZ
		tasks, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/children", p))
		for _, t := range tasks {
			b, _ := os.ReadFile(t)
			for _, c := range strings.Fields(string(b)) {
				if n, err := strconv.Atoi(c); err == nil {
					if err := walk(n); err != nil {
						return err
					}
				}
			}
		}
		return nil
	}
	return total, walk(pid)
}
