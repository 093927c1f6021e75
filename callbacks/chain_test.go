package callbacks_test

import (
	"errors"
	"slices"
	"testing"

	"github.com/adkhost/adkhost/callbacks"
)

// recPlugin records its name when its BeforeTool runs and returns result.
type recPlugin struct {
	callbacks.NoopPlugin
	name   string
	result map[string]any
	err    error
	log    *[]string
}

func (p recPlugin) Name() string { return p.name }

func (p recPlugin) BeforeTool(callbacks.ToolContext, callbacks.Tool, map[string]any) (map[string]any, error) {
	*p.log = append(*p.log, p.name)
	return p.result, p.err
}

func agentCB(name string, result map[string]any, log *[]string) callbacks.BeforeTool {
	return func(callbacks.ToolContext, callbacks.Tool, map[string]any) (map[string]any, error) {
		*log = append(*log, name)
		return result, nil
	}
}

func TestBeforeToolChainRule(t *testing.T) {
	hit := map[string]any{"from": "x"}
	empty := map[string]any{}
	for _, tc := range []struct {
		name      string
		plugins   []map[string]any
		agent     []map[string]any
		wantLog   []string
		wantValue map[string]any
	}{
		{"nothing answers: all run, plugins first", []map[string]any{nil, nil}, []map[string]any{nil, nil}, []string{"p0", "p1", "a0", "a1"}, nil},
		{"first plugin answer stops everything", []map[string]any{hit, hit}, []map[string]any{hit}, []string{"p0"}, hit},
		{"second plugin answers, agent callbacks skipped", []map[string]any{nil, hit}, []map[string]any{hit}, []string{"p0", "p1"}, hit},
		{"agent list stops at its first answer", nil, []map[string]any{nil, hit, hit}, []string{"a0", "a1"}, hit},
		{"an empty map is an answer (not None)", []map[string]any{empty}, []map[string]any{hit}, []string{"p0"}, empty},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var log []string
			var ps callbacks.Plugins
			for i, r := range tc.plugins {
				ps = append(ps, recPlugin{name: "p" + string(rune('0'+i)), result: r, log: &log})
			}
			var fns []callbacks.BeforeTool
			for i, r := range tc.agent {
				fns = append(fns, agentCB("a"+string(rune('0'+i)), r, &log))
			}
			got, err := callbacks.BeforeToolChain(nil, ps, fns, nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(log, tc.wantLog) {
				t.Fatalf("ran %v, want %v", log, tc.wantLog)
			}
			if (got == nil) != (tc.wantValue == nil) || len(got) != len(tc.wantValue) {
				t.Fatalf("result %v, want %v", got, tc.wantValue)
			}
		})
	}
}

func TestPluginErrorIsWrappedAndStopsTheChain(t *testing.T) {
	var log []string
	boom := errors.New("boom")
	ps := callbacks.Plugins{recPlugin{name: "guard", err: boom, log: &log}, recPlugin{name: "never", log: &log}}
	_, err := callbacks.BeforeToolChain(nil, ps, []callbacks.BeforeTool{agentCB("agent", nil, &log)}, nil, nil)
	var pe *callbacks.PluginError
	if !errors.As(err, &pe) || !errors.Is(err, boom) {
		t.Fatalf("err = %v, want a PluginError wrapping boom", err)
	}
	if want := "Error in plugin 'guard' during 'before_tool_callback' callback: boom"; err.Error() != want {
		t.Fatalf("message = %q, want %q", err.Error(), want)
	}
	// google-adk's plugin manager raises it as a RuntimeError.
	if code := pe.ErrorCode(); code != "RuntimeError" {
		t.Errorf("ErrorCode = %q, want RuntimeError", code)
	}
	if !slices.Equal(log, []string{"guard"}) {
		t.Fatalf("ran %v after the failing plugin", log)
	}
}
