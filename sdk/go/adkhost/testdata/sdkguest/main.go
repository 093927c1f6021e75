// Command sdkguest is the SDK's end-to-end test guest: every hook and host
// function, through the SDK, run in the real sandbox by e2e_test.go.
package main

import (
	"errors"
	"fmt"
	"log/slog"
	"strings"

	"github.com/adkhost/adkhost/abi"
	"github.com/adkhost/adkhost/sdk/go/adkhost"
	"github.com/adkhost/adkhost/sdk/go/adkhost/adkslog"
)

func main() {}

type tourResult struct {
	Set, Get, Missing, MissingIsNotFound, Delete, AfterDelete string
	Transfer, Escalate, Skip, Confirm                         string
	Saved                                                     int
	Loaded                                                    string
	List                                                      []string
	Config, ConfigMissing                                     string
	Invocation                                                string
	ContextMatches                                            bool
	BadKey                                                    string
}

func status(err error) string {
	if err == nil {
		return "OK"
	}
	var he *adkhost.HostError
	if errors.As(err, &he) {
		return he.Status.String()
	}
	return err.Error()
}

type countArgs struct {
	N     int64    `json:"n" jsonschema:"a number"`
	Tags  []string `json:"tags,omitempty"`
	Inner *struct {
		Flag bool `json:"flag"`
	} `json:"inner,omitempty"`
}

type pending struct {
	Ticket string `json:"ticket"`
}

