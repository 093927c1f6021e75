package ctest_test

// Tests of the C SDK's JSON reader and writer (adkhost.h). testdata/probe.c,
// built for wasm32-wasi as plugins/examples/Makefile builds the C example,
// says what the SDK reads from a tool_call input; FuzzJSON checks that
// against encoding/json on the same bytes, through the real sandbox (a
// trap fails it). TestNativeFuzz runs testdata/fuzz.c, a libFuzzer target
// built natively with AddressSanitizer, for reads out of bounds. Without
// clang and wasi-libc the tests skip, except under CI=true, where they fail.

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/adkhost/adkhost/abi"
	"github.com/adkhost/adkhost/sandbox"
	"github.com/adkhost/adkhost/sdk/go/adkhost/adkhosttest"
)

func missing(t testing.TB, why string) {
	t.Helper()
	if os.Getenv("CI") == "true" {
		t.Fatalf("CI=true and %s", why)
	}
	t.Skipf("%s (skipping; CI=true makes this a failure)", why)
}

// buildWasm builds a C guest against the SDK with clang and wasi-libc.
func buildWasm(t testing.TB, src string) []byte {
	t.Helper()
	if _, err := exec.LookPath("clang"); err != nil {
		missing(t, "no clang (plugins/examples/install-deps.sh installs clang, lld and wasi-libc)")
	}
	out := filepath.Join(t.TempDir(), "guest.wasm")
	args := []string{"--target=wasm32-wasi", "-mexec-model=reactor", "-O2", "-Wall", "-Wextra", "-Werror"}
	for _, sysroot := range []string{"/usr/share/wasi-sysroot", "/opt/wasi-sdk/share/wasi-sysroot"} {
		if _, err := os.Stat(sysroot); err == nil {
			args = append(args, "--sysroot="+sysroot)
			break
		}
	}
	args = append(args, "-I..", "-o", out, src, "../adkhost.c")
	if msg, err := exec.Command("clang", args...).CombinedOutput(); err != nil {
		if strings.Contains(string(msg), "wasm-ld") || strings.Contains(string(msg), "stdlib.h") {
			missing(t, fmt.Sprintf("clang cannot build for wasm32-wasi (install lld and wasi-libc): %s", msg))
		}
		t.Fatalf("clang %v: %v\n%s", args, err, msg)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

type probe struct {
	pool *sandbox.Pool
	host *adkhosttest.Host
}

var (
	probeOnce sync.Once
	probeP    *probe
	probeErr  error
)

// probePool loads testdata/probe.c once per process.
func probePool(t testing.TB) *probe {
	wasm := buildWasm(t, "testdata/probe.c")
	probeOnce.Do(func() {
		ctx := context.Background()
		r, err := sandbox.New(ctx, sandbox.Config{CacheDir: filepath.Join(os.TempDir(), "adkhost-sdk-c-test-cache")})
		if err != nil {
			probeErr = err
			return
		}
		m, err := r.Load(ctx, wasm)
		if err != nil {
			probeErr = err
			return
		}
		p, err := r.Pool(ctx, m, sandbox.PoolConfig{Owner: "app", Limits: sandbox.Limits{MaxInstances: 1}})
		if err != nil {
			probeErr = err
			return
		}
		probeP = &probe{pool: p, host: &adkhosttest.Host{}}
	})
	if probeErr != nil {
		t.Fatal(probeErr)
	}
	return probeP
}

type probeMember struct {
	Key  string
	Get  json.RawMessage
	Eq   bool
	Type int
	S    *string
	I    *int64
	F    json.RawMessage
	B    *bool
	Len  *int
}

type probeOut struct {
	Result *struct {
		Valid   bool
		Args    int
		Members []probeMember
		Iter    int
	}
	Error string
}

// JSON types as adkhost.h numbers them.
const (
	typeNull = 1 + iota
	typeBool
	typeNumber
	typeString
	typeArray
	typeObject
)

func typeOf(raw []byte) int {
	switch raw[0] {
	case 'n':
		return typeNull
	case 't', 'f':
		return typeBool
	case '"':
		return typeString
	case '[':
		return typeArray
	case '{':
		return typeObject
	}
	return typeNumber
}

// depth is the deepest nesting of a valid JSON text.
func depth(b []byte) int {
	d, most, in, esc := 0, 0, false, false
	for _, c := range b {
		switch {
		case in && esc:
			esc = false
		case in && c == '\\':
			esc = true
		case in && c == '"':
			in = false
		case in:
		case c == '"':
			in = true
		case c == '{' || c == '[':
			d++
			most = max(most, d)
		case c == '}' || c == ']':
			d--
		}
	}
	return most
}

type member struct {
	key string
	raw json.RawMessage
}

// members returns an object's or array's entries in order, duplicates
// included, as encoding/json reads them.
func members(t *testing.T, raw []byte) []member {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(raw))
	tok, err := dec.Token()
	if err != nil {
		t.Fatal(err)
	}
	var out []member
	for dec.More() {
		var m member
		if tok == json.Delim('{') {
			k, err := dec.Token()
			if err != nil {
				t.Fatal(err)
			}
			m.key = k.(string)
		}
		if err := dec.Decode(&m.raw); err != nil {
			t.Fatal(err)
		}
		out = append(out, m)
	}
	return out
}

const prefix = `{"abiVersion":1,"context":{"appName":"a","functionCallId":"c"},"tool":"probe","args":`

// check sends prefix+args+"}" to the probe and compares what the SDK read
// with what encoding/json reads.
func check(t *testing.T, p *probe, args string) {
	t.Helper()
	msg := []byte(prefix + args + "}")
	raw, err := p.pool.Call(context.Background(), abi.HookToolCall, msg, p.host)
	if err != nil {
		t.Fatalf("args %q: the guest failed: %v", args, err)
	}
	var out probeOut
	if err := json.Unmarshal(raw, &out); err != nil || out.Result == nil {
		t.Fatalf("args %q: output %q: %v", args, raw, err)
	}
	r := out.Result
	// The depth limit counts inside the value read: the whole message for
	// adkhost_json_parse, each member of it for adkhost_tool_args.
	valid := json.Valid(msg)
	if r.Valid != (valid && depth(msg) <= 1024) {
		t.Fatalf("args %q: adkhost_json_parse valid=%v, encoding/json %v (depth %d)", args, r.Valid, valid, depth(msg))
	}
	if !valid || depth(msg) > 1025 {
		if r.Args != int(abi.StatusInvalidArgument) {
			t.Fatalf("args %q: malformed input, adkhost_tool_args = %d", args, r.Args)
		}
		return
	}
	var argsRaw json.RawMessage
	for _, m := range members(t, msg) {
		if m.key == "args" {
			argsRaw = m.raw
		}
	}
	if argsRaw == nil || string(argsRaw) == "null" {
		argsRaw = json.RawMessage("{}")
	}
	if argsRaw[0] != '{' {
		if r.Args != int(abi.StatusInvalidArgument) {
			t.Fatalf("args %q: not an object, adkhost_tool_args = %d", args, r.Args)
		}
		return
	}
	if r.Args != 0 || r.Iter != 0 {
		t.Fatalf("args %q: adkhost_tool_args = %d, iteration %d", args, r.Args, r.Iter)
	}
	want := members(t, argsRaw)
	if len(r.Members) != len(want) {
		t.Fatalf("args %q: %d members, encoding/json %d", args, len(r.Members), len(want))
	}
	last := map[string]json.RawMessage{}
	for _, m := range want {
		last[m.key] = m.raw
	}
	for i, w := range want {
		g := r.Members[i]
		if g.Key != w.key || !g.Eq {
			t.Fatalf("args %q: member %d key %q (eq %v), encoding/json %q", args, i, g.Key, g.Eq, w.key)
		}
		if !bytes.Equal(g.Get, last[w.key]) {
			t.Fatalf("args %q: get %q = %s, encoding/json %s", args, w.key, g.Get, last[w.key])
		}
		if g.Type != typeOf(w.raw) {
			t.Fatalf("args %q: %s has type %d, want %d", args, w.raw, g.Type, typeOf(w.raw))
		}
		var s string
		if err := json.Unmarshal(w.raw, &s); err == nil && g.Type == typeString {
			if g.S == nil || *g.S != s {
				t.Fatalf("args %q: string %s reads as %v, encoding/json %q", args, w.raw, g.S, s)
			}
		}
		if g.Type == typeNull {
			continue
		}
		var n int64
		if err := json.Unmarshal(w.raw, &n); (err == nil) != (g.I != nil) || (g.I != nil && *g.I != n) {
			t.Fatalf("args %q: int of %s: %v, encoding/json %d (%v)", args, w.raw, g.I, n, err)
		}
		var f float64
		err := json.Unmarshal(w.raw, &f)
		if len(w.raw) <= 400 && (err == nil) != (g.F != nil) {
			t.Fatalf("args %q: number of %s: %s, encoding/json %v (%v)", args, w.raw, g.F, f, err)
		}
		if g.F != nil {
			// Read back as the same double, and written as Go writes it.
			var back float64
			goText, _ := json.Marshal(f)
			if json.Unmarshal(g.F, &back) != nil || math.Float64bits(back) != math.Float64bits(f) || !bytes.Equal(g.F, goText) {
				t.Fatalf("args %q: number %s written as %s, Go writes %s", args, w.raw, g.F, goText)
			}
		}
		var b bool
		if err := json.Unmarshal(w.raw, &b); (err == nil) != (g.B != nil) || (g.B != nil && *g.B != b) {
			t.Fatalf("args %q: bool of %s: %v, encoding/json %v (%v)", args, w.raw, g.B, b, err)
		}
		if g.Type == typeArray || g.Type == typeObject {
			if n := len(members(t, w.raw)); g.Len == nil || *g.Len != n {
				t.Fatalf("args %q: %s has %v entries, encoding/json %d", args, w.raw, g.Len, n)
			}
		}
	}
}

var seeds = []string{
	`{"city":"Paris","days":3}`,
	`{}`, `null`, `[]`, `"x"`, `1`, ``, `{`, `{"a":}`, `{"a":1,}`, `{"a" 1}`, `{"a":1 "b":2}`,
	`{"city":"S\u00e3o Paulo","q":"\"quoted\" \\ back\/slash \b\f\n\r\t"}`,
	`{"e":"\ud83d\ude00","lone":"\ud800","low":"\udc00x","pair2":"\ud800\ud800\udc00","bad":"\ud800\u0041"}`,
	"{\"raw\":\"caf\xc3\xa9 \xff \xe2\x82 \xed\xa0\x80 \xf4\x90\x80\x80 \xc0\xaf\"}",
	`{"ctl":"a` + "\x01" + `b"}`, `{"esc":"\x"}`, `{"u":"\u12"}`, `{"u":"\u12G4"}`,
	`{"a":1,"a":2,"b":{"a":3},"\u0061":4}`,
	`{"n":[0,-0,1.5,-2.25e-3,1e400,12345678901234567890,-9223372036854775808,9223372036854775807,9223372036854775808]}`,
	`{"i":-9223372036854775808,"j":9223372036854775807,"k":9223372036854775808,"l":-0,"m":1.0,"n":1e2,"o":01,"p":-,"q":1.,"r":.5,"s":1e}`,
	`{"f1":0.1,"f2":1e21,"f3":1e-7,"f4":123456789012345680000,"f5":5e-324,"f6":1.7976931348623157e308,"f7":-0.0,"f8":2.5,"f9":1e20,"f10":0.000001,"f11":1.5e-7,"f12":100,"f13":9007199254740993,"f14":3.141592653589793,"f15":2.2250738585072014e-308,"f16":1e-10,"f17":123.456}`,
	`{"t":true,"f":false,"z":null,"tr":tru,"nu":nul}`,
	`{"deep":[[[[[[[[[[{"a":[{"b":null}]}]]]]]]]]]]}`,
	` { "sp" : [ 1 , 2 ] , "o" : { } } `,
	strings.Repeat("[", 1025) + strings.Repeat("]", 1025),
	`{"d":` + strings.Repeat("[", 1023) + strings.Repeat("]", 1023) + `}`,
	`{"long":"` + strings.Repeat("abcdefgh", 40) + `\n` + strings.Repeat("é", 30) + `"}`,
	`{"a":1}, "args": {"b":2}`, `{"a":1}, "args": null`, `{"a":1}, "args": 5`, `{"a":1}} trailing`,
}

func FuzzJSON(f *testing.F) {
	p := probePool(f)
	for _, s := range seeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, args string) { check(t, p, args) })
}

