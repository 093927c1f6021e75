package main

import (
	"strings"
	"testing"
)

func TestReport(t *testing.T) {
	in := strings.Join([]string{
		`{"Action":"run","Package":"p/a","Test":"TestOK"}`,
		`{"Action":"output","Package":"p/a","Test":"TestOK","Output":"=== RUN   TestOK\n"}`,
		`{"Action":"pass","Package":"p/a","Test":"TestOK"}`,
		`{"Action":"run","Package":"p/a","Test":"TestRust"}`,
		`{"Action":"output","Package":"p/a","Test":"TestRust","Output":"=== RUN   TestRust\n"}`,
		`{"Action":"output","Package":"p/a","Test":"TestRust","Output":"    rust_test.go:12: rustc missing: run install-deps.sh\n"}`,
		`{"Action":"output","Package":"p/a","Test":"TestRust","Output":"--- SKIP: TestRust (0.00s)\n"}`,
		`{"Action":"skip","Package":"p/a","Test":"TestRust"}`,
		`{"Action":"output","Package":"p/a","Output":"ok  \tp/a\t0.1s\n"}`,
		`{"Action":"pass","Package":"p/a"}`,
		`{"Action":"run","Package":"p/b","Test":"TestBad"}`,
		`{"Action":"output","Package":"p/b","Test":"TestBad","Output":"--- FAIL: TestBad\n    b_test.go:3: boom\n"}`,
		`{"Action":"fail","Package":"p/b","Test":"TestBad"}`,
		`{"Action":"output","Package":"p/b","Output":"FAIL\tp/b\t0.2s\n"}`,
		`{"Action":"fail","Package":"p/b"}`,
		`# p/c`,
	}, "\n")
	var sb strings.Builder
	failed, err := report(strings.NewReader(in), &sb)
	if err != nil || !failed {
		t.Fatalf("failed=%v err=%v, want a failure reported", failed, err)
	}
	got := sb.String()
	for _, want := range []string{
		"ok  \tp/a\t0.1s\n",
		"--- FAIL: TestBad\n    b_test.go:3: boom\n",
		"FAIL\tp/b\t0.2s\n",
		"# p/c\n",
		"skipped tests (1), and why:\n  p/a TestRust: rustc missing: run install-deps.sh (rust_test.go:12)\n",
		"tests: 1 passed, 1 failed, 1 skipped\n",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("output lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "=== RUN   TestOK") {
		t.Errorf("a passing test's output was printed:\n%s", got)
	}
}
