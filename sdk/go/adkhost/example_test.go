//go:build !wasip1

package adkhost_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/adkhost/adkhost/abi"
	"github.com/adkhost/adkhost/sdk/go/adkhost"
)

type WeatherArgs struct {
	City string `json:"city" jsonschema:"the city, e.g. Paris"`
	Days int    `json:"days,omitempty" jsonschema:"days to forecast; 1 if absent"`
}

type Weather struct {
	City string  `json:"city"`
	Sky  string  `json:"sky"`
	High float64 `json:"highC"`
}

// A guest registers in init functions of its main package; importing the
// SDK provides the exports.
func Example() {
	// func init() {
	adkhost.Module("weather", "1.0.0", abi.CapState, abi.CapActions)
	adkhost.Tool("get_weather", "Returns the weather of a city.",
		func(ctx adkhost.ToolContext, args WeatherArgs) (*Weather, error) {
			if args.City == "" {
				return nil, errors.New("which city?")
			}
			var visits int
			if err := ctx.State().Get("user:visits", &visits); err != nil && !errors.Is(err, abi.StatusNotFound) {
				return nil, err
			}
			if err := ctx.State().Set("user:visits", visits+1); err != nil {
				return nil, err
			}
			return &Weather{City: args.City, Sky: "clear", High: 21}, nil
		})
	adkhost.BeforeModel(func(ctx adkhost.CallbackContext, req *abi.LlmRequest) (*abi.LlmResponse, error) {
		if req.Config == nil {
			req.Config = &abi.GenerateContentConfig{}
		}
		t := 0.2
		req.Config.Temperature = &t // edited in place: the model gets this request
		return nil, nil
	})
	// }
}

// stateHost serves state from a map; abi.UnavailableHost answers the rest.
type stateHost struct {
	abi.UnavailableHost
	state map[string]json.RawMessage
}

func (h *stateHost) StateGet(_ context.Context, key string) (json.RawMessage, error) {
	v, ok := h.state[key]
	if !ok {
		return nil, abi.StatusNotFound
	}
	return v, nil
}

func (h *stateHost) StateSet(_ context.Context, key string, v json.RawMessage) error {
	h.state[key] = v
	return nil
}

// On the development machine, Handle runs a hook as the export would, and
// UseHost serves the host functions with any abi.Host.
func ExampleHandle() {
	host := &stateHost{state: map[string]json.RawMessage{}}
	defer adkhost.UseHost(host)()

	in, _ := abi.Encode(&abi.ToolCallInput{Tool: "get_weather", Args: map[string]any{"city": "Paris"}})
	out := adkhost.Handle(abi.HookToolCall, in)
	fmt.Println(string(out), string(host.state["user:visits"]))
}
