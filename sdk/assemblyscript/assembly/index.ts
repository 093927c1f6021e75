// adkhost guest SDK for AssemblyScript: ABI v1 (abi/ABI.md), native
// transport. Register tools and callbacks at the top level of your entry
// file, and re-export the ABI's exports from it:
//
//   import { Context, Value, tool, afterTool } from "adkhost-as";
//   export * from "adkhost-as/assembly/exports";
//   tool("greet", "Greets someone.", `{"type":"object","properties":{"name":{"type":"string"}}}`, greet);
//   function greet(ctx: Context, args: Value): Value | null { ... }
//
// Build with `asc entry.ts --runtime incremental --use abort=~lib/adkhost-as/assembly/index/abort`
// (the flag replaces the env.abort import: a module may import only from
// adkhost and WASI). AssemblyScript has no exceptions: fail a hook with
// `return ctx.fail("message")`.

import { Value, Kind, base64Encode, base64Decode } from "./json";
export { Value, Kind, quote, parseError, base64Encode, base64Decode } from "./json";

/** Replaces AssemblyScript's env.abort import (see --use above): a trap. */
export function abort(message: string | null, file: string | null, line: u32, column: u32): void {
  unreachable();
}

// ---- host functions (ABI.md §4) ------------------------------------------

@external("adkhost", "state_get")
declare function _state_get(kp: usize, kl: usize, rp: usize, rl: usize): i32;
@external("adkhost", "state_set")
declare function _state_set(kp: usize, kl: usize, vp: usize, vl: usize): i32;
@external("adkhost", "state_delete")
declare function _state_delete(kp: usize, kl: usize): i32;
@external("adkhost", "transfer_to_agent")
declare function _transfer_to_agent(np: usize, nl: usize): i32;
@external("adkhost", "escalate")
declare function _escalate(): i32;
@external("adkhost", "skip_summarization")
declare function _skip_summarization(): i32;
@external("adkhost", "request_confirmation")
declare function _request_confirmation(hp: usize, hl: usize, pp: usize, pl: usize): i32;
@external("adkhost", "log")
declare function _log(level: i32, mp: usize, ml: usize): i32;
@external("adkhost", "invocation_info")
declare function _invocation_info(rp: usize, rl: usize): i32;
@external("adkhost", "config_get")
declare function _config_get(kp: usize, kl: usize, rp: usize, rl: usize): i32;
@external("adkhost", "artifact_load")
declare function _artifact_load(np: usize, nl: usize, version: i32, rp: usize, rl: usize): i32;
@external("adkhost", "artifact_save")
declare function _artifact_save(np: usize, nl: usize, pp: usize, pl: usize, rv: usize): i32;
@external("adkhost", "artifact_list")
declare function _artifact_list(rp: usize, rl: usize): i32;
@external("adkhost", "http_request")
declare function _http_request(qp: usize, ql: usize, rp: usize, rl: usize): i32;
@external("adkhost", "memory_search")
declare function _memory_search(qp: usize, ql: usize, rp: usize, rl: usize): i32;
@external("adkhost", "memory_add_session")
declare function _memory_add_session(): i32;

/** Status codes (ABI.md §10); an unknown non-zero code means FAILED. */
export namespace Status {
  export const OK: i32 = 0;
  export const NOT_FOUND: i32 = 1;
  export const INVALID_ARGUMENT: i32 = 2;
  export const DENIED: i32 = 3;
  export const UNAVAILABLE: i32 = 4;
  export const TOO_LARGE: i32 = 5;
  export const BAD_POINTER: i32 = 6;
  export const FAILED: i32 = 7;
  export const ALLOC_FAILED: i32 = 8;
}

// The two u32 slots where a host function writes its result's address and
// length: static, as calls never overlap.
const RET: usize = memory.data(8);
let status: i32 = 0;

/** The status of the last host function call made through this SDK. */
export function lastStatus(): i32 {
  return status;
}

// result takes the block the host allocated through adkhost_alloc: decodes
// it and frees it.
function result(): string {
  const p = <usize>load<u32>(RET);
  const n = <usize>load<u32>(RET, 4);
  if (n == 0) return "";
  const s = String.UTF8.decodeUnsafe(p, n);
  heap.free(p);
  return s;
}

function utf8(s: string): ArrayBuffer {
  return String.UTF8.encode(s);
}

