package server_test

import (
	"net/http"
	"strings"
	"testing"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
)

func TestMetricsAndSpans(t *testing.T) {
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	h := newHarness(t, t.TempDir(), harnessOpts{tracer: tp})
	h.setupApp("wx", "v1", true)
	h.must(http.StatusOK)(h.do("POST", "/apps/wx/users/u/sessions", map[string]any{"sessionId": "s"}))
	h.must(http.StatusOK)(h.do("POST", "/run", runBody("wx", "u", "s", "Paris")))
	h.must(http.StatusInternalServerError)(h.do("POST", "/run", runBody("wx", "u", "s", "fail")))

	// Spans, named as google-adk names them, nested invocation >
	// invoke_agent > call_llm / execute_tool.
	spans := exp.GetSpans()
	byName := map[string][]tracetest.SpanStub{}
	for _, s := range spans {
		byName[s.Name] = append(byName[s.Name], s)
	}
	// Two runs: the tool turn (two model calls, one tool call) and the
	// failing one (one model call).
	if len(byName["invocation"]) != 2 || len(byName["invoke_agent wx_agent"]) != 2 ||
		len(byName["call_llm"]) != 3 || len(byName["execute_tool get_weather"]) != 1 {
		names := []string{}
		for _, s := range spans {
			names = append(names, s.Name)
		}
		t.Fatalf("spans: %v", names)
	}
	inv := byName["invocation"][0]
	agent := byName["invoke_agent wx_agent"][0]
	tool := byName["execute_tool get_weather"][0]
	if agent.Parent.SpanID() != inv.SpanContext.SpanID() || tool.Parent.SpanID() != agent.SpanContext.SpanID() {
		t.Fatalf("span nesting: invocation %s, agent parent %s (id %s), tool parent %s",
			inv.SpanContext.SpanID(), agent.Parent.SpanID(), agent.SpanContext.SpanID(), tool.Parent.SpanID())
	}
	agents := map[string]bool{}
	for _, s := range byName["invoke_agent wx_agent"] {
		agents[s.SpanContext.SpanID().String()] = true
	}
	for _, s := range byName["call_llm"] {
		if !agents[s.Parent.SpanID().String()] {
			t.Fatalf("call_llm parent %s, want an agent span", s.Parent.SpanID())
		}
	}
	if failed := byName["invocation"][1]; failed.Status.Code.String() != "Error" {
		t.Fatalf("failed invocation span status %v", failed.Status)
	}

	body := string(h.must(http.StatusOK)(h.do("GET", "/metrics", nil)))
	for _, want := range []string{
		`adkhost_invocations_total{app="wx",outcome="ok"} 1`,
		`adkhost_invocations_total{app="wx",outcome="error"} 1`,
		`adkhost_model_calls_total{app="wx"} 3`,
		`adkhost_tool_calls_total{app="wx",module="weather",outcome="ok",tool="get_weather"} 1`,
		`adkhost_wasm_call_duration_seconds_count{module="weather",tool="get_weather"} 1`,
		`adkhost_errors_total{app="wx",kind="model"} 1`,
		`adkhost_guest_memory_budget_bytes `,
		`adkhost_guest_memory_reserved_bytes 6.7108864e+07`, // the weather module's one instance, 1024 pages
		`adkhost_guest_instances 1`,
		`adkhost_guest_log_lines_dropped_total 0`,
		`go_goroutines`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("metrics lack %s", want)
		}
	}
	if t.Failed() {
		t.Log(body)
	}
}

// A deleted app's series stayed in /metrics for the process's life: a
// client registering and deleting apps under new names grew every scrape
// (and the server's memory) without end.
func TestMetricsOfDeletedAppDropped(t *testing.T) {
	h := newHarness(t, t.TempDir(), harnessOpts{})
	root := "name: echo\nmodel: scripted\ninstruction: Echo.\n"
	script := "rules:\n  - respond: {text: 'echo: {{text}}'}\n"
	for _, app := range []string{"gone1", "kept"} {
		h.must(http.StatusCreated)(h.putBundle(app, map[string]string{"root_agent.yaml": root, "scripted_model.yaml": script}))
		h.must(http.StatusOK)(h.do("POST", "/apps/"+app+"/users/u/sessions/s", map[string]any{}))
		h.must(http.StatusOK)(h.do("POST", "/run", runBody(app, "u", "s", "hi")))
	}
	body := string(h.must(http.StatusOK)(h.do("GET", "/metrics", nil)))
	if !strings.Contains(body, `adkhost_invocations_total{app="gone1",outcome="ok"} 1`) || !strings.Contains(body, `adkhost_invocation_duration_seconds_count{app="gone1"} 1`) {
		t.Fatalf("no series of app gone1 before its deletion:\n%s", body)
	}
	h.must(http.StatusNoContent)(h.admin("DELETE", "/apps/gone1", nil))
	body = string(h.must(http.StatusOK)(h.do("GET", "/metrics", nil)))
	if strings.Contains(body, `app="gone1"`) {
		t.Errorf("series of the deleted app gone1 remain:\n%s", body)
	}
	if !strings.Contains(body, `adkhost_invocations_total{app="kept",outcome="ok"} 1`) {
		t.Errorf("the series of app kept went too:\n%s", body)
	}
	// A name registered again counts afresh.
	h.must(http.StatusCreated)(h.putBundle("gone1", map[string]string{"root_agent.yaml": root, "scripted_model.yaml": script}))
	h.must(http.StatusOK)(h.do("POST", "/apps/gone1/users/u/sessions/s2", map[string]any{}))
	h.must(http.StatusOK)(h.do("POST", "/run", runBody("gone1", "u", "s2", "hi")))
	if body = string(h.must(http.StatusOK)(h.do("GET", "/metrics", nil))); !strings.Contains(body, `adkhost_invocations_total{app="gone1",outcome="ok"} 1`) {
		t.Errorf("the app registered again is not counted afresh:\n%s", body)
	}
}

// The Wasm call latency series are labelled by module, not app: they
// stayed after the last app using the module was deleted.
func TestMetricsOfUnusedModuleDropped(t *testing.T) {
	h := newHarness(t, t.TempDir(), harnessOpts{})
	h.setupApp("wx", "v1", true)
	h.must(http.StatusOK)(h.do("POST", "/apps/wx/users/u/sessions", map[string]any{"sessionId": "s"}))
	h.must(http.StatusOK)(h.do("POST", "/run", runBody("wx", "u", "s", "Paris")))
	series := `adkhost_wasm_call_duration_seconds_count{module="weather",tool="get_weather"} 1`
	if body := string(h.must(http.StatusOK)(h.do("GET", "/metrics", nil))); !strings.Contains(body, series) {
		t.Fatalf("metrics lack %s", series)
	}
	// Replaced by a version using the same module: the series stays.
	h.must(http.StatusOK)(h.putBundle("wx", appFiles("wx", "v2", true)))
	if body := string(h.must(http.StatusOK)(h.do("GET", "/metrics", nil))); !strings.Contains(body, series) {
		t.Errorf("replacing the app dropped the series of the module it still uses")
	}
	h.must(http.StatusNoContent)(h.admin("DELETE", "/apps/wx", nil))
	if body := string(h.must(http.StatusOK)(h.do("GET", "/metrics", nil))); strings.Contains(body, `module="weather"`) {
		t.Errorf("series of module weather remain after its last app was deleted")
	}
}
