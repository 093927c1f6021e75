// The runtime side of a module: what it provides (tools, callbacks,
// plugins, capabilities, collected while the bundle is evaluated at build
// time), the describe message, and the dispatcher the JavaScript runtime
// (runtime/main.c) calls for every hook. The dispatcher never throws: an
// exception becomes the hook's "error" (ABI.md §6).

import * as h from "./host.js";
import {
  Context, InvocationContext, toolContext, type BaseTool, type Content, type Event, type InvocationInfo, type LlmRequest,
  type LlmResponse,
} from "./context.js";

type Msg = Record<string, any>;
type Out = Record<string, unknown> | undefined;

/** Agent hooks, by adk-js's names and ABI.md's. */
export const AGENT_HOOKS = {
  beforeAgent: "before_agent", afterAgent: "after_agent",
  beforeModel: "before_model", afterModel: "after_model", onModelError: "on_model_error",
  beforeTool: "before_tool", afterTool: "after_tool", onToolError: "on_tool_error",
} as const;
export type AgentHook = keyof typeof AGENT_HOOKS | (typeof AGENT_HOOKS)[keyof typeof AGENT_HOOKS];

type R<T> = T | undefined | void | Promise<T | undefined | void>;
// What each callback receives: the context itself for the agent hooks,
// one object for the others, as adk-js's LlmAgent calls them.
interface CallbackArgs {
  beforeAgent: Context;
  afterAgent: Context;
  beforeModel: { context: Context; request: LlmRequest };
  afterModel: { context: Context; response: LlmResponse };
  onModelError: { context: Context; request: LlmRequest; error: Error };
  beforeTool: { tool: BaseTool; args: Msg; context: Context };
  afterTool: { tool: BaseTool; args: Msg; context: Context; response: unknown };
  onToolError: { tool: BaseTool; args: Msg; context: Context; error: Error };
}
type CamelOf<H extends AgentHook> = H extends keyof typeof AGENT_HOOKS ? H
  : { [K in keyof typeof AGENT_HOOKS]: (typeof AGENT_HOOKS)[K] extends H ? K : never }[keyof typeof AGENT_HOOKS];
type CallbackResult = {
  beforeAgent: Content; afterAgent: Content; beforeModel: LlmResponse; afterModel: LlmResponse; onModelError: LlmResponse;
  beforeTool: Msg; afterTool: Msg; onToolError: Msg;
};
/** An agent callback, called as adk-js's LlmAgent calls it. */
export type Callback<H extends AgentHook> = (args: CallbackArgs[CamelOf<H>]) => R<CallbackResult[CamelOf<H>]>;

/**
 * adk-js's BasePlugin: override the *Callback methods the plugin needs;
 * each becomes one of the module's hooks. Each method gets one object, as
 * adk-js calls plugins.
 */
export class BasePlugin {
  readonly name: string;
  constructor(name: string) {
    this.name = name;
  }
  onUserMessageCallback(_: { invocationContext: InvocationContext; userMessage: Content }): R<Content> { return undefined; }
  beforeRunCallback(_: { invocationContext: InvocationContext }): R<Content> { return undefined; }
  onEventCallback(_: { invocationContext: InvocationContext; event: Event }): R<Event> { return undefined; }
  afterRunCallback(_: { invocationContext: InvocationContext }): R<void> { return undefined; }
  onRunErrorCallback(_: { invocationContext: InvocationContext; error: Error }): R<void> { return undefined; }
  beforeAgentCallback(_: { agent: { name?: string }; callbackContext: Context }): R<Content> { return undefined; }
  afterAgentCallback(_: { agent: { name?: string }; callbackContext: Context }): R<Content> { return undefined; }
  onAgentErrorCallback(_: { agent: { name?: string }; callbackContext: Context; error: Error }): R<void> { return undefined; }
  beforeModelCallback(_: { callbackContext: Context; llmRequest: LlmRequest }): R<LlmResponse> { return undefined; }
  afterModelCallback(_: { callbackContext: Context; llmResponse: LlmResponse }): R<LlmResponse> { return undefined; }
  onModelErrorCallback(_: { callbackContext: Context; llmRequest: LlmRequest; error: Error }): R<LlmResponse> { return undefined; }
  beforeToolCallback(_: { tool: BaseTool; toolArgs: Msg; toolContext: Context }): R<Msg> { return undefined; }
  afterToolCallback(_: { tool: BaseTool; toolArgs: Msg; toolContext: Context; result: unknown }): R<Msg> { return undefined; }
  onToolErrorCallback(_: { tool: BaseTool; toolArgs: Msg; toolContext: Context; error: Error }): R<Msg> { return undefined; }
}

