package benchwasm

import "testing"

// tsWeather is the benchmark's get_weather in TypeScript, as its Go twin
// (getWeather) behaves.
const tsWeather = `import { capabilities, tool, type ToolContext } from "adkhost";

capabilities("state");

tool({
  name: "get_weather",
  description: "Returns the weather forecast of a city.",
  parameters: {
    type: "object",
    properties: { city: { type: "string" }, days: { type: "integer" } },
    required: ["city"],
  },
}, ({ city, days = 1 }: { city: string; days?: number }, ctx: ToolContext) => {
  city = city.trim();
  days = Math.max(days, 1);
  if (days > 3) throw new Error("at most 3 days, not " + days);
  ctx.state.set("user:last_city", city);
  return { city, days: Array.from({ length: days }, (_, i) => ({ summary: "sunny", highC: 21.0 + i })) };
});
`

// TestTypeScriptBench is the TypeScript row of make bench-wasm, measured as
// the Python row is (sourceRow). It needs the TypeScript runtime (make
// ts-runtime).
func TestTypeScriptBench(t *testing.T) {
	enabled(t)
	sourceRow(t, "typescript", "weather.ts", tsWeather)
}