/** Session state (capability "state"). */
export namespace state {
  /** The value of key; null if absent (lastStatus() NOT_FOUND) or on failure. */
  export function get(key: string): Value | null {
    const k = utf8(key);
    status = _state_get(changetype<usize>(k), k.byteLength, RET, RET + 4);
    if (status != Status.OK) return null;
    return Value.parse(result());
  }
  /** Records value for key in the state delta; returns the status. */
  export function set(key: string, value: Value): i32 {
    const k = utf8(key);
    const v = utf8(value.toJSON());
    return (status = _state_set(changetype<usize>(k), k.byteLength, changetype<usize>(v), v.byteLength));
  }
  /** Records null for key (google-adk's delta has no removal). */
  export function remove(key: string): i32 {
    const k = utf8(key);
    return (status = _state_delete(changetype<usize>(k), k.byteLength));
  }
}

/** Event actions (capability "actions"); each returns the status. */
export namespace actions {
  export function transferToAgent(name: string): i32 {
    const n = utf8(name);
    return (status = _transfer_to_agent(changetype<usize>(n), n.byteLength));
  }
  export function escalate(): i32 {
    return (status = _escalate());
  }
  export function skipSummarization(): i32 {
    return (status = _skip_summarization());
  }
  export function requestConfirmation(hint: string, payload: Value | null = null): i32 {
    const h = utf8(hint);
    const p = utf8(payload == null ? "" : payload.toJSON());
    return (status = _request_confirmation(changetype<usize>(h), h.byteLength, changetype<usize>(p), p.byteLength));
  }
}

/** Log lines (no capability needed); levels are slog's. */
export namespace logger {
  export const DEBUG: i32 = -4;
  export const INFO: i32 = 0;
  export const WARN: i32 = 4;
  export const ERROR: i32 = 8;
  export function log(level: i32, msg: string): void {
    const m = utf8(msg);
    status = _log(level, changetype<usize>(m), m.byteLength);
  }
  export function debug(msg: string): void { log(DEBUG, msg); }
  export function info(msg: string): void { log(INFO, msg); }
  export function warn(msg: string): void { log(WARN, msg); }
  export function error(msg: string): void { log(ERROR, msg); }
}

/** The InvocationInfo of the current call, or null (see lastStatus()). */
export function invocationInfo(): Value | null {
  status = _invocation_info(RET, RET + 4);
  return status == Status.OK ? Value.parse(result()) : null;
}

/** The granted config value of key (capability "config"), or null. */
export function configGet(key: string): string | null {
  const k = utf8(key);
  status = _config_get(changetype<usize>(k), k.byteLength, RET, RET + 4);
  return status == Status.OK ? result() : null;
}

// The version artifact_save wrote at RET (a little-endian i32, as wasm's).
function savedVersion(): i32 {
  return load<i32>(RET);
}

/** The session's artifacts (capability "artifacts"); a part is a JSON Part. */
export namespace artifacts {
  /** The version argument of load for the newest version. */
  export const LATEST: i32 = -1;
  /** The Part of a version of name; null if absent (lastStatus() NOT_FOUND) or on failure. */
  export function load(name: string, version: i32 = LATEST): Value | null {
    const n = utf8(name);
    status = _artifact_load(changetype<usize>(n), n.byteLength, version, RET, RET + 4);
    return status == Status.OK ? Value.parse(result()) : null;
  }
  /** Stores part as the next version of name; returns that version, or -1 (see lastStatus()). */
  export function save(name: string, part: Value): i32 {
    const n = utf8(name);
    const p = utf8(part.toJSON());
    status = _artifact_save(changetype<usize>(n), n.byteLength, changetype<usize>(p), p.byteLength, RET);
    return status == Status.OK ? savedVersion() : -1;
  }
  /** The names of the artifacts the session sees, or null (see lastStatus()). */
  export function list(): string[] | null {
    status = _artifact_list(RET, RET + 4);
    if (status != Status.OK) return null;
    const v = Value.parse(result());
    const names = new Array<string>();
    if (v == null || v.kind != Kind.Array) { status = Status.FAILED; return null; }
    for (let i = 0; i < v.items.length; i++) {
      if (v.items[i].kind != Kind.String) { status = Status.FAILED; return null; }
      names.push(v.items[i].str);
    }
    return names;
  }
}