const PLUGIN_METHODS: Record<string, string> = {
  onUserMessageCallback: "on_user_message", beforeRunCallback: "before_run", onEventCallback: "on_event",
  afterRunCallback: "after_run", onRunErrorCallback: "on_run_error",
  beforeAgentCallback: "before_agent", afterAgentCallback: "after_agent", onAgentErrorCallback: "on_agent_error",
  beforeModelCallback: "before_model", afterModelCallback: "after_model", onModelErrorCallback: "on_model_error",
  beforeToolCallback: "before_tool", afterToolCallback: "after_tool", onToolErrorCallback: "on_tool_error",
};
// The order of hooks in the describe message (ABI.md §1).
const HOOK_ORDER = ["before_agent", "after_agent", "before_model", "after_model", "on_model_error",
  "before_tool", "after_tool", "on_tool_error", "on_user_message", "before_run", "on_event", "after_run",
  "on_agent_error", "on_run_error"];

interface ToolLike {
  name: string;
  description: string;
  parameters?: Record<string, unknown>;
  isLongRunning: boolean;
  execute: (args: never, context: Context) => unknown;
}

type Handler = (msg: Msg) => unknown;

const NAME_RE = /^[A-Za-z_][A-Za-z0-9_.-]{0,63}$/;

function isThenable(v: unknown): v is PromiseLike<unknown> {
  return v !== null && (typeof v === "object" || typeof v === "function") && typeof (v as any).then === "function";
}

/** after applies f to v, or to what v resolves to. */
function after<T>(v: unknown, f: (x: any) => T): T | Promise<T> {
  return isThenable(v) ? Promise.resolve(v).then(f) : f(v);
}

function errorText(e: unknown): string {
  if (e instanceof Error) return e.message ? `${e.name}: ${e.message}` : e.name;
  return String(e);
}

// out is the JSON of an output message: fields, an object the SDK built
// for this output (never the user's), gets abiVersion last and is encoded
// as it is, not copied first.
function out(fields: Record<string, unknown>): string {
  fields.abiVersion = 1;
  return JSON.stringify(fields);
}

function fail(e: unknown): string {
  return out({ error: errorText(e) });
}

// done encodes a handler's output; a result JSON cannot encode (a BigInt,
// a cycle) fails the hook.
function done(o: unknown): string {
  try {
    return o === undefined ? "" : out(o as Record<string, unknown>);
  } catch (e) {
    return fail(e);
  }
}

class Runtime {
  name = "";
  version = "";
  private tools = new Map<string, ToolLike>();
  private toolOrder: ToolLike[] = [];
  private callbacks = new Map<string, Function>();
  private plugins: BasePlugin[] = [];
  private caps: string[] = [];
  private handlers = new Map<string, Handler>();
  private describe = "";
  private built = false;

  addTool(t: ToolLike): void {
    this.notBuilt("a tool");
    if (!NAME_RE.test(t.name)) {
      throw new Error(`tool name "${t.name}": a letter or _, then letters, digits, _ . - (64 at most)`);
    }
    if (this.tools.has(t.name)) throw new Error(`two tools named "${t.name}"`);
    if (t.parameters !== undefined) {
      const p = t.parameters;
      if (p === null || typeof p !== "object" || Array.isArray(p) || (p.type !== undefined && p.type !== "object")) {
        throw new Error(`tool ${t.name}: parameters must be a JSON Schema object ({type: "object", properties: ...})`);
      }
    }
    this.tools.set(t.name, t);
    this.toolOrder.push(t);
  }

