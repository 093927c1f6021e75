// Command guest is appdef's test module "weather": two tools, a
// before_model hook (usable as an agent callback and as a plugin hook) and
// an on_user_message plugin hook. It asks for the state capability.
package main

import (
	"strings"

	"github.com/adkhost/adkhost/abi"
	"github.com/adkhost/adkhost/sdk/go/adkhost"
)

func main() {}

func init() {
	adkhost.Module("weather", "1.0.0", abi.CapState)
	adkhost.Tool("get_weather", "Returns the weather of a city.", getWeather)
	adkhost.Tool("get_time", "Returns the time in a city.", getTime)
	adkhost.BeforeModel(tagRequest)
	adkhost.OnUserMessage(countMessages)
}

type cityArgs struct {
	City string `json:"city" jsonschema:"the city"`
}

type forecast struct {
	City    string  `json:"city"`
	Summary string  `json:"summary"`
	HighC   float64 `json:"high_c"`
}

// getWeather answers a fixed forecast and remembers the city for the user,
// which needs WriteUserState.
func getWeather(ctx adkhost.ToolContext, args cityArgs) (*forecast, error) {
	city := strings.TrimSpace(args.City)
	if err := ctx.State().Set("user:last_city", city); err != nil {
		return nil, err
	}
	return &forecast{City: city, Summary: "sunny", HighC: 21}, nil
}

func getTime(ctx adkhost.ToolContext, args cityArgs) (map[string]any, error) {
	return map[string]any{"city": args.City, "time": "12:00"}, nil
}

// tagRequest adds a line to the system instruction, which a scripted
// model's rule can look for.
func tagRequest(ctx adkhost.CallbackContext, req *abi.LlmRequest) (*abi.LlmResponse, error) {
	if req.Config == nil {
		req.Config = &abi.GenerateContentConfig{}
	}
	if req.Config.SystemInstruction == nil {
		req.Config.SystemInstruction = &abi.Content{Role: "user"}
	}
	si := req.Config.SystemInstruction
	si.Parts = append(si.Parts, &abi.Part{Text: "[weather-guard]"})
	return nil, nil
}

// countMessages leaves user messages unchanged; it exists so that the
// module has a run-level plugin hook.
func countMessages(ctx adkhost.CallbackContext, msg *abi.Content) (*abi.Content, error) {
	return nil, nil
}