/** A request for httpRequest: `new HttpRequest(url, "POST").header(…).text(…)`. */
export class HttpRequest {
  /** One value per name (join repeated values with ", "), string members. */
  headers: Value = Value.newObject();
  body: Uint8Array = new Uint8Array(0);
  constructor(public url: string, public method: string = "GET") {}
  header(name: string, value: string): HttpRequest {
    this.headers.set(name, Value.fromString(value));
    return this;
  }
  /** Sets the body to s in UTF-8. */
  text(s: string): HttpRequest {
    this.body = Uint8Array.wrap(String.UTF8.encode(s));
    return this;
  }
  /** The HTTPRequest message (ABI.md §4). */
  toValue(): Value {
    const r = Value.newObject().set("method", Value.fromString(this.method.length > 0 ? this.method : "GET"))
      .set("url", Value.fromString(this.url));
    if (this.headers.keys.length > 0) r.set("headers", this.headers);
    if (this.body.length > 0) r.set("body", Value.fromString(base64Encode(this.body)));
    return r;
  }
}

/** The answer to an HttpRequest, whatever its status (a 404 is a response). */
export class HttpResponse {
  status: i32 = 0;
  headers: Value = Value.newObject();
  body: Uint8Array = new Uint8Array(0);
  /** The value of a header, its name matched case-insensitively; null if absent. */
  header(name: string): string | null {
    const want = name.toLowerCase();
    for (let i = 0; i < this.headers.keys.length; i++) {
      if (this.headers.keys[i].toLowerCase() == want && this.headers.vals[i].kind == Kind.String) return this.headers.vals[i].str;
    }
    return null;
  }
  /** The body as UTF-8 text. */
  text(): string {
    return String.UTF8.decodeUnsafe(this.body.dataStart, <usize>this.body.length);
  }
}

/**
 * Performs req through the host (capability "http"), to the destinations
 * the embedder grants. null on failure: lastStatus() DENIED for a
 * destination outside the grant. WASI has no sockets: this is the only way out.
 */
export function httpRequest(req: HttpRequest): HttpResponse | null {
  const q = utf8(req.toValue().toJSON());
  status = _http_request(changetype<usize>(q), q.byteLength, RET, RET + 4);
  if (status != Status.OK) return null;
  const resp = parseResponse(Value.parse(result()));
  if (resp == null) status = Status.FAILED;
  return resp;
}

// parseResponse reads an HTTPResponse message; null if it is not one.
function parseResponse(v: Value | null): HttpResponse | null {
  if (v == null) return null;
  const st = v.get("status");
  if (st == null || st.kind != Kind.Number) return null;
  const resp = new HttpResponse();
  resp.status = <i32>st.asNumber();
  const h = v.get("headers");
  if (h != null && h.isObject) resp.headers = h;
  const b = v.getString("body");
  if (b != null) {
    const bytes = base64Decode(b);
    if (bytes == null) return null;
    resp.body = bytes;
  }
  return resp;
}

/** A MemoryEntry (ABI.md §4, google-adk's wire format) of searchMemory. */
export class MemoryEntry {
  /** The Content ({"role": …, "parts": […]}); null JSON if absent. */
  content: Value = Value.makeNull();
  /** custom_metadata, a free-form object (null JSON if absent). */
  customMetadata: Value = Value.makeNull();
  /** Each "" when absent; timestamp as google-adk's datetime.isoformat writes it. */
  id: string = "";
  author: string = "";
  timestamp: string = "";
  /** The text of the content's parts, concatenated. */
  text(): string {
    let t = "";
    const parts = this.content.get("parts");
    if (parts == null || parts.kind != Kind.Array) return t;
    for (let i = 0; i < parts.items.length; i++) {
      const s = parts.items[i].getString("text");
      if (s != null) t += s as string;
    }
    return t;
  }
  /** The MemoryEntry message, empty texts left out. */
  toValue(): Value {
    const r = Value.newObject().set("content", this.content)
      .set("custom_metadata", this.customMetadata.isNull ? Value.newObject() : this.customMetadata);
    if (this.id.length > 0) r.set("id", Value.fromString(this.id));
    if (this.author.length > 0) r.set("author", Value.fromString(this.author));
    if (this.timestamp.length > 0) r.set("timestamp", Value.fromString(this.timestamp));
    return r;
  }
}

