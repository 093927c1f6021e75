// An adk-js style function tool, built into a sandboxed module with
// `adkhost module build weather.ts` (plugins/examples/README.md): the body
// is what it would be under adk-js, a plain object result, state through
// the ToolContext, an exception for bad input.

import { capabilities, tool, type ToolContext } from "adkhost";

// The tool writes state: the app grants it (adkhost.modules.weather-ts.grants).
capabilities("state");

const FORECASTS: Record<string, [string, number]> = {
  paris: ["sunny", 7],
  tokyo: ["rainy", 18],
  rome: ["cloudy", 14],
};

interface Args {
  city: string;
  days?: number;
}

tool(
  {
    name: "get_weather",
    description: "Returns the forecast for a city.",
    parameters: {
      type: "object",
      properties: {
        city: { type: "string", description: "the city, e.g. Paris." },
        days: { type: "integer", description: "how many days ahead.", default: 1 },
      },
      required: ["city"],
    },
  },
  async ({ city, days = 1 }: Args, context: ToolContext) => {
    const name = city.trim();
    if (!name) {
      throw new Error("city must not be empty");
    }
    const [condition, temperatureC] = FORECASTS[name.toLowerCase()] ?? ["windy", 10];
    context.state.set("last_city", name);
    const previousCalls = context.state.get<number>("user:weather_calls", 0);
    return { city: name, condition, temperatureC, days, previous_calls: previousCalls };
  },
);
