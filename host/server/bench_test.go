//go:build unix

package server_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"mime/multipart"
	"net/http/httptest"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/adkhost/adkhost/host/server"
	"github.com/adkhost/adkhost/sandbox"
	"github.com/adkhost/adkhost/store/bolt"
	"github.com/adkhost/adkhost/store/mem"
)

// BenchmarkRunTurn measures the server's side of one turn of the run API
// (what `make bench-serve` loads over loopback), in process and on one
// goroutine so that allocs/op and CPU profiles show the per-turn path: the
// reactive scripted model calls the weather Wasm tool and answers from its
// response; a new session every 10 turns. Sub-benchmarks: the store (bbolt
// without fsync, which --store memory was before store/mem; store/mem) and the endpoint (/run, /run_sse).
func BenchmarkRunTurn(b *testing.B) {
	wasm := weatherWasm(b)
	bundle, ctype := benchBundle(b)
	for _, store := range []string{"bolt-nosync", "mem"} {
		for _, endpoint := range []string{"/run", "/run_sse"} {
			b.Run(fmt.Sprintf("store=%s/endpoint=%s", store, endpoint[1:]), func(b *testing.B) {
				ctx := context.Background()
				var stores server.Stores
				switch store {
				case "bolt-nosync":
					db, err := bolt.Open(filepath.Join(b.TempDir(), "adkhost.db"), bolt.Config{NoSync: true})
					if err != nil {
						b.Fatal(err)
					}
					b.Cleanup(func() { db.Close() })
					stores = server.Stores{Sessions: db.Sessions(), Artifacts: db.Artifacts(), Registry: db.Registry()}
				case "mem":
					m := mem.New()
					stores = server.Stores{Sessions: m.Sessions(), Artifacts: m.Artifacts(), Registry: m.Registry()}
				}
				rt, err := sandbox.New(ctx, sandbox.Config{CacheDir: cacheDir})
				if err != nil {
					b.Fatal(err)
				}
				b.Cleanup(func() { rt.Close(ctx) })
				srv, err := server.New(ctx, server.Config{Stores: stores, Runtime: rt, AdminToken: adminToken})
				if err != nil {
					b.Fatal(err)
				}
				b.Cleanup(func() { srv.Close() })
				h := srv.Handler()
				do := func(method, path, ctype string, body []byte, token string) []byte {
					req := httptest.NewRequest(method, path, bytes.NewReader(body))
					req.Header.Set("Content-Type", ctype)
					if token != "" {
						req.Header.Set("Authorization", "Bearer "+token)
					}
					w := httptest.NewRecorder()
					h.ServeHTTP(w, req)
					if w.Code >= 300 {
						b.Fatalf("%s %s: %d %s", method, path, w.Code, w.Body)
					}
					return w.Body.Bytes()
				}
				do("PUT", "/admin/v1/modules/weather", "application/wasm", wasm, adminToken)
				do("PUT", "/admin/v1/apps/bench", ctype, bundle, adminToken)
				sess := ""
				turn := func(n int) {
					if n%10 == 0 {
						sess = fmt.Sprintf("s%d", n/10)
						do("POST", "/apps/bench/users/u/sessions", "application/json", []byte(`{"sessionId":"`+sess+`"}`), "")
					}
					body := fmt.Appendf(nil, `{"appName":"bench","userId":"u","sessionId":%q,"newMessage":{"role":"user","parts":[{"text":"city %d"}]}}`, sess, n)
					out := do("POST", endpoint, "application/json", body, "")
					if !bytes.Contains(out, []byte("weather in")) {
						b.Fatalf("turn %d: no answer in %s", n, out)
					}
				}
				for n := range 20 { // warm the module's instances and the app
					turn(n)
				}
				b.ReportAllocs()
				b.ResetTimer()
				cpu0 := processCPU(b)
				for n := 20; n < b.N+20; n++ {
					turn(n)
				}
				// The process's CPU time (GC and the store's goroutines
				// included) per turn: less sensitive than ns/op to other
				// processes on a loaded machine.
				b.ReportMetric(float64((processCPU(b)-cpu0).Nanoseconds())/float64(b.N), "cpu-ns/op")
			})
		}
	}
}

// processCPU is the user and system CPU time of this process so far.
func processCPU(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// benchBundle is bench-serve's app: agent bench_agent on the reactive
// scripted model, which calls get_weather with the user's text and answers
// from its response.
func benchBundle(b *testing.B) ([]byte, string) {
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
			b.Fatal(err)
		}
		io.WriteString(w, content)
	}
	if err := mw.Close(); err != nil {
		b.Fatal(err)
	}
	return buf.Bytes(), mw.FormDataContentType()
}
