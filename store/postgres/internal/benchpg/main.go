// Command benchpg measures store/postgres for `make bench-postgres`, on a
// throwaway PostgreSQL cluster with its durable defaults (fsync on):
//
//   - appends/s of one writer on one session, adkhost's SessionService
//     against google-adk 2.13's DatabaseSessionService (asyncpg, through
//     bench/peers/pg_append_bench.py), same database, same event shapes;
//   - turns over /run against `adkhost serve` processes (the reactive
//     scripted model and one Wasm tool call per turn, 16 clients, a new
//     session every 10 turns) on bbolt, on PostgreSQL with one replica and
//     with two (clients alternate replicas), with the CPU seconds of every
//     process (servers, PostgreSQL's, this client) per turn.
//
// Both run -rounds times (3), alternating what they compare, and the last
// line, `pg_append_vs_adk_python=… pg_cpu_per_turn_2rep_vs_1=…
// pg_vs_bolt_turns=…`, has the ratios of the medians.
package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"mime/multipart"
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

	"github.com/jackc/pgx/v5"
	"google.golang.org/genai"

	"github.com/adkhost/adkhost/engine/model"
	"github.com/adkhost/adkhost/engine/session"
	"github.com/adkhost/adkhost/internal/pgtest"
	"github.com/adkhost/adkhost/internal/wasmbuild"
	"github.com/adkhost/adkhost/store/postgres"
)

func main() {
	python := flag.String("python", "conformance/.venv/bin/python", "Python with google-adk 2.13, SQLAlchemy and asyncpg")
	seconds := flag.Duration("append-duration", 5*time.Second, "measured time of each append benchmark")
	dur := flag.Duration("duration", 8*time.Second, "measured time of each turn benchmark")
	clients := flag.Int("clients", 16, "concurrent /run clients")
	rounds := flag.Int("rounds", 3, "rounds, each measuring every configuration in turn; the last line has the medians")
	flag.Parse()
	if err := run(*python, *seconds, *dur, *clients, max(*rounds, 1)); err != nil {
		fmt.Fprintln(os.Stderr, "benchpg:", err)
		os.Exit(1)
	}
}

