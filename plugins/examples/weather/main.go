// Command weather is an example adkhost tool written with the Go SDK
// (sdk/go/adkhost): get_weather(city) answers with made-up but
// deterministic weather (the same city always gets the same answer), so it
// needs no network and no capability. Its parameters schema is derived from
// the Args type. Build it from the repository root with
//
//	GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -o weather.wasm ./plugins/examples/weather
//
// (or `make examples`).
package main

import (
	"errors"
	"hash/fnv"
	"strings"

	"github.com/adkhost/adkhost/sdk/go/adkhost"
)

// A c-shared guest never runs main: the host calls _initialize, which runs
// the init functions, then the exports.
func main() {}

func init() {
	adkhost.Module("weather", "1.0.0")
	adkhost.Tool("get_weather", "Returns the current weather of a city (fake data: deterministic per city).", getWeather)
}

// Args are get_weather's arguments: the SDK derives the schema the model
// sees, {"type":"object","properties":{"city":{"type":"string",
// "description":…}},"required":["city"]}, from this type.
type Args struct {
	City string `json:"city" jsonschema:"the city, e.g. Paris"`
}

// Weather is the result: a JSON object, so it is the function response as is.
type Weather struct {
	City         string `json:"city"`
	Condition    string `json:"condition"`
	TemperatureC int    `json:"temperatureC"`
	HumidityPct  int    `json:"humidityPct"`
	WindKph      int    `json:"windKph"`
	Source       string `json:"source"`
}

var conditions = []string{"sunny", "partly cloudy", "cloudy", "light rain", "rain", "thunderstorms", "fog", "snow"}

func getWeather(_ adkhost.ToolContext, args Args) (*Weather, error) {
	city := strings.Join(strings.Fields(args.City), " ")
	if city == "" {
		// An error fails the call; the model sees the message.
		return nil, errors.New("city must not be empty")
	}
	// FNV-1a of the normalized name: stable across builds and platforms,
	// unlike Go's map or hash/maphash seeds.
	h := fnv.New32a()
	h.Write([]byte(strings.ToLower(city)))
	n := h.Sum32()
	return &Weather{
		City:         city,
		Condition:    conditions[n%uint32(len(conditions))],
		TemperatureC: int(n>>3%40) - 5,
		HumidityPct:  30 + int(n>>9%60),
		WindKph:      int(n >> 15 % 50),
		Source:       "fake",
	}, nil
}