  addCallback(hook: string, fn: Function): void {
    this.notBuilt("a callback");
    const abi = (AGENT_HOOKS as Record<string, string>)[hook] ?? hook;
    if (!Object.values(AGENT_HOOKS).includes(abi as never)) {
      throw new Error(`unknown callback "${hook}": one of ${Object.keys(AGENT_HOOKS).join(", ")}`);
    }
    if (typeof fn !== "function") throw new TypeError(`callback ${hook}: not a function`);
    if (this.callbacks.has(abi)) throw new Error(`a second ${hook} callback: a module has one function per hook`);
    this.callbacks.set(abi, fn);
  }

  addPlugin(p: BasePlugin): void {
    this.notBuilt("a plugin");
    if (!this.plugins.includes(p)) this.plugins.push(p);
  }

  addCapability(c: string): void {
    if (!this.caps.includes(c)) this.caps.push(c);
  }

  private notBuilt(what: string): void {
    if (this.built) throw new Error(`${what} declared after the module was built: declare everything at the top level of the module`);
  }

  /** init runs once, at build time, after the bundle is evaluated. */
  init(): void {
    const exported = (globalThis as any).__adkhostExports;
    if (exported && typeof exported === "object") {
      for (const v of Object.values(exported)) {
        if (v instanceof BasePlugin) this.addPlugin(v);
      }
    }
    const build = h.buildInfo();
    for (const c of build.capabilities) this.addCapability(c);
    const tools = this.toolOrder.map((t) => {
      const d: Record<string, unknown> = { name: t.name, description: t.description };
      if (t.parameters !== undefined) d.parameters = t.parameters;
      if (t.isLongRunning) d.longRunning = true;
      return d;
    });
    const hooks: string[] = [];
    if (tools.length > 0) {
      hooks.push("tool_call");
      this.handlers.set("tool_call", (m) => this.toolCall(m));
    }
    const impl = new Map<string, Handler[]>();
    const add = (hook: string, fn: Handler) => impl.set(hook, [...(impl.get(hook) ?? []), fn]);
    for (const [hook, fn] of this.callbacks) add(hook, callbackHandler(hook, fn));
    for (const p of this.plugins) {
      for (const [method, hook] of Object.entries(PLUGIN_METHODS)) {
        const m = (p as any)[method];
        if (typeof m === "function" && m !== (BasePlugin.prototype as any)[method]) {
          add(hook, pluginHandler(hook, m.bind(p)));
        }
      }
    }
    for (const hook of HOOK_ORDER) {
      const fns = impl.get(hook);
      if (!fns) continue;
      if (fns.length > 1) {
        throw new Error(`${hook} is implemented twice (a callback and a plugin, or two plugins): a module has one implementation per hook`);
      }
      hooks.push(hook);
      this.handlers.set(hook, fns[0]);
    }
    if (hooks.length === 0) {
      throw new Error("the module declares no tool, callback or plugin");
    }
    const name = this.name || build.name || "module";
    if (!NAME_RE.test(name)) throw new Error(`module name "${name}": a letter or _, then letters, digits, _ . - (64 at most)`);
    const desc: Record<string, unknown> = { abiVersion: 1, name, tools, hooks, capabilities: this.caps };
    if (this.version) desc.version = this.version;
    this.describe = JSON.stringify(desc);
    this.built = true;
  }

