package bolt_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/adkhost/adkhost/engine/session"
	"github.com/adkhost/adkhost/store/bolt"
)

// The crash test: a child process (this test binary, re-run with
// crashChildEnv set) appends events from crashWriters goroutines and prints
// a line for each acknowledged append; the parent SIGKILLs it at a random
// moment, reopens the file and checks that every acknowledged event is
// there, in order, with state equal to replaying the stored events, and
// that the file opens and verifies without repair. Many rounds run on the
// same file; in every other round the writers take turns, so each append
// commits alone and goes through the tail bucket.
const (
	crashChildEnv  = "ADKHOST_BOLT_CRASH_CHILD"
	crashRoundsEnv = "ADKHOST_BOLT_CRASH_ROUNDS"
	// crashOneAtATimeEnv makes the child's writers take turns, so that
	// every append commits alone and goes through the tail.
	crashOneAtATimeEnv = "ADKHOST_BOLT_CRASH_ONE_AT_A_TIME"
	// crashPipelinedEnv makes the child's writers queue their appends
	// four at a time (session.Pending, as a /run turn does) and
	// acknowledge them once Wait returns.
	crashPipelinedEnv = "ADKHOST_BOLT_CRASH_PIPELINED"
	crashWriters      = 16
	crashApp          = "crash"
)

func crashSession(g int) (user, id string) { return fmt.Sprintf("u%d", g%2), fmt.Sprintf("g%02d", g) }

func crashEventID(g, i int) string { return fmt.Sprintf("g%02d-%d", g, i) }

// crashDelta is what event i of writer g sets: its own counter, the
// writer's last index in the user's and the app's state, and a temp: key
// that must never be stored.
func crashDelta(g, i int) map[string]any {
	return map[string]any{
		"n":                               i,
		fmt.Sprintf("seen_%d", i%7):       i,
		fmt.Sprintf("user:last_g%02d", g): i,
		fmt.Sprintf("app:last_g%02d", g):  i,
		"temp:scratch":                    i,
	}
}

// TestCrashChild is the child side; it runs only when the parent starts it.
func TestCrashChild(t *testing.T) {
	path := os.Getenv(crashChildEnv)
	if path == "" {
		t.Skip("run by TestCrash")
	}
	db, err := bolt.Open(path, bolt.Config{LockTimeout: 10 * time.Second})
	if err != nil {
		fmt.Fprintf(os.Stderr, "child open: %v\n", err)
		os.Exit(2)
	}
	svc := db.Sessions()
	ctx := context.Background()
	var outMu sync.Mutex
	say := func(format string, args ...any) {
		outMu.Lock()
		defer outMu.Unlock()
		// One write per line, unbuffered: what was printed before the kill
		// is in the pipe.
		os.Stdout.WriteString(fmt.Sprintf(format, args...))
	}
	sessions := make([]*session.Session, crashWriters)
	next := make([]int, crashWriters)
	for g := range crashWriters {
		user, id := crashSession(g)
		s, err := svc.Get(ctx, &session.GetRequest{AppName: crashApp, UserID: user, SessionID: id, NumRecentEvents: 1})
		if err != nil {
			if s, err = svc.Create(ctx, &session.CreateRequest{AppName: crashApp, UserID: user, SessionID: id}); err != nil {
				fmt.Fprintf(os.Stderr, "child create: %v\n", err)
				os.Exit(2)
			}
		}
		if evs := s.Events(); len(evs) == 1 {
			n, err := strconv.Atoi(strings.TrimPrefix(evs[0].ID, fmt.Sprintf("g%02d-", g)))
			if err != nil {
				fmt.Fprintf(os.Stderr, "child: event id %q: %v\n", evs[0].ID, err)
				os.Exit(2)
			}
			next[g] = n + 1
		}
		sessions[g] = s
	}
	say("ready\n")
	var turn sync.Mutex
	oneAtATime := os.Getenv(crashOneAtATimeEnv) != ""
	pipelined := os.Getenv(crashPipelinedEnv) != ""
	var wg sync.WaitGroup
	for g := range crashWriters {
		wg.Go(func() {
			if pipelined {
				for i := next[g]; ; i += 4 {
					qctx, pend := session.WithPending(ctx)
					for j := i; j < i+4; j++ {
						e := session.NewEvent("inv", "agent", "")
						e.ID = crashEventID(g, j)
						e.Actions.StateDelta = crashDelta(g, j)
						if err := svc.AppendEvent(qctx, sessions[g], e); err != nil {
							fmt.Fprintf(os.Stderr, "child append %s: %v\n", e.ID, err)
							os.Exit(2)
						}
					}
					if err := pend.Wait(); err != nil {
						fmt.Fprintf(os.Stderr, "child wait: %v\n", err)
						os.Exit(2)
					}
					for j := i; j < i+4; j++ {
						say("ack %d %d\n", g, j)
					}
				}
			}
			for i := next[g]; ; i++ {
				e := session.NewEvent("inv", "agent", "")
				e.ID = crashEventID(g, i)
				e.Actions.StateDelta = crashDelta(g, i)
				if oneAtATime {
					turn.Lock()
				}
				if err := svc.AppendEvent(ctx, sessions[g], e); err != nil {
					fmt.Fprintf(os.Stderr, "child append %s: %v\n", e.ID, err)
					os.Exit(2)
				}
				say("ack %d %d\n", g, i)
				if oneAtATime {
					turn.Unlock()
				}
			}
		})
	}
	wg.Wait()
}

