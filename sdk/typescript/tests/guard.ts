// Agent callbacks as adk-js passes them, one object each
// (context_test.go: TestCallbacksAndPlugin).

import { callback, capabilities } from "adkhost";

capabilities("state");

callback("beforeAgent", (context) => {
  context.log(`agent ${context.agentName} begins`);
});

callback("beforeModel", ({ context, request }) => {
  const last = request.contents?.[request.contents.length - 1];
  const text: string = last?.parts?.[0]?.text ?? "";
  if (text.includes("BLOCK")) {
    context.log(`blocked for agent ${context.agentName}`, "warn");
    return { content: { role: "model", parts: [{ text: "blocked by policy" }] } };
  }
  // A changed request goes to the model.
  request.config = { ...(request.config ?? {}), temperature: 0.25 };
  return undefined;
});

callback("after_tool", async ({ tool, response, context }) => {
  const n = context.state.get<number>("checked", 0)! + 1;
  context.state.set("checked", n);
  return { ...(response as Record<string, unknown>), checked_by: tool.name, n };
});
