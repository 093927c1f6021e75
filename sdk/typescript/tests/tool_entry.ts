// Tools for TestToolEntry: the runtime's tool entry (runtime/main.c,
// tool_call) hands a tool call's context on as JSON text, parsed when the
// tool first reads it, and encodes the result itself.
import { tool, type ToolContext } from "adkhost";

tool({ name: "info", description: "Answers its context's fields and its arguments." }, (args: unknown, ctx: ToolContext) => {
  const first = ctx.userContent;
  return {
    context: {
      invocationId: ctx.invocationId, agentName: ctx.agentName, userId: ctx.userId, sessionId: ctx.sessionId,
      appName: ctx.appName, branch: ctx.branch, functionCallId: ctx.functionCallId, userContent: first,
    },
    // Parsed once: the second read is the same object.
    same: first === ctx.userContent,
    confirmation: ctx.toolConfirmation ?? null,
    args,
  };
});

tool({ name: "answer", description: "Answers a value of each kind the runtime encodes or leaves to JSON.stringify." },
  async ({ kind }: { kind: string }) => {
    switch (kind) {
      case "undefined": return undefined;
      case "string": return "é \u2028 😀 \"q\"";
      case "date": return { when: new Date(0) };
      case "tojson": return { toJSON: () => ({ replaced: true }) };
      case "function": return () => 1;
      case "bigint": return { n: 1n };
      case "cycle": { const o: Record<string, unknown> = {}; o.self = o; return o; }
      case "throw": throw new Error("boom");
      case "reject": return Promise.reject(new TypeError("rejected"));
      case "await": return await Promise.resolve([1, { x: null }]);
      case "never": return new Promise(() => {});
      default: return kind;
    }
  });

// A new class (a new prototype) and a cycle per call: the runtime keeps
// shapes freed by one call for the next, and must let them go.
tool({ name: "shapes", description: "Answers its arguments' keys and JSON." }, (args: Record<string, unknown>) => {
  class K {
    v: unknown;
    constructor(v: unknown) {
      this.v = v;
    }
  }
  const cyc: Record<string, unknown> = { args };
  cyc.self = cyc;
  const k = new K(args);
  return { keys: Object.keys(args), json: JSON.stringify(args), same: k.v === args, pad: "x".repeat(2000) };
});
