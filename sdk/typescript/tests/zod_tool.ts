// An adk-js FunctionTool with a zod schema, unchanged: "@google/adk"
// resolves to the SDK (context_test.go: TestZodParameters builds it with
// zod from --path).

import { FunctionTool, LongRunningFunctionTool } from "@google/adk";
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

export const approve = new LongRunningFunctionTool({
  name: "approve",
  description: "Asks a person to approve.",
  parameters: z.object({ amount: z.number() }),
  execute: ({ amount }) => ({ status: "pending", amount }),
});