// crashModel is what the parent expects: per writer, the events verified so
// far and the state they replay to.
type crashModel struct {
	count    [crashWriters]int            // events of each writer verified
	acked    [crashWriters]int            // highest acknowledged index + 1
	sessions [crashWriters]map[string]any // replayed session state
	users    map[string]map[string]any
	app      map[string]any
}

func TestCrash(t *testing.T) {
	if os.Getenv(crashChildEnv) != "" {
		t.Skip("in the child")
	}
	rounds := 50
	if s := os.Getenv(crashRoundsEnv); s != "" {
		var err error
		if rounds, err = strconv.Atoi(s); err != nil {
			t.Fatalf("%s=%q: %v", crashRoundsEnv, s, err)
		}
	}
	path := filepath.Join(t.TempDir(), "crash.db")
	m := &crashModel{users: map[string]map[string]any{}, app: map[string]any{}}
	for g := range crashWriters {
		m.sessions[g] = map[string]any{}
	}
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 5))
	totalAcks, killedWriting, withStaged := 0, 0, 0
	start := time.Now()
	for round := range rounds {
		// Most rounds kill the child while it appends; every fifth, at any
		// moment from its start (opening, creating sessions).
		delay := time.Duration(20+rng.IntN(181)) * time.Millisecond
		// Odd rounds append one at a time: each append commits alone,
		// staged in the tail, which fills and is settled into the log.
		// Every fourth round queues appends four at a time.
		acks, ready := runCrashChild(t, path, delay, round%5 != 4, round%2 == 1, round%4 == 2)
		if ready {
			killedWriting++
		}
		for g, is := range acks {
			for _, i := range is {
				if i+1 > m.acked[g] {
					m.acked[g] = i + 1
				}
				totalAcks++
			}
		}
		full := round == rounds-1 || round%10 == 9
		if checkCrashFile(t, path, m, full, round) > 0 {
			withStaged++
		}
		if t.Failed() {
			t.Fatalf("round %d failed", round)
		}
	}
	t.Logf("%d rounds (%d killed while appending, %d leaving events staged in the tail) in %v: %d acknowledged appends, all found",
		rounds, killedWriting, withStaged, time.Since(start).Round(time.Millisecond), totalAcks)
	if totalAcks == 0 {
		t.Fatalf("no append was acknowledged in %d rounds", rounds)
	}
}

// runCrashChild starts the child, kills it with SIGKILL delay after it is
// ready (or after its start, if !afterReady), and returns the acknowledged
// indexes per writer, in the order they were acknowledged.
func runCrashChild(t *testing.T, path string, delay time.Duration, afterReady, oneAtATime, pipelined bool) (acks [crashWriters][]int, ready bool) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestCrashChild$", "-test.count=1")
	cmd.Env = append(os.Environ(), crashChildEnv+"="+path)
	if oneAtATime {
		cmd.Env = append(cmd.Env, crashOneAtATimeEnv+"=1")
	}
	if pipelined {
		cmd.Env = append(cmd.Env, crashPipelinedEnv+"=1")
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	readyCh := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			line := sc.Text()
			if line == "ready" {
				close(readyCh)
				continue
			}
			var g, i int
			if _, err := fmt.Sscanf(line, "ack %d %d", &g, &i); err != nil || g < 0 || g >= crashWriters {
				continue // test framework output
			}
			acks[g] = append(acks[g], i)
		}
		io.Copy(io.Discard, out)
	}()
	if afterReady {
		select {
		case <-readyCh:
			ready = true
		case <-done:
		case <-time.After(20 * time.Second):
			t.Errorf("child not ready after 20s")
		}
	}
	time.Sleep(delay)
	cmd.Process.Signal(syscall.SIGKILL)
	<-done
	err = cmd.Wait()
	if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() {
		t.Fatalf("child ended on its own (%v): %s", err, stderr.String())
	}
	for g, is := range acks {
		for k := 1; k < len(is); k++ {
			if is[k] != is[k-1]+1 {
				t.Fatalf("writer %d acknowledged %d after %d", g, is[k], is[k-1])
			}
		}
	}
	return acks, ready
}