/**
 * The user's memories across sessions matching query, best first (empty
 * when nothing matches; the query may be empty), as google-adk's
 * search_memory (capability "memory"). null on failure: lastStatus()
 * UNAVAILABLE without a memory service in the runner, or in the run-level
 * plugin hooks.
 */
export function searchMemory(query: string): MemoryEntry[] | null {
  const q = utf8(query);
  status = _memory_search(changetype<usize>(q), q.byteLength, RET, RET + 4);
  if (status != Status.OK) return null;
  const entries = parseMemories(Value.parse(result()));
  if (entries == null) status = Status.FAILED;
  return entries;
}

/**
 * Adds the current session to the memory service, as google-adk's
 * add_session_to_memory (capability "memory"); returns the status
 * (UNAVAILABLE without a memory service).
 */
export function addSessionToMemory(): i32 {
  return (status = _memory_add_session());
}

// memoryText reads an optional string member: "" if absent or null, null
// if it is something else.
function memoryText(v: Value, key: string): string | null {
  const m = v.get(key);
  if (m == null || m.isNull) return "";
  return m.kind == Kind.String ? m.str : null;
}

// parseMemories reads a SearchMemoryResponse; null if it is not one.
function parseMemories(v: Value | null): MemoryEntry[] | null {
  if (v == null) return null;
  const a = v.get("memories");
  if (a == null || a.kind != Kind.Array) return null;
  const entries = new Array<MemoryEntry>();
  for (let i = 0; i < a.items.length; i++) {
    const m = a.items[i];
    if (!m.isObject) return null;
    const e = new MemoryEntry();
    const c = m.get("content");
    if (c != null) e.content = c;
    const md = m.get("custom_metadata");
    if (md != null) e.customMetadata = md;
    const id = memoryText(m, "id"), author = memoryText(m, "author"), ts = memoryText(m, "timestamp");
    if (id == null || author == null || ts == null) return null;
    e.id = id as string;
    e.author = author as string;
    e.timestamp = ts as string;
    entries.push(e);
  }
  return entries;
}

// ---- registration ----------------------------------------------------------

/** What a hook knows about its call. */
export class Context {
  /** The input's "context" (InvocationInfo). */
  info: Value = Value.newObject();
  /** The whole input message, as sent. */
  input: Value = Value.newObject();
  /** The tool's name (tool_call and the tool hooks). */
  tool: string = "";
  /** The tool's arguments (tool_call and the tool hooks). */
  args: Value = Value.newObject();
  /** The error message of on_model_error, on_tool_error, on_agent_error, on_run_error. */
  error: string = "";
  /** tool_call: the user's answer to an earlier request_confirmation. */
  confirmation: Value | null = null;
  failure: string | null = null;

  /** Fails the hook with msg (as a google-adk callback that raises). */
  fail(msg: string): Value | null {
    this.failure = msg;
    return null;
  }

  private field(k: string): string {
    const s = this.info.getString(k);
    return s == null ? "" : s;
  }
  get appName(): string { return this.field("appName"); }
  get userId(): string { return this.field("userId"); }
  get sessionId(): string { return this.field("sessionId"); }
  get invocationId(): string { return this.field("invocationId"); }
  get agentName(): string { return this.field("agentName"); }
  get functionCallId(): string { return this.field("functionCallId"); }
}

/** A tool: returns its result (an object is the function response as is). */
export type ToolFn = (ctx: Context, args: Value) => Value | null;
/** A hook that sees only the context. */
export type HookFn = (ctx: Context) => Value | null;
/** A hook that sees, and may edit in place, one value of its input. */
export type ValueHookFn = (ctx: Context, value: Value) => Value | null;

class ToolReg {
  constructor(public name: string, public decl: Value, public fn: ToolFn) {}
}

function noHook(ctx: Context): Value | null { return null; }
function noValueHook(ctx: Context, v: Value): Value | null { return null; }

class HookReg {
  fn: HookFn = noHook;
  valueFn: ValueHookFn = noValueHook;
  constructor(public hook: string, public withValue: bool) {}
}

const HOOKS: string[] = [
  "tool_call", "before_agent", "after_agent", "before_model", "after_model", "on_model_error",
  "before_tool", "after_tool", "on_tool_error", "on_user_message", "before_run", "on_event",
  "after_run", "on_agent_error", "on_run_error",
];