func run(python string, appendDur, dur time.Duration, clients, rounds int) error {
	ctx := context.Background()
	root, err := wasmbuild.ModuleRoot()
	if err != nil {
		return err
	}
	cluster, err := pgtest.StartWith(pgtest.Options{Durable: true})
	if err != nil {
		return err
	}
	defer cluster.Stop()

	// Appends: adkhost, then google-adk, on one new database a round.
	// Rounds alternate the writers, so that the disk's drift (its fsync
	// rate moves several-fold over minutes here) falls on both.
	var url string
	var goRates, pyRates []float64
	for round := range rounds {
		if url, _, err = cluster.CreateDatabase(ctx); err != nil {
			return err
		}
		raw, err := rawCommits(ctx, url, appendDur)
		if err != nil {
			return err
		}
		goRate, err := goAppends(ctx, url, appendDur)
		if err != nil {
			return err
		}
		pyRate, err := pyAppends(root, python, url, appendDur)
		if err != nil {
			return err
		}
		goRates, pyRates = append(goRates, goRate), append(pyRates, pyRate)
		fmt.Printf("round=%d append_per_s adkhost=%.0f google_adk=%.0f raw_commit_per_s=%.0f (one-row INSERT, autocommit: the disk's floor)\n", round+1, goRate, pyRate, raw)
	}

	// Turns.
	tmp, err := os.MkdirTemp("", "adkhost-benchpg")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	bin := filepath.Join(tmp, "adkhost")
	build := exec.Command("go", "build", "-o", bin, "./cmd/adkhost")
	build.Dir, build.Stderr = root, os.Stderr
	if err := build.Run(); err != nil {
		return fmt.Errorf("building adkhost: %w", err)
	}
	wasm, err := wasmbuild.Build(wasmbuild.SDKExample(root, "weather", "adkhost-server-guests"))
	if err != nil {
		return fmt.Errorf("building the weather guest: %w", err)
	}
	type result struct{ tps, cpuPerTurn float64 }
	runs := 0 // each run gets data directories of its own
	bench := func(name string, replicas int, store func() (string, error)) (result, error) {
		runs++
		var servers []*server
		for i := range replicas {
			st, err := store()
			if err != nil {
				return result{}, err
			}
			s, err := startServer(bin, filepath.Join(tmp, fmt.Sprintf("%s-%d-%d", name, runs, i)), st)
			if err != nil {
				return result{}, err
			}
			defer s.stop()
			servers = append(servers, s)
		}
		if err := register(servers[0].url, wasm); err != nil {
			return result{}, err
		}
		for _, s := range servers[1:] {
			if err := waitApp(s.url); err != nil {
				return result{}, err
			}
		}
		pids := func() (srv, db []int) {
			for _, s := range servers {
				srv = append(srv, s.cmd.Process.Pid)
			}
			if strings.HasPrefix(servers[0].store, "postgres") {
				db = serverProcesses(cluster.Pid())
			}
			return srv, db
		}
		turns, elapsed, cpu, err := drive(servers, clients, dur, pids)
		if err != nil {
			return result{}, fmt.Errorf("%s: %w", name, err)
		}
		total := cpu[0] + cpu[1] + cpu[2]
		r := result{float64(turns) / elapsed.Seconds(), total / float64(turns)}
		ms := func(x float64) float64 { return x / float64(turns) * 1000 }
		fmt.Printf("%s replicas=%d turns=%d turns_per_s=%.0f cpu_ms_per_turn=%.2f (servers %.2f, postgres %.2f, client %.2f)\n",
			name, replicas, turns, r.tps, r.cpuPerTurn*1000, ms(cpu[0]), ms(cpu[1]), ms(cpu[2]))
		return r, nil
	}
	pgStore := func() (string, error) { return url, nil }
	newDB := func() error {
		url, _, err = cluster.CreateDatabase(ctx)
		return err
	}
	// Each round runs the three configurations in turn; the ratios are of
	// the medians, so one disturbed window moves no ratio alone.
	var boltTPS, pg1TPS, pg1CPU, pg2CPU []float64
	for round := range rounds {
		fmt.Printf("round=%d\n", round+1)
		bolt, err := bench("bolt", 1, func() (string, error) { return "bolt", nil })
		if err != nil {
			return err
		}
		if err := newDB(); err != nil {
			return err
		}
		pg1, err := bench("postgres", 1, pgStore)
		if err != nil {
			return err
		}
		if err := newDB(); err != nil {
			return err
		}
		pg2, err := bench("postgres", 2, pgStore)
		if err != nil {
			return err
		}
		boltTPS, pg1TPS = append(boltTPS, bolt.tps), append(pg1TPS, pg1.tps)
		pg1CPU, pg2CPU = append(pg1CPU, pg1.cpuPerTurn), append(pg2CPU, pg2.cpuPerTurn)
	}
	fmt.Printf("pg_append_vs_adk_python=%.1f pg_cpu_per_turn_2rep_vs_1=%.2f pg_vs_bolt_turns=%.2f\n",
		median(goRates)/median(pyRates), median(pg2CPU)/median(pg1CPU), median(pg1TPS)/median(boltTPS))
	return nil
}

// median is the middle value of v (the upper one of an even count).
func median(v []float64) float64 {
	v = slices.Clone(v)
	slices.Sort(v)
	return v[len(v)/2]
}

// event is the i-th event of the append benchmark, the shapes of
// bench/peers/pg_append_bench.py.
func event(i int) *session.Event {
	var author, role string
	var part *genai.Part
	switch i % 4 {
	case 0:
		author, role, part = "user", "user", &genai.Part{Text: "What's the weather in Paris?"}
	case 1:
		author, role = "weather_assistant", "model"
		part = &genai.Part{FunctionCall: &genai.FunctionCall{ID: fmt.Sprintf("call-%d", i), Name: "get_weather", Args: map[string]any{"city": "Paris"}}}
	case 2:
		author, role = "weather_assistant", "user"
		part = &genai.Part{FunctionResponse: &genai.FunctionResponse{ID: fmt.Sprintf("call-%d", i-1), Name: "get_weather",
			Response: map[string]any{"city": "Paris", "condition": "sunny", "temperatureC": 21}}}
	default:
		author, role, part = "weather_assistant", "model", &genai.Part{Text: "It is sunny in Paris, 21 °C."}
	}
	e := session.NewEvent(fmt.Sprintf("inv-%d", i/4), author, "")
	e.Response = model.Response{Content: &genai.Content{Role: role, Parts: []*genai.Part{part}}}
	e.Actions.StateDelta = map[string]any{}
	if i%2 == 0 {
		e.Actions.StateDelta = map[string]any{"last_city": "Paris", "turns": i}
	}
	return e
}

