// Command weather is an example adkhost guest written with the Go SDK: a
// get_weather tool and a before_model callback. Build it from the
// repository root with
//
//	GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -o weather.wasm ./sdk/go/examples/weather
//
// It asks for the state capability, so the embedder must grant it.
package main

import (
	"errors"
	"fmt"
	"strings"

	"github.com/adkhost/adkhost/abi"
	"github.com/adkhost/adkhost/sdk/go/adkhost"
)

// A c-shared guest never runs main: the host calls _initialize, which runs
// the init functions, then the exports.
func main() {}

func init() {
	adkhost.Module("weather", "1.0.0", abi.CapState)
	adkhost.Tool("get_weather", "Returns the weather forecast of a city.", getWeather)
	adkhost.BeforeModel(addUnits)
}

// WeatherArgs are get_weather's arguments; the model sees the JSON Schema
// derived from this type. Days is optional (omitempty).
type WeatherArgs struct {
	City string `json:"city" jsonschema:"the city, e.g. Paris"`
	Days int    `json:"days,omitempty" jsonschema:"how many days to forecast, 1 to 3; 1 if absent"`
}

// Forecast is get_weather's result: a JSON object, so it is the function
// response as is.
type Forecast struct {
	City string `json:"city"`
	Days []Day  `json:"days"`
}

// Day is the forecast of one day.
type Day struct {
	Summary string  `json:"summary"`
	HighC   float64 `json:"highC"`
}

func getWeather(ctx adkhost.ToolContext, args WeatherArgs) (*Forecast, error) {
	city := strings.TrimSpace(args.City)
	days := max(args.Days, 1)
	if days > 3 {
		// An error fails the call; the model sees its message.
		return nil, fmt.Errorf("at most 3 days, not %d", days)
	}
	f := &Forecast{City: city}
	for i := range days {
		f.Days = append(f.Days, Day{Summary: "sunny", HighC: 21 + float64(i)})
	}
	// Remember the city for the user's later sessions. The write lands in
	// the state delta of the function response event.
	if err := ctx.State().Set("user:last_city", city); err != nil {
		return nil, err
	}
	return f, nil
}

// addUnits tells the model which units the user prefers, from state. It
// edits the request in place and returns nil: the model is called, with
// the changed request.
func addUnits(ctx adkhost.CallbackContext, req *abi.LlmRequest) (*abi.LlmResponse, error) {
	units := "metric"
	if err := ctx.State().Get("user:units", &units); err != nil && !errors.Is(err, abi.StatusNotFound) {
		return nil, err
	}
	if req.Config == nil {
		req.Config = &abi.GenerateContentConfig{}
	}
	if req.Config.SystemInstruction == nil {
		req.Config.SystemInstruction = &abi.Content{}
	}
	si := req.Config.SystemInstruction
	si.Parts = append(si.Parts, &abi.Part{Text: "Give temperatures in " + units + " units."})
	return nil, nil
}