// TestNativeFuzz runs testdata/fuzz.c with libFuzzer and AddressSanitizer
// (clang's compiler-rt), a fixed number of runs from a fixed seed.
func TestNativeFuzz(t *testing.T) {
	if testing.Short() {
		t.Skip("-short")
	}
	if _, err := exec.LookPath("clang"); err != nil {
		missing(t, "no clang")
	}
	bin := filepath.Join(t.TempDir(), "fuzz")
	args := []string{"-g", "-O1", "-fsanitize=fuzzer,address,undefined", "-fno-sanitize-recover=undefined",
		"-Wall", "-Wextra", "-Werror", "-Wno-unknown-attributes", "-I..", "-o", bin, "testdata/fuzz.c", "../adkhost.c", "-lm"}
	if msg, err := exec.Command("clang", args...).CombinedOutput(); err != nil {
		if strings.Contains(string(msg), "libclang_rt.fuzzer") || strings.Contains(string(msg), "fsanitize") {
			missing(t, fmt.Sprintf("clang has no libFuzzer (Debian: libclang-rt-dev): %s", msg))
		}
		t.Fatalf("clang %v: %v\n%s", args, err, msg)
	}
	corpus := t.TempDir()
	for i, s := range seeds {
		if err := os.WriteFile(filepath.Join(corpus, fmt.Sprint(i)), []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command(bin, "-runs=100000", "-seed=1", "-max_len=2048", "-artifact_prefix="+t.TempDir()+"/", corpus)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("libFuzzer found a failure: %v\n%s", err, tail(out, 4000))
	}
}

func tail(b []byte, n int) []byte {
	if len(b) > n {
		return b[len(b)-n:]
	}
	return b
}