let moduleName = "";
let moduleVersion = "";
const caps = new Array<string>();
const tools = new Array<ToolReg>();
const hooks = new Array<HookReg>();

/** Names the module and asks for capabilities ("state", "actions", "config", ...). */
export function module(name: string, version: string, capabilities: string[] = []): void {
  moduleName = name;
  moduleVersion = version;
  for (let i = 0; i < capabilities.length; i++) {
    if (!caps.includes(capabilities[i])) caps.push(capabilities[i]);
  }
}

/**
 * Registers a tool. parameters is its JSON Schema (an object schema); a
 * malformed one traps, and the host refuses the module. The function gets
 * the arguments object ({} if absent).
 */
export function tool(name: string, description: string, parameters: string, fn: ToolFn, longRunning: bool = false): void {
  const params = Value.parse(parameters);
  if (params == null) unreachable();
  const decl = Value.newObject()
    .set("name", Value.fromString(name))
    .set("description", Value.fromString(description))
    .set("parameters", params as Value);
  if (longRunning) decl.set("longRunning", Value.fromBool(true));
  tools.push(new ToolReg(name, decl, fn));
}

function on(hook: string, fn: HookFn): void {
  const r = new HookReg(hook, false);
  r.fn = fn;
  hooks.push(r);
}

function onValue(hook: string, fn: ValueHookFn): void {
  const r = new HookReg(hook, true);
  r.valueFn = fn;
  hooks.push(r);
}

/** before_agent: a Content skips the agent and is its answer. */
export function beforeAgent(fn: HookFn): void { on("before_agent", fn); }
/** after_agent: a Content is an extra event after the agent. */
export function afterAgent(fn: HookFn): void { on("after_agent", fn); }
/** before_model(request): a response skips the model; edits to the request are what it receives. */
export function beforeModel(fn: ValueHookFn): void { onValue("before_model", fn); }
/** after_model(response): a response, or edits, replace the response. */
export function afterModel(fn: ValueHookFn): void { onValue("after_model", fn); }
/** on_model_error(request), ctx.error: a response is used instead of failing. */
export function onModelError(fn: ValueHookFn): void { onValue("on_model_error", fn); }
/** before_tool(args): a result skips the tool; edits to args are what it receives. */
export function beforeTool(fn: ValueHookFn): void { onValue("before_tool", fn); }
/** after_tool(result), ctx.args: a result, or edits, replace the tool's result. */
export function afterTool(fn: ValueHookFn): void { onValue("after_tool", fn); }
/** on_tool_error(args), ctx.error: a result is used instead of failing. */
export function onToolError(fn: ValueHookFn): void { onValue("on_tool_error", fn); }
/** on_user_message(message): a Content, or edits, replace the user's message. */
export function onUserMessage(fn: ValueHookFn): void { onValue("on_user_message", fn); }
/** before_run: a Content ends the run with this answer. */
export function beforeRun(fn: HookFn): void { on("before_run", fn); }
/** on_event(event): an event, or edits, replace the event. */
export function onEvent(fn: ValueHookFn): void { onValue("on_event", fn); }
/** after_run: only ctx.fail counts. */
export function afterRun(fn: HookFn): void { on("after_run", fn); }
/** on_agent_error, ctx.error: a notification; nothing it returns changes the run. */
export function onAgentError(fn: HookFn): void { on("on_agent_error", fn); }
/** on_run_error, ctx.error: a notification; nothing it returns changes the run. */
export function onRunError(fn: HookFn): void { on("on_run_error", fn); }

function registered(hook: string): bool {
  if (hook == "tool_call") return tools.length > 0;
  for (let i = 0; i < hooks.length; i++) if (hooks[i].hook == hook) return true;
  return false;
}

/** The Describe message of the registrations. */
export function describe(): Value {
  const d = Value.newObject().set("abiVersion", Value.fromInteger(1)).set("name", Value.fromString(moduleName));
  if (moduleVersion.length > 0) d.set("version", Value.fromString(moduleVersion));
  if (tools.length > 0) {
    const a = Value.newArray();
    for (let i = 0; i < tools.length; i++) a.push(tools[i].decl);
    d.set("tools", a);
  }
  const hs = Value.newArray();
  for (let i = 0; i < HOOKS.length; i++) if (registered(HOOKS[i])) hs.push(Value.fromString(HOOKS[i]));
  if (hs.items.length > 0) d.set("hooks", hs);
  if (caps.length > 0) {
    const a = Value.newArray();
    for (let i = 0; i < caps.length; i++) a.push(Value.fromString(caps[i]));
    d.set("capabilities", a);
  }
  return d;
}

