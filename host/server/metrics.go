package server

import (
	"fmt"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/adkhost/adkhost/sandbox"
)

// metrics are the server's Prometheus collectors, registered on the
// server's own registry (never the package default, so two servers in one
// process, as in tests, do not collide).
type metrics struct {
	invocations   *prometheus.CounterVec   // app, outcome
	invocationDur *prometheus.HistogramVec // app
	inFlight      *prometheus.GaugeVec     // app
	modelCalls    *prometheus.CounterVec   // app
	toolCalls     *prometheus.CounterVec   // app, module, tool, outcome
	wasmCallDur   *prometheus.HistogramVec // module, tool
	errors        *prometheus.CounterVec   // app, kind
}

// guestCollectors report the sandbox's guest memory accounting: the
// budget, what live instances reserve of it, the instances, and the guest
// log lines the log limits dropped.
func guestCollectors(rt *sandbox.Runtime) []prometheus.Collector {
	stat := func(f func(sandbox.MemoryStats) float64) func() float64 {
		return func() float64 { return f(rt.MemoryStats()) }
	}
	return []prometheus.Collector{
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "adkhost_guest_memory_budget_bytes",
			Help: "The server-wide budget of guest memory (0: unlimited)."},
			stat(func(s sandbox.MemoryStats) float64 { return float64(s.Budget) })),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "adkhost_guest_memory_reserved_bytes",
			Help: "Guest memory reserved by live instances (each its pool's memory_pages)."},
			stat(func(s sandbox.MemoryStats) float64 { return float64(s.Reserved) })),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "adkhost_guest_instances",
			Help: "Live guest instances, busy and idle."},
			stat(func(s sandbox.MemoryStats) float64 { return float64(s.Instances) })),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "adkhost_guest_instances_idle",
			Help: "Idle guest instances (closed after the idle timeout)."},
			stat(func(s sandbox.MemoryStats) float64 { return float64(s.Idle) })),
		prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "adkhost_guest_log_lines_dropped_total",
			Help: "Guest log lines dropped by the log limits (per call and per module rate)."},
			stat(func(s sandbox.MemoryStats) float64 { return float64(s.LogDropped) })),
	}
}

func newMetrics(reg *prometheus.Registry, rt *sandbox.Runtime) (*metrics, error) {
	m := &metrics{
		invocations: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "adkhost_invocations_total", Help: "Runs (/run, /run_sse) by app and outcome (ok, error, canceled).",
		}, []string{"app", "outcome"}),
		invocationDur: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "adkhost_invocation_duration_seconds", Help: "Wall time of a run, by app.",
			Buckets: prometheus.ExponentialBuckets(0.001, 2, 16),
		}, []string{"app"}),
		inFlight: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "adkhost_invocations_in_flight", Help: "Runs under way, by app.",
		}, []string{"app"}),
		modelCalls: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "adkhost_model_calls_total", Help: "Model calls the agents made (before_model seen), by app.",
		}, []string{"app"}),
		toolCalls: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "adkhost_tool_calls_total", Help: `Tool calls by app, module ("" for a tool not from a Wasm module), tool and outcome (ok, error). Tools not from a module take at most 1000 tool values together, then "<other>".`,
		}, []string{"app", "module", "tool", "outcome"}),
		wasmCallDur: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "adkhost_wasm_call_duration_seconds", Help: "Wall time of Wasm tool calls (before_tool to after_tool), by module and tool.",
			Buckets: prometheus.ExponentialBuckets(0.0001, 2, 18),
		}, []string{"module", "tool"}),
		errors: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "adkhost_errors_total", Help: "Failures by app and kind (model, tool, agent, run).",
		}, []string{"app", "kind"}),
	}
	for _, c := range []prometheus.Collector{
		m.invocations, m.invocationDur, m.inFlight, m.modelCalls, m.toolCalls, m.wasmCallDur, m.errors,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
	} {
		if err := reg.Register(c); err != nil {
			return nil, fmt.Errorf("server: registering metrics: %w", err)
		}
	}
	for _, c := range guestCollectors(rt) {
		if err := reg.Register(c); err != nil {
			return nil, fmt.Errorf("server: registering metrics: %w", err)
		}
	}
	return m, nil
}

// forgetApp drops the series labelled with a deleted app: every name
// that was ever registered kept its series (and their histograms'
// buckets) in /metrics for the process's life.
func (m *metrics) forgetApp(name string) {
	app := prometheus.Labels{"app": name}
	m.invocations.DeletePartialMatch(app)
	m.invocationDur.DeletePartialMatch(app)
	m.inFlight.DeletePartialMatch(app)
	m.modelCalls.DeletePartialMatch(app)
	m.toolCalls.DeletePartialMatch(app)
	m.errors.DeletePartialMatch(app)
}

// forgetModule drops the Wasm call latency series of a module (by its
// describe name) that no app served uses any more.
func (m *metrics) forgetModule(name string) {
	m.wasmCallDur.DeletePartialMatch(prometheus.Labels{"module": name})
}
