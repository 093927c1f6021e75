package host_test

import (
	"context"
	"fmt"
	"log"
	"log/slog"
	"os"
	"time"

	"google.golang.org/genai"

	"github.com/adkhost/adkhost/callbacks"
	"github.com/adkhost/adkhost/engine"
	"github.com/adkhost/adkhost/engine/model/gemini"
	"github.com/adkhost/adkhost/engine/session"
	"github.com/adkhost/adkhost/host"
	"github.com/adkhost/adkhost/sandbox"
)

// Load a module for one app and give its tools and callbacks to an agent,
// and its plugin hooks to the runner. weather.wasm is any module speaking
// ABI v1 (abi/ABI.md).
func Example() {
	ctx := context.Background()
	rt, err := sandbox.New(ctx, sandbox.Config{CacheDir: "/var/cache/adkhost/wasm"})
	if err != nil {
		log.Fatal(err)
	}
	defer rt.Close(ctx)

	wasm, err := os.ReadFile("weather.wasm")
	if err != nil {
		log.Fatal(err)
	}
	m, err := host.Load(ctx, rt, wasm, host.ModuleConfig{
		Owner:  "weather_app",
		Limits: sandbox.Limits{Timeout: 2 * time.Second},
		Grants: sandbox.Grants{State: true, Actions: true, Config: map[string]string{"units": "metric"}},
		Logger: slog.Default(),
	})
	if err != nil {
		log.Fatal(err) // e.g. the module asks for a capability not granted
	}
	llm, err := gemini.New(ctx, gemini.Config{Model: "gemini-2.5-flash"})
	if err != nil {
		log.Fatal(err)
	}
	cb := m.Callbacks() // one func for each hook the module implements
	agent, err := engine.NewLlmAgent(engine.LlmAgentConfig{
		Name:        "root",
		Model:       llm,
		Instruction: "Answer questions about the weather.",
		Tools:       m.Tools(),
		BeforeModel: cb.BeforeModel,
		AfterTool:   cb.AfterTool,
	})
	if err != nil {
		log.Fatal(err)
	}
	runner, err := engine.NewRunner(engine.RunnerConfig{
		AppName:           "weather_app",
		Agent:             agent,
		Sessions:          session.NewInMemoryService(),
		Plugins:           []callbacks.Plugin{m.Plugin()},
		AutoCreateSession: true,
	})
	if err != nil {
		log.Fatal(err)
	}
	msg := &genai.Content{Role: "user", Parts: []*genai.Part{{Text: "Weather in Paris?"}}}
	for ev, err := range runner.Run(ctx, "u1", "s1", msg, engine.RunConfig{}) {
		if err != nil {
			log.Fatal(err) // a guest's failure names the module and hook: *host.Error
		}
		fmt.Println(ev.Author, ev.Content)
	}
}