// The input field a value hook sees, the output field its result fills,
// and whether edits in place are sent back (under the same field).
function valueField(hook: string): string {
  if (hook == "before_model" || hook == "on_model_error") return "request";
  if (hook == "after_model") return "response";
  if (hook == "before_tool" || hook == "on_tool_error") return "args";
  if (hook == "after_tool") return "result";
  if (hook == "on_user_message") return "message";
  if (hook == "on_event") return "event";
  return "";
}

function resultField(hook: string): string {
  if (hook == "before_agent" || hook == "after_agent" || hook == "before_run") return "content";
  if (hook == "before_model" || hook == "after_model" || hook == "on_model_error") return "response";
  if (hook == "before_tool" || hook == "after_tool" || hook == "on_tool_error") return "result";
  if (hook == "on_user_message") return "message";
  if (hook == "on_event") return "event";
  return "";
}

function editable(hook: string): bool {
  return hook == "before_model" || hook == "after_model" || hook == "before_tool" || hook == "after_tool" ||
    hook == "on_user_message" || hook == "on_event";
}

function failure(msg: string): string {
  return `{"abiVersion":1,"error":` + Value.fromString(msg).toJSON() + `}`;
}

/**
 * Runs one hook on its JSON input as the export does; returns the output
 * ("" for nothing to change). Exported for tests and custom exports.
 */
export function handle(hook: string, text: string): string {
  if (hook == "describe") return describe().toJSON();
  const notify = hook == "on_agent_error" || hook == "on_run_error";
  // Decoded leniently: unknown fields are ignored (ABI.md §6).
  const parsed = text.length == 0 ? Value.newObject() : Value.parse(text);
  if (parsed == null || !parsed.isObject) return notify ? "" : failure("adkhost: the input is not a JSON object");
  const input = parsed as Value;
  const ver = input.get("abiVersion");
  if (ver != null && ver.num != "1") return notify ? "" : failure("adkhost: the input's abiVersion is not 1");

  const ctx = new Context();
  ctx.input = input;
  const info = input.get("context");
  if (info != null && info.isObject) ctx.info = info;
  const args = input.get("args");
  if (args != null && args.isObject) ctx.args = args;
  const err = input.getString("error");
  if (err != null) ctx.error = err;
  const t = input.get("tool");
  if (t != null) {
    if (t.kind == Kind.String) ctx.tool = t.str;
    else {
      const n = t.getString("name");
      if (n != null) ctx.tool = n;
    }
  }
  const out = Value.newObject().set("abiVersion", Value.fromInteger(1));

  if (hook == "tool_call") {
    const c = input.get("confirmation");
    if (c != null && !c.isNull) ctx.confirmation = c;
    for (let i = 0; i < tools.length; i++) {
      if (tools[i].name != ctx.tool) continue;
      const r = tools[i].fn(ctx, ctx.args);
      if (ctx.failure != null) return failure(ctx.failure as string);
      return out.set("result", r == null ? Value.makeNull() : r as Value).toJSON();
    }
    return failure("adkhost: unknown tool " + Value.fromString(ctx.tool).toJSON());
  }

  const field = valueField(hook);
  let value = Value.makeNull();
  if (field.length > 0) {
    const v = input.get(field);
    if (v != null) value = v;
  }
  const before = value.toJSON();
  for (let i = 0; i < hooks.length; i++) {
    const h = hooks[i];
    if (h.hook != hook) continue;
    const r = h.withValue ? h.valueFn(ctx, value) : h.fn(ctx);
    if (ctx.failure != null) return notify ? "" : failure(ctx.failure as string);
    if (r != null && !notify) {
      const rf = resultField(hook);
      if (rf.length > 0) return out.set(rf, r as Value).toJSON();
    }
  }
  // No replacement: send edits made in place, if any.
  if (editable(hook) && value.toJSON() != before) return out.set(field, value).toJSON();
  return "";
}