// checkCrashFile reopens the file and checks it against m, moving m to
// what is now stored. full rereads every event; otherwise only those
// stored since the last check are read.
func checkCrashFile(t *testing.T, path string, m *crashModel, full bool, round int) (staged int) {
	t.Helper()
	db, err := bolt.Open(path, bolt.Config{})
	if err != nil {
		t.Fatalf("round %d: reopen after kill: %v", round, err)
	}
	defer db.Close()
	if err := db.Verify(); err != nil {
		t.Fatalf("round %d: verify after kill: %v", round, err)
	}
	staged = bolt.StagedEvents(t, db)
	svc := db.Sessions()
	ctx := context.Background()
	if full {
		for g := range crashWriters {
			m.count[g] = 0
			m.sessions[g] = map[string]any{}
		}
		m.users = map[string]map[string]any{}
		m.app = map[string]any{}
	}
	got := map[int]*session.Session{}
	for g := range crashWriters {
		user, id := crashSession(g)
		last, err := svc.Get(ctx, &session.GetRequest{AppName: crashApp, UserID: user, SessionID: id, NumRecentEvents: 1})
		if err != nil {
			if m.acked[g] > 0 || m.count[g] > 0 {
				t.Fatalf("round %d: writer %d's session is gone: %v", round, g, err)
			}
			continue // killed before it was created
		}
		stored := 0
		if evs := last.Events(); len(evs) == 1 {
			if _, err := fmt.Sscanf(evs[0].ID, "g%02d-%d", new(int), &stored); err != nil {
				t.Fatalf("round %d: event id %q", round, evs[0].ID)
			}
			stored++
		}
		if stored < m.acked[g] {
			t.Fatalf("round %d: writer %d: %d events stored, %d acknowledged", round, g, stored, m.acked[g])
		}
		if stored < m.count[g] {
			t.Fatalf("round %d: writer %d: %d events stored, %d were before", round, g, stored, m.count[g])
		}
		req := &session.GetRequest{AppName: crashApp, UserID: user, SessionID: id, NumRecentEvents: stored - m.count[g]}
		if req.NumRecentEvents == 0 {
			req.NumRecentEvents = 1 // 0 would read them all
		}
		s, err := svc.Get(ctx, req)
		if err != nil {
			t.Fatalf("round %d: writer %d: %v", round, g, err)
		}
		evs := s.Events()
		if stored == m.count[g] {
			evs = nil
		}
		for k, e := range evs {
			i := m.count[g] + k
			if e.ID != crashEventID(g, i) {
				t.Fatalf("round %d: writer %d: event %d is %q, want %q (events lost or out of order)", round, g, i, e.ID, crashEventID(g, i))
			}
			if _, ok := e.Actions.StateDelta["temp:scratch"]; ok {
				t.Fatalf("round %d: event %s stored a temp: key", round, e.ID)
			}
			d := session.SplitDelta(e.Actions.StateDelta)
			for k, v := range d.Session {
				m.sessions[g][k] = v
			}
			if m.users[user] == nil {
				m.users[user] = map[string]any{}
			}
			for k, v := range d.User {
				m.users[user][k] = v
			}
			for k, v := range d.App {
				m.app[k] = v
			}
		}
		m.count[g] = stored
		got[g] = s
	}
	// The stored state is the replay of the stored events, of all writers
	// for the app: and user: keys.
	for g, s := range got {
		user, _ := crashSession(g)
		want := session.MergeState(m.sessions[g], m.app, m.users[user])
		if st := s.State(); !reflect.DeepEqual(st, want) {
			t.Fatalf("round %d: writer %d: state\n got %v\nwant %v (replay of %d events)", round, g, st, want, m.count[g])
		}
	}
	return staged
}
