// Tools that use every host function through the ToolContext
// (context_test.go runs them in an engine turn).

import { capabilities, HostError, log, State, tool, type ToolContext } from "adkhost";

capabilities("state", "actions", "artifacts", "memory", "config", "http");

const none = { type: "object" as const, properties: {} };

tool({
  name: "context_tour",
  description: "Touches state, artifacts, memory, config and the invocation info.",
  parameters: { type: "object", properties: { note: { type: "string" } }, required: ["note"] },
}, async ({ note }: { note: string }, ctx: ToolContext) => {
  const st = ctx.state;
  st.set("note", note);
  st.set(State.TEMP_PREFIX + "scratch", [1, 2]);
  const out: Record<string, unknown> = {
    read_back: st.get("note"), has_note: st.has("note"), missing: st.get("nope", "default"),
  };
  try {
    st.set("user:name", "Ada");
  } catch (e) {
    out.user_write = e instanceof HostError ? `${e.message} [${e.status}]` : String(e);
  }
  st.delete("temp:scratch");
  out.deleted = st.get("temp:scratch", "gone");
  const version = await ctx.saveArtifact("notes.txt", { text: note });
  const part = await ctx.loadArtifact("notes.txt");
  out.artifact = {
    version, text: part?.text, names: await ctx.listArtifacts(),
    absent: (await ctx.loadArtifact("nope.txt")) ?? null,
  };
  const mem = await ctx.searchMemory("tea");
  out.memories = mem.memories.length;
  out.greeting = ctx.getConfig("greeting");
  out.no_config = ctx.getConfig("nope") ?? null;
  out.ids = [ctx.functionCallId, ctx.agentName, ctx.userId];
  out.user_text = ctx.userContent?.parts?.[0]?.text;
  ctx.log("tour done", "warn");
  log("module-level log");
  console.log("console", { n: 1 });
  return out;
});

tool({ name: "finish", description: "Asks to skip summarization.", parameters: none },
  (_args, ctx) => {
    ctx.actions.skipSummarization = true;
    return "done";
  });

tool({
  name: "needs_ok",
  description: "Asks the user to confirm, then answers with the confirmation.",
  parameters: { type: "object", properties: { amount: { type: "integer" } } },
}, ({ amount }: { amount: number }, ctx: ToolContext) => {
  if (!ctx.toolConfirmation) {
    ctx.requestConfirmation({ hint: `pay ${amount}?`, payload: { amount } });
    return { error: "This tool call requires confirmation, please approve or reject." };
  }
  return { confirmed: ctx.toolConfirmation.confirmed };
});

tool({ name: "fails", description: "Throws.", parameters: none }, () => {
  throw new TypeError("no such thing");
});

tool({
  name: "fetch_it",
  description: "An HTTP GET through the host.",
  parameters: { type: "object", properties: { url: { type: "string" } } },
}, async ({ url }: { url: string }, ctx: ToolContext) => {
  const r = await ctx.http({ url, headers: { "X-Probe": "ts" } });
  const denied = await ctx.http({ url: "https://not-granted.example/" }).then(() => "allowed", (e) => (e as Error).message);
  return { status: r.status, body: r.json(), header: r.headers["Content-Type"], denied };
});

function depth(n: number): number {
  return n === 0 ? 0 : 1 + depth(n - 1);
}

tool({
  name: "limits",
  description: "What the sandbox does not have, and what it bounds.",
  parameters: none,
}, async () => {
  let recursion = "no error";
  try {
    depth(1e6);
  } catch (e) {
    recursion = String(e);
  }
  const g = globalThis as Record<string, unknown>;
  // Promises chain without an event loop.
  const chained = await Promise.resolve(1).then((x) => x + 1).then((x) => x * 10);
  return {
    recursion, chained,
    node: ["require", "process", "setTimeout", "fetch", "Buffer"].filter((k) => typeof g[k] !== "undefined"),
    random: Math.random(),
  };
});

tool({
  name: "never",
  description: "Awaits a promise nothing resolves.",
  parameters: none,
}, () => new Promise(() => {}));

tool({ name: "bigint", description: "Answers what JSON cannot encode." }, async () => ({ n: 1n }));

tool({ name: "hog", description: "Allocates without bound." }, () => {
  const a: string[] = [];
  for (let i = 0; ; i++) a.push("x".repeat(1 << 16) + i);
});