  /**
   * dispatch runs a hook. input is the message as the runtime parsed it,
   * or its JSON ("" for none).
   */
  dispatch(hook: string, input: string | Msg): string | Promise<string> {
    try {
      if (hook === "__init") {
        this.init();
        return "";
      }
      if (hook === "describe") return this.describe;
      const handler = this.handlers.get(hook);
      if (!handler) return out({ error: `this module does not implement ${hook}` });
      const r = handler(typeof input !== "string" ? input : input ? JSON.parse(input) : {});
      if (isThenable(r)) return Promise.resolve(r).then(done, fail);
      return done(r);
    } catch (e) {
      if (hook === "__init") throw e;
      return out({ error: errorText(e) });
    }
  }

  private toolCall(msg: Msg): unknown {
    const t = this.tools.get(msg.tool);
    if (!t) return { error: `no tool "${msg.tool}" in this module` };
    const ctx = new Context(msg.context as InvocationInfo, msg.confirmation);
    const args = (msg.args ?? {}) as never;
    return after(t.execute(args, ctx), toolResult);
  }

  /**
   * callTool is the runtime's tool entry (__adkhostToolCall): a tool
   * call's fields, its context as JSON text. It answers the tool's result,
   * or a promise of it, and throws the tool's exception or an Answer; the
   * runtime encodes the output (toolDone, toolFail for what it leaves).
   */
  callTool(name: unknown, args: unknown, context: string | undefined, confirmation: unknown): unknown {
    const t = this.tools.get(name as string);
    if (!t) {
      throw new Answer(out({
        error: this.tools.size ? `no tool "${name}" in this module` : "this module does not implement tool_call",
      }));
    }
    // The context's text stands for its InvocationInfo until read.
    const r = t.execute((args ?? {}) as never, toolContext(context, confirmation));
    // isThenable, inline: every call asks.
    return r !== null && (typeof r === "object" || typeof r === "function") && typeof (r as any).then === "function"
      ? Promise.resolve(r) : r;
  }
}

// An output callTool answers by throwing it: the tool is unknown.
class Answer {
  readonly output: string;
  constructor(output: string) {
    this.output = output;
  }
}

function toolResult(result: unknown): Out {
  return { result: result === undefined ? null : result };
}

function toolInfo(msg: Msg): BaseTool {
  const t = msg.tool ?? {};
  return { name: t.name, description: t.description ?? "", isLongRunning: Boolean(t.longRunning) };
}

function changed(before: string, v: unknown): boolean {
  return JSON.stringify(v) !== before;
}

function content(r: unknown): Out {
  return r == null ? undefined : { content: r };
}

function modelOut(r: unknown, req?: Msg, before?: string): Out {
  const o: Record<string, unknown> = {};
  if (r != null) o.response = r;
  if (req !== undefined && before !== undefined && changed(before, req)) o.request = req;
  return Object.keys(o).length ? o : undefined;
}

function toolOut(r: unknown, args?: Msg, before?: string): Out {
  const o: Record<string, unknown> = {};
  if (r != null) o.result = r;
  if (args !== undefined && before !== undefined && changed(before, args)) o.args = args;
  return Object.keys(o).length ? o : undefined;
}

function callbackHandler(hook: string, fn: Function): Handler {
  return (msg) => {
    // before_tool carries the user's confirmation of the call.
    const context = new Context(msg.context, msg.confirmation);
    switch (hook) {
      case "before_agent":
      case "after_agent":
        return after(fn(context), content);
      case "before_model": {
        const request = msg.request ?? {};
        const before = JSON.stringify(request);
        return after(fn({ context, request }), (r) => modelOut(r, request, before));
      }
      case "after_model":
        return after(fn({ context, response: msg.response ?? {} }), (r) => modelOut(r));
      case "on_model_error":
        return after(fn({ context, request: msg.request ?? {}, error: new Error(msg.error ?? "") }), (r) => modelOut(r));
    }
    const tool = toolInfo(msg);
    const args = msg.args ?? {};
    switch (hook) {
      case "before_tool": {
        const before = JSON.stringify(args);
        return after(fn({ tool, args, context }), (r) => toolOut(r, args, before));
      }
      case "after_tool":
        return after(fn({ tool, args, context, response: msg.result }), (r) => toolOut(r));
      default:
        return after(fn({ tool, args, context, error: new Error(msg.error ?? "") }), (r) => toolOut(r));
    }
  };
}

