// Command storepeers measures adkhost's bbolt session store against the
// session stores users would pick instead: google-adk 2.13's
// DatabaseSessionService (SQLite through aiosqlite) and SqliteSessionService
// (bench/peers/store_bench.py, run with -python), and adk-go v2's database
// session service on SQLite (gorm with the pure-Go glebarez driver). Each
// is measured the same way: appends of one writer on one session, appends
// of -writers writers on distinct sessions, and Get of a 1,000-event
// session; the events cycle through a user message, a function call, its
// response and a text answer, with a state delta on every other one.
// `make bench-store` runs it; the last line is `append_vs_adk_sqlite=…
// append64_vs_adk_sqlite=… append_vs_adkgo=… get1000_vs_adk_sqlite=…`
// (adkhost ÷ the best google-adk service, and ÷ adk-go).
package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/glebarez/sqlite"
	"google.golang.org/genai"
	"gorm.io/gorm"
	"gorm.io/gorm/logger"

	adkgosession "google.golang.org/adk/v2/session"
	"google.golang.org/adk/v2/session/database"

	"github.com/adkhost/adkhost/engine/model"
	"github.com/adkhost/adkhost/engine/session"
	"github.com/adkhost/adkhost/store/bolt"
)

const app, user = "bench", "u"

// numbers are one store's results.
type numbers struct {
	Service   string  `json:"service"`
	Append    float64 `json:"append_per_s"`
	AppendN   float64 `json:"append64_per_s"`
	Get1000Ms float64 `json:"get1000_ms"`
	// Errors counts failed appends by exception (google-adk's SQLite
	// services: "database is locked" under concurrent writers).
	Errors map[string]int `json:"errors,omitempty"`
}

func main() {
	seconds := flag.Float64("seconds", 5, "measured seconds per append phase")
	writers := flag.Int("writers", 64, "concurrent writers")
	python := flag.String("python", "", "the python of a venv with google-adk (runs bench/peers/store_bench.py)")
	script := flag.String("script", "peers/store_bench.py", "google-adk's side of the benchmark")
	flag.Parse()
	if err := run(*seconds, *writers, *python, *script); err != nil {
		fmt.Fprintln(os.Stderr, "storepeers:", err)
		os.Exit(1)
	}
}

func run(seconds float64, writers int, python, script string) error {
	dur := time.Duration(seconds * float64(time.Second))
	dir, err := os.MkdirTemp("", "adkhost-storepeers")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)

	db, err := bolt.Open(filepath.Join(dir, "adkhost.db"), bolt.Config{})
	if err != nil {
		return err
	}
	host, err := measure("adkhost_bolt", adkhostStore{db.Sessions()}, dur, writers)
	db.Close()
	if err != nil {
		return err
	}
	printNumbers(host)

	// As configured by default, adk-go's SQLite store fails concurrent
	// writers at once with SQLITE_BUSY ("database is locked"); a busy
	// timeout and immediate transactions, as a user would set, fix that.
	svc, err := database.NewSessionService(sqlite.Open(filepath.Join(dir, "adkgo.db")+"?_pragma=busy_timeout(30000)&_txlock=immediate"),
		&gorm.Config{Logger: logger.Default.LogMode(logger.Silent)})
	if err != nil {
		return err
	}
	if err := database.AutoMigrate(svc); err != nil {
		return err
	}
	adkgo, err := measure("adkgo_database_sqlite", adkgoStore{svc}, dur, writers)
	if err != nil {
		return err
	}
	printNumbers(adkgo)

	var best numbers
	if python != "" {
		peers, err := runPython(python, script, seconds, writers)
		if err != nil {
			return err
		}
		for _, p := range peers {
			printNumbers(p)
			best.Append = max(best.Append, p.Append)
			best.AppendN = max(best.AppendN, p.AppendN)
			if best.Get1000Ms == 0 || p.Get1000Ms < best.Get1000Ms {
				best.Get1000Ms = p.Get1000Ms
			}
		}
	}
	ratio := func(a, b float64) string {
		if a == 0 || b == 0 {
			return "n/a"
		}
		return fmt.Sprintf("%.3g", a/b)
	}
	fmt.Printf("append_vs_adk_sqlite=%s append64_vs_adk_sqlite=%s append_vs_adkgo=%s get1000_vs_adk_sqlite=%s\n",
		ratio(host.Append, best.Append), ratio(host.AppendN, best.AppendN), ratio(host.Append, adkgo.Append), ratio(host.Get1000Ms, best.Get1000Ms))
	return nil
}

func printNumbers(n numbers) {
	fmt.Printf("service=%s append_per_s=%.0f append%s_per_s=%.0f get1000_ms=%.2f errors=%v\n", n.Service, n.Append, "N", n.AppendN, n.Get1000Ms, n.Errors)
}

func runPython(python, script string, seconds float64, writers int) ([]numbers, error) {
	cmd := exec.Command(python, script, "--seconds", strconv.FormatFloat(seconds, 'f', -1, 64), "--writers", strconv.Itoa(writers))
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", script, err)
	}
	var res []numbers
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		var n numbers
		if err := json.Unmarshal(sc.Bytes(), &n); err != nil {
			return nil, fmt.Errorf("%s printed %q: %w", script, sc.Text(), err)
		}
		res = append(res, n)
	}
	return res, nil
}