// rawCommits is the rate of serial one-row autocommitted inserts: what
// one writer's WAL flushes allow on this disk.
func rawCommits(ctx context.Context, url string, d time.Duration) (float64, error) {
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		return 0, err
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, `CREATE TABLE bench_raw (k BIGINT PRIMARY KEY, v TEXT)`); err != nil {
		return 0, err
	}
	n := 0
	t0 := time.Now()
	for time.Since(t0) < d {
		if _, err := conn.Exec(ctx, `INSERT INTO bench_raw VALUES ($1, 'x')`, n); err != nil {
			return 0, err
		}
		n++
	}
	return float64(n) / time.Since(t0).Seconds(), nil
}

func goAppends(ctx context.Context, url string, d time.Duration) (float64, error) {
	db, err := postgres.Open(ctx, url, postgres.Config{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		return 0, err
	}
	defer db.Close()
	svc := db.Sessions()
	warm, err := svc.Create(ctx, &session.CreateRequest{AppName: "bench", UserID: "u", SessionID: "go-warm"})
	if err != nil {
		return 0, err
	}
	for i := range 8 {
		if err := svc.AppendEvent(ctx, warm, event(i)); err != nil {
			return 0, err
		}
	}
	s, err := svc.Create(ctx, &session.CreateRequest{AppName: "bench", UserID: "u", SessionID: "go-serial"})
	if err != nil {
		return 0, err
	}
	n := 0
	t0 := time.Now()
	for time.Since(t0) < d {
		if err := svc.AppendEvent(ctx, s, event(n)); err != nil {
			return 0, err
		}
		n++
	}
	return float64(n) / time.Since(t0).Seconds(), nil
}

func pyAppends(root, python, url string, d time.Duration) (float64, error) {
	if !filepath.IsAbs(python) {
		python = filepath.Join(root, python)
	}
	u, _, _ := strings.Cut(url, "?")
	cmd := exec.Command(python, filepath.Join(root, "bench", "peers", "pg_append_bench.py"),
		"--url", "postgresql+asyncpg://"+strings.TrimPrefix(u, "postgres://"), "--seconds", strconv.FormatFloat(d.Seconds(), 'f', 1, 64))
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		return 0, fmt.Errorf("google-adk append benchmark (make python-venv-postgres): %w", err)
	}
	var r struct {
		AppendPerS float64 `json:"append_per_s"`
	}
	if err := json.Unmarshal(bytes.TrimSpace(out), &r); err != nil || r.AppendPerS <= 0 {
		return 0, fmt.Errorf("google-adk append benchmark printed %q: %v", out, err)
	}
	return r.AppendPerS, nil
}

type server struct {
	cmd   *exec.Cmd
	url   string
	store string
	done  chan struct{}
}

func startServer(bin, data, store string) (*server, error) {
	cmd := exec.Command(bin, "serve", "--addr", "127.0.0.1:0", "--data", data, "--store", store, "--admin-token", "bench", "--log-level", "warn")
	cmd.Env = append(os.Environ(), "ADKHOST_RUN_TOKEN=", "ADKHOST_STORE=")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	s := &server{cmd: cmd, store: store, done: make(chan struct{})}
	addr := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			if a, ok := strings.CutPrefix(sc.Text(), "adkhost serving on "); ok {
				addr <- a
			}
		}
		cmd.Wait()
		close(s.done)
	}()
	select {
	case a := <-addr:
		s.url = "http://" + a
		return s, nil
	case <-s.done:
		return nil, fmt.Errorf("adkhost serve --store %s exited", postgres.Redact(store))
	case <-time.After(60 * time.Second):
		cmd.Process.Kill()
		return nil, fmt.Errorf("adkhost serve did not start")
	}
}

func (s *server) stop() {
	s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-s.done:
	case <-time.After(20 * time.Second):
		s.cmd.Process.Kill()
		<-s.done
	}
}

var hc = &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}

func do(method, url, ctype string, body []byte, token string) ([]byte, error) {
	req, err := http.NewRequest(method, url, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
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
		err = fmt.Errorf("%s %s: %d %s", method, url, resp.StatusCode, b)
	}
	return b, err
}

// register uploads the weather module and the app (the reactive scripted
// model calling get_weather with the user's text).
func register(base string, wasm []byte) error {
	if _, err := do("PUT", base+"/admin/v1/modules/weather", "application/wasm", wasm, "bench"); err != nil {
		return err
	}
	var buf bytes.Buffer
	files := map[string]string{
		"root_agent.yaml": "name: bench_agent\nmodel: scripted\ninstruction: Answer about the weather.\n" +
			"tools:\n  - module: weather\nadkhost:\n  modules:\n    weather:\n      grants: {state: true}\n      write_user_state: true\n",
		"scripted_model.yaml": "rules:\n  - when: {function_response: get_weather}\n    respond: {text: 'weather in {{response.city}}'}\n" +
			"  - respond: {function_calls: [{name: get_weather, args: {city: '{{text}}'}}]}\n",
	}
	mw := multipart.NewWriter(&buf)
	for name, content := range files {
		w, err := mw.CreateFormFile(name, name)
		if err != nil {
			return err
		}
		w.Write([]byte(content))
	}
	mw.Close()
	_, err := do("PUT", base+"/admin/v1/apps/bench", mw.FormDataContentType(), buf.Bytes(), "bench")
	return err
}