function pluginHandler(hook: string, m: Function): Handler {
  return (msg) => {
    const info = msg.context as InvocationInfo | undefined;
    switch (hook) {
      case "on_user_message":
        return after(m({ invocationContext: new InvocationContext(info), userMessage: msg.message ?? {} }),
          (r) => (r == null ? undefined : { message: r }));
      case "before_run":
        return after(m({ invocationContext: new InvocationContext(info) }), content);
      case "on_event":
        return after(m({ invocationContext: new InvocationContext(info), event: msg.event ?? {} }),
          (r) => (r == null ? undefined : { event: r }));
      case "after_run":
        return after(m({ invocationContext: new InvocationContext(info) }), () => undefined);
      case "on_run_error":
        return after(m({ invocationContext: new InvocationContext(info), error: new Error(msg.error ?? "") }), () => undefined);
    }
    const callbackContext = new Context(info, msg.confirmation);
    const agent = { name: info?.agentName };
    switch (hook) {
      case "before_agent":
      case "after_agent":
        return after(m({ agent, callbackContext }), content);
      case "on_agent_error":
        return after(m({ agent, callbackContext, error: new Error(msg.error ?? "") }), () => undefined);
      case "before_model": {
        const llmRequest = msg.request ?? {};
        const before = JSON.stringify(llmRequest);
        return after(m({ callbackContext, llmRequest }), (r) => modelOut(r, llmRequest, before));
      }
      case "after_model":
        return after(m({ callbackContext, llmResponse: msg.response ?? {} }), (r) => modelOut(r));
      case "on_model_error":
        return after(m({ callbackContext, llmRequest: msg.request ?? {}, error: new Error(msg.error ?? "") }), (r) => modelOut(r));
    }
    const tool = toolInfo(msg);
    const toolArgs = msg.args ?? {};
    switch (hook) {
      case "before_tool": {
        const before = JSON.stringify(toolArgs);
        return after(m({ tool, toolArgs, toolContext: callbackContext }), (r) => toolOut(r, toolArgs, before));
      }
      case "after_tool":
        return after(m({ tool, toolArgs, toolContext: callbackContext, result: msg.result }), (r) => toolOut(r));
      default:
        return after(m({ tool, toolArgs, toolContext: callbackContext, error: new Error(msg.error ?? "") }), (r) => toolOut(r));
    }
  };
}

export const runtime = new Runtime();

// One runtime per bundle: a second copy of the SDK (two versions bundled)
// would register tools nobody dispatches to.
const g = globalThis as any;
if (g.__adkhostDispatch !== undefined) {
  throw new Error("the adkhost SDK is bundled twice: depend on one copy of it");
}
g.__adkhostDispatch = (hook: string, input: string | Msg) => runtime.dispatch(hook, input);
g.__adkhostToolCall = runtime.callTool.bind(runtime);
// The output of a result the runtime does not encode itself (a toJSON, a
// getter, a BigInt, ...), and of a tool that threw.
g.__adkhostToolDone = (result: unknown) => done(toolResult(result));
g.__adkhostToolFail = (e: unknown) => (e instanceof Answer ? e.output : fail(e));

// console: log lines through the host (to the build's output while the
// module is built).
if (g.console === undefined) {
  const line = (level: string) => (...args: unknown[]) =>
    h.log(level, args.map((a) => (typeof a === "string" ? a : safeJSON(a))).join(" "));
  g.console = { log: line("info"), info: line("info"), warn: line("warn"), error: line("error"), debug: line("debug") };
}

function safeJSON(v: unknown): string {
  if (v instanceof Error) return String(v);
  try {
    const s = JSON.stringify(v);
    return s === undefined ? String(v) : s;
  } catch {
    return String(v);
  }
}
