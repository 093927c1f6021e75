// An adk-js FunctionTool with a zod schema, unchanged but for the import
// (context_test.go: TestZodParameters builds it with zod from --path).

import { FunctionTool } from "adkhost";
import { z } from "zod";

export const getWeather = new FunctionTool({
  name: "get_weather",
  description: "Returns the forecast for a city.",
  parameters: z.object({
    city: z.string().describe("the city"),
    days: z.number().int().min(1).max(3).default(1),
  }),
  execute: ({ city, days }) => ({ city, days }),
});
