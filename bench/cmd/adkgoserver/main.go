// Command adkgoserver serves the peer benchmark's app with adk-go v2's REST
// server (google.golang.org/adk/v2/server/adkrest, the API of `adk
// api_server`): one LlmAgent, a scripted model that answers a user message
// with a get_weather function call and the function response with text, one
// Go function tool, in-memory sessions. bench/cmd/peers starts it as a
// process of its own, so its CPU time is measured apart from the load.
package main

import (
	"context"
	"flag"
	"fmt"
	"iter"
	"net"
	"net/http"
	"os"

	"google.golang.org/genai"

	"google.golang.org/adk/v2/agent"
	"google.golang.org/adk/v2/agent/llmagent"
	"google.golang.org/adk/v2/artifact"
	"google.golang.org/adk/v2/memory"
	"google.golang.org/adk/v2/model"
	"google.golang.org/adk/v2/server/adkrest"
	"google.golang.org/adk/v2/session"
	"google.golang.org/adk/v2/tool"
	"google.golang.org/adk/v2/tool/functiontool"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:0", "listen address; the chosen one is printed as `listening on ADDR`")
	flag.Parse()
	if err := run(*addr); err != nil {
		fmt.Fprintln(os.Stderr, "adkgoserver:", err)
		os.Exit(1)
	}
}

// scripted answers by the request's last content, so it keeps no state and
// serves any number of concurrent sessions: a function response gets the
// final text, anything else the function call.
type scripted struct{}

func (scripted) Name() string { return "scripted" }

func (scripted) GenerateContent(_ context.Context, req *model.LLMRequest, _ bool) iter.Seq2[*model.LLMResponse, error] {
	return func(yield func(*model.LLMResponse, error) bool) {
		var c *genai.Content
		if last := req.Contents[len(req.Contents)-1]; len(last.Parts) > 0 && last.Parts[0].FunctionResponse != nil {
			c = genai.NewContentFromText("It is sunny in Paris.", genai.RoleModel)
		} else {
			c = genai.NewContentFromFunctionCall("get_weather", map[string]any{"city": "Paris"}, genai.RoleModel)
		}
		yield(&model.LLMResponse{Content: c, TurnComplete: true}, nil)
	}
}

type weatherArgs struct {
	City string `json:"city" jsonschema:"the city"`
}

func run(addr string) error {
	getWeather, err := functiontool.New(functiontool.Config{
		Name: "get_weather", Description: "Returns the weather forecast of a city.",
	}, func(_ agent.Context, a weatherArgs) (map[string]any, error) {
		return map[string]any{"city": a.City, "condition": "sunny", "temperatureC": 21}, nil
	})
	if err != nil {
		return err
	}
	a, err := llmagent.New(llmagent.Config{
		Name: "weather_assistant", Description: "Answers weather questions.", Model: scripted{},
		Instruction: "Call get_weather for the city they ask about.", Tools: []tool.Tool{getWeather},
	})
	if err != nil {
		return err
	}
	srv, err := adkrest.NewServer(adkrest.ServerConfig{
		SessionService: session.InMemoryService(), MemoryService: memory.InMemoryService(),
		ArtifactService: artifact.InMemoryService(), AgentLoader: agent.NewSingleLoader(a),
	})
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	fmt.Printf("listening on %s\n", ln.Addr())
	return http.Serve(ln, srv)
}