// store is what the benchmark does with a session service.
type store interface {
	create(ctx context.Context, id string) (appender, error)
	get(ctx context.Context, id string) (int, error)
}

type appender func(ctx context.Context, i int) error

func measure(name string, s store, dur time.Duration, writers int) (numbers, error) {
	ctx := context.Background()
	n := numbers{Service: name}
	// Serial appends on one session.
	a, err := s.create(ctx, "serial")
	if err != nil {
		return n, err
	}
	count, t0 := 0, time.Now()
	for ; time.Since(t0) < dur; count++ {
		if err := a(ctx, count); err != nil {
			return n, err
		}
	}
	n.Append = float64(count) / time.Since(t0).Seconds()

	// Concurrent appends, one session per writer.
	var total atomic.Int64
	var wg sync.WaitGroup
	errs := make([]error, writers)
	t0 = time.Now()
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			a, err := s.create(ctx, "w"+strconv.Itoa(w))
			if err != nil {
				errs[w] = err
				return
			}
			for i := 0; time.Since(t0) < dur; i++ {
				if err := a(ctx, i); err != nil {
					errs[w] = err
					return
				}
				total.Add(1)
			}
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return n, err
	}
	n.AppendN = float64(total.Load()) / time.Since(t0).Seconds()

	// Get of a 1,000-event session.
	a, err = s.create(ctx, "long")
	if err != nil {
		return n, err
	}
	for i := range 1000 {
		if err := a(ctx, i); err != nil {
			return n, err
		}
	}
	const reps = 20
	t0 = time.Now()
	for range reps {
		got, err := s.get(ctx, "long")
		if err != nil {
			return n, err
		}
		if got != 1000 {
			return n, fmt.Errorf("%s: got %d events, want 1000", name, got)
		}
	}
	n.Get1000Ms = float64(time.Since(t0)) / reps / float64(time.Millisecond)
	return n, nil
}

// content is the i-th event's content and state delta: the four shapes of
// a turn, a state delta on every other event.
func content(i int) (*genai.Content, map[string]any) {
	var c *genai.Content
	switch i % 4 {
	case 0:
		c = genai.NewContentFromText("What's the weather in Paris?", genai.RoleUser)
	case 1:
		c = &genai.Content{Role: genai.RoleModel, Parts: []*genai.Part{{FunctionCall: &genai.FunctionCall{
			ID: "call-" + strconv.Itoa(i), Name: "get_weather", Args: map[string]any{"city": "Paris"}}}}}
	case 2:
		c = &genai.Content{Role: genai.RoleUser, Parts: []*genai.Part{{FunctionResponse: &genai.FunctionResponse{
			ID: "call-" + strconv.Itoa(i-1), Name: "get_weather", Response: map[string]any{"city": "Paris", "condition": "sunny", "temperatureC": 21}}}}}
	default:
		c = genai.NewContentFromText("It is sunny in Paris, 21 °C.", genai.RoleModel)
	}
	if i%2 == 0 {
		return c, map[string]any{"last_city": "Paris", "turns": i}
	}
	return c, nil
}

func author(i int) string {
	if i%4 == 0 {
		return "user"
	}
	return "weather_assistant"
}

type adkhostStore struct{ s *bolt.SessionService }

func (h adkhostStore) create(ctx context.Context, id string) (appender, error) {
	sess, err := h.s.Create(ctx, &session.CreateRequest{AppName: app, UserID: user, SessionID: id})
	if err != nil {
		return nil, err
	}
	return func(ctx context.Context, i int) error {
		c, delta := content(i)
		ev := &session.Event{Response: model.Response{Content: c}, ID: "e-" + strconv.Itoa(i),
			InvocationID: "inv-" + strconv.Itoa(i/4), Author: author(i), Timestamp: time.Now()}
		ev.Actions.StateDelta = delta
		return h.s.AppendEvent(ctx, sess, ev)
	}, nil
}

func (h adkhostStore) get(ctx context.Context, id string) (int, error) {
	s, err := h.s.Get(ctx, &session.GetRequest{AppName: app, UserID: user, SessionID: id})
	if err != nil {
		return 0, err
	}
	return len(s.Events()), nil
}

type adkgoStore struct{ s adkgosession.Service }

func (g adkgoStore) create(ctx context.Context, id string) (appender, error) {
	r, err := g.s.Create(ctx, &adkgosession.CreateRequest{AppName: app, UserID: user, SessionID: id})
	if err != nil {
		return nil, err
	}
	sess := r.Session
	return func(ctx context.Context, i int) error {
		c, delta := content(i)
		ev := adkgosession.NewEvent(ctx, "inv-"+strconv.Itoa(i/4))
		ev.Author = author(i)
		ev.Content = c
		if delta != nil {
			ev.Actions.StateDelta = delta
		}
		return g.s.AppendEvent(ctx, sess, ev)
	}, nil
}

func (g adkgoStore) get(ctx context.Context, id string) (int, error) {
	r, err := g.s.Get(ctx, &adkgosession.GetRequest{AppName: app, UserID: user, SessionID: id})
	if err != nil {
		return 0, err
	}
	return r.Session.Events().Len(), nil
}