func init() {
	adkhost.Module("sdkguest", "0.1.0", abi.CapState, abi.CapActions, abi.CapArtifacts)
	adkhost.Require(abi.CapConfig, abi.CapMemory)

	adkhost.Tool("recall", "Searches memory, adds the session, searches again.", func(ctx adkhost.ToolContext, args struct {
		Query string `json:"query"`
	}) (map[string]any, error) {
		before, err := ctx.Memory().Search(args.Query)
		if err != nil {
			return map[string]any{"search": status(err)}, nil
		}
		return map[string]any{"before": before, "add": status(ctx.Memory().AddSession())}, nil
	})

	adkhost.Tool("host_tour", "Calls every host function.", func(ctx adkhost.ToolContext, _ struct{}) (tourResult, error) {
		var r tourResult
		st := ctx.State()
		r.Set = status(st.Set("temp:count", 41))
		var n int
		if err := st.Get("temp:count", &n); err != nil {
			r.Get = status(err)
		} else {
			r.Get = fmt.Sprint(n + 1)
		}
		err := st.Get("missing", &n)
		r.Missing = status(err)
		r.MissingIsNotFound = fmt.Sprint(errors.Is(err, abi.StatusNotFound))
		r.BadKey = status(st.Set("app:", 1))
		r.Delete = status(st.Delete("user:gone"))
		raw, _ := st.GetRaw("user:gone")
		r.AfterDelete = string(raw)
		a := ctx.Actions()
		r.Transfer = status(a.TransferToAgent("helper"))
		r.Escalate = status(a.Escalate())
		r.Skip = status(a.SkipSummarization())
		r.Confirm = status(ctx.RequestConfirmation("spend 3 credits?", map[string]int{"credits": 3}))
		v, err := ctx.Artifacts().Save("notes.txt", &abi.Part{Text: "saved text"})
		if err != nil {
			return r, err
		}
		r.Saved = v
		p, err := ctx.Artifacts().Load("notes.txt", adkhost.LatestVersion)
		if err != nil {
			return r, err
		}
		r.Loaded = p.Text
		if r.List, err = ctx.Artifacts().List(); err != nil {
			return r, err
		}
		r.Config, _ = adkhost.Config("greeting")
		_, err = adkhost.Config("absent")
		r.ConfigMissing = status(err)
		info, err := adkhost.Invocation()
		if err != nil {
			return r, err
		}
		r.Invocation = info.InvocationID
		r.ContextMatches = info.InvocationID == ctx.Invocation.InvocationID && ctx.FunctionCallID() == "call-1"
		adkhost.Log(slog.LevelInfo, "hello from the guest")
		adkslog.Logger().With("tool", ctx.Tool.Name).Warn("structured", "n", 2)
		return r, nil
	})

	adkhost.Tool("count", "Adds one to n.", func(ctx adkhost.ToolContext, args countArgs) (map[string]any, error) {
		return map[string]any{"n": args.N + 1, "tags": len(args.Tags), "inner": args.Inner != nil && args.Inner.Flag}, nil
	})
	adkhost.Tool("fail", "Fails.", func(adkhost.ToolContext, struct{}) (any, error) {
		return nil, errors.New("it failed")
	})
	adkhost.Tool("boom", "Panics.", func(adkhost.ToolContext, struct{}) (any, error) {
		var m map[string]int
		m["x"] = 1 // nil map write: a runtime panic, recovered
		return nil, nil
	})
	adkhost.Tool("scalar", "Returns a number.", func(adkhost.ToolContext, map[string]any) (int, error) {
		return 42, nil
	})
	adkhost.Tool("later", "Answers later.", func(adkhost.ToolContext, struct{}) (*pending, error) {
		return nil, nil
	}, adkhost.LongRunning())
	adkhost.Tool("confirm", "Needs a confirmation.", func(ctx adkhost.ToolContext, _ struct{}) (map[string]any, error) {
		if ctx.Confirmation == nil {
			if err := ctx.RequestConfirmation("sure?", nil); err != nil {
				return nil, err
			}
			return map[string]any{"status": "awaiting confirmation"}, nil
		}
		return map[string]any{"confirmed": ctx.Confirmation.Confirmed}, nil
	})

	adkhost.BeforeAgent(func(ctx adkhost.CallbackContext) (*abi.Content, error) {
		if ctx.Invocation.AgentName == "skipped" {
			return text("model", "skipped by before_agent"), nil
		}
		return nil, nil
	})
	adkhost.AfterAgent(func(ctx adkhost.CallbackContext) (*abi.Content, error) {
		return nil, ctx.State().Set("temp:after_agent", true)
	})
	adkhost.BeforeModel(func(ctx adkhost.CallbackContext, req *abi.LlmRequest) (*abi.LlmResponse, error) {
		if req.Model == "canned" {
			return &abi.LlmResponse{Content: text("model", "canned answer")}, nil
		}
		req.Model = strings.ToUpper(req.Model)
		return nil, ctx.Actions().TransferToAgent("specialist")
	})
	adkhost.AfterModel(func(_ adkhost.CallbackContext, resp *abi.LlmResponse) (*abi.LlmResponse, error) {
		if resp.Content != nil && len(resp.Content.Parts) > 0 {
			resp.Content.Parts[0].Text += " [checked]"
		}
		return nil, nil
	})
	adkhost.OnModelError(func(_ adkhost.CallbackContext, _ *abi.LlmRequest, err error) (*abi.LlmResponse, error) {
		return &abi.LlmResponse{Content: text("model", "fallback: "+err.Error())}, nil
	})
	adkhost.BeforeTool(func(ctx adkhost.ToolContext, args map[string]any) (map[string]any, error) {
		switch ctx.Tool.Name {
		case "blocked":
			return map[string]any{}, nil // skip the tool: its result is {}
		case "double":
			args["x"] = args["x"].(float64) * 2
		}
		return nil, nil
	})
	adkhost.AfterTool(func(ctx adkhost.ToolContext, args, result map[string]any) (map[string]any, error) {
		result["seen"] = ctx.Tool.Name
		return nil, nil
	})
	adkhost.OnToolError(func(_ adkhost.ToolContext, _ map[string]any, err error) (map[string]any, error) {
		return map[string]any{"recovered": err.Error()}, nil
	})
	adkhost.OnUserMessage(func(_ adkhost.CallbackContext, msg *abi.Content) (*abi.Content, error) {
		for _, p := range msg.Parts {
			p.Text = strings.ToUpper(p.Text)
		}
		return nil, nil
	})
	adkhost.BeforeRun(func(adkhost.CallbackContext) (*abi.Content, error) { return nil, nil })
	adkhost.OnEvent(func(_ adkhost.CallbackContext, ev *abi.Event) (*abi.Event, error) {
		if ev.CustomMetadata == nil {
			ev.CustomMetadata = map[string]any{}
		}
		ev.CustomMetadata["plugin"] = "sdkguest"
		return nil, nil
	})
	adkhost.AfterRun(func(ctx adkhost.CallbackContext) error {
		if ctx.Invocation.InvocationID == "fail" {
			return errors.New("after_run refused")
		}
		return nil
	})
	// The notifications log what they are told; a panic is only reported.
	adkhost.OnAgentError(func(ctx adkhost.CallbackContext, err error) {
		adkhost.Log(slog.LevelWarn, "agent "+ctx.Invocation.AgentName+" failed: "+err.Error())
	})
	adkhost.OnRunError(func(ctx adkhost.CallbackContext, err error) {
		if err.Error() == "panic" {
			panic("told to panic")
		}
		adkhost.Log(slog.LevelWarn, "run "+ctx.Invocation.InvocationID+" failed: "+err.Error())
	})
}

func text(role, s string) *abi.Content {
	return &abi.Content{Role: role, Parts: []*abi.Part{{Text: s}}}
}