// waitApp waits for a replica to serve the app registered through another.
func waitApp(base string) error {
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		b, err := do("GET", base+"/list-apps", "application/json", nil, "")
		if err == nil && bytes.Contains(b, []byte(`"bench"`)) {
			return nil
		}
		time.Sleep(20 * time.Millisecond)
	}
	return fmt.Errorf("%s does not serve the app registered through another replica", base)
}

// drive runs clients posting turns, each alternating between the servers
// (a round-robin load balancer), for a warm-up then dur, and returns the
// turns, the time and the CPU seconds over dur of the servers, of the
// database's processes and of this process.
func drive(servers []*server, clients int, dur time.Duration, pids func() (srv, db []int)) (int64, time.Duration, [3]float64, error) {
	var measuring, stopping atomic.Bool
	var turns, errs atomic.Int64
	var firstErr atomic.Value
	var wg sync.WaitGroup
	for c := range clients {
		wg.Go(func() {
			sess := ""
			for n := 0; !stopping.Load(); n++ {
				srv := servers[(c+n)%len(servers)]
				if n%10 == 0 {
					sess = fmt.Sprintf("c%d-s%d", c, n/10)
					if _, err := do("POST", srv.url+"/apps/bench/users/u/sessions", "application/json", []byte(`{"sessionId":"`+sess+`"}`), ""); err != nil {
						errs.Add(1)
						firstErr.CompareAndSwap(nil, err)
						return
					}
				}
				body, _ := json.Marshal(map[string]any{"appName": "bench", "userId": "u", "sessionId": sess,
					"newMessage": map[string]any{"role": "user", "parts": []any{map[string]any{"text": fmt.Sprintf("city %d", n)}}}})
				if _, err := do("POST", srv.url+"/run", "application/json", body, ""); err != nil {
					errs.Add(1)
					firstErr.CompareAndSwap(nil, err)
					continue
				}
				if measuring.Load() {
					turns.Add(1)
				}
			}
		})
	}
	time.Sleep(2 * time.Second)
	srvPids, dbPids := pids()
	cpu0 := [3]float64{cpuSeconds(srvPids), cpuSeconds(dbPids), selfCPU()}
	measuring.Store(true)
	start := time.Now()
	time.Sleep(dur)
	measuring.Store(false)
	elapsed := time.Since(start)
	cpu := [3]float64{cpuSeconds(srvPids) - cpu0[0], cpuSeconds(dbPids) - cpu0[1], selfCPU() - cpu0[2]}
	stopping.Store(true)
	wg.Wait()
	if e := firstErr.Load(); e != nil {
		return 0, 0, cpu, fmt.Errorf("%d errors, first: %v", errs.Load(), e)
	}
	return turns.Load(), elapsed, cpu, nil
}

// clockTick is USER_HZ, the unit of /proc/PID/stat's times.
const clockTick = 100

// cpuSeconds sums the user and system CPU time of pids.
func cpuSeconds(pids []int) float64 {
	var ticks int64
	for _, pid := range pids {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil {
			continue
		}
		f := statFields(b)
		if len(f) > 14 {
			u, _ := strconv.ParseInt(f[13], 10, 64)
			s, _ := strconv.ParseInt(f[14], 10, 64)
			ticks += u + s
		}
	}
	return float64(ticks) / clockTick
}

// statFields splits /proc/PID/stat, whose second field (the command, in
// parentheses) may hold spaces.
func statFields(b []byte) []string {
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return nil
	}
	return append([]string{"pid", "comm"}, strings.Fields(string(b[i+1:]))...)
}

// serverProcesses lists PostgreSQL's postmaster and its children (the
// backends and workers, each in a session of its own: setsid).
func serverProcesses(postmaster int) []int {
	entries, _ := os.ReadDir("/proc")
	out := []int{postmaster}
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil {
			continue
		}
		if f := statFields(b); len(f) > 3 && f[3] == strconv.Itoa(postmaster) {
			out = append(out, pid)
		}
	}
	return out
}

func selfCPU() float64 {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()).Seconds()
}
