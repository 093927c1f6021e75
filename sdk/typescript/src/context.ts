// adk-js's ToolContext and CallbackContext over the host functions. Every
// read and write goes to the host, behind the module's grants (ABI.md §8):
// a tool without the `state` grant that touches `state` gets a HostError
// (DENIED), as any module would. adk-js's async methods (loadArtifact,
// searchMemory, ...) are async here too, so tool bodies move unchanged.

import * as h from "./host.js";

/** A JSON value. */
export type JSONValue = null | boolean | number | string | JSONValue[] | { [k: string]: JSONValue };

/** genai's Content and Part, as the host sends them (ABI.md §6). */
export interface Part {
  text?: string;
  inlineData?: { mimeType?: string; data?: string; displayName?: string };
  fileData?: { mimeType?: string; fileUri?: string; displayName?: string };
  functionCall?: { id?: string; name?: string; args?: Record<string, unknown> };
  functionResponse?: { id?: string; name?: string; response?: Record<string, unknown> };
  [k: string]: unknown;
}
export interface Content {
  role?: string;
  parts?: Part[];
}

/** genai's FunctionDeclaration, as a request's tools carry it. */
export interface FunctionDeclaration {
  name: string;
  description?: string;
  parameters?: unknown;
  parametersJsonSchema?: unknown;
  [k: string]: unknown;
}

/** The request's generation config (ABI.md §6, LlmRequest). */
export interface GenerateContentConfig {
  systemInstruction?: Content;
  temperature?: number;
  topP?: number;
  topK?: number;
  maxOutputTokens?: number;
  stopSequences?: string[];
  tools?: Array<{ functionDeclarations?: FunctionDeclaration[]; [k: string]: unknown }>;
  [k: string]: unknown;
}

/** The model request a model callback sees (ABI.md §6); edits to it go to the model. */
export interface LlmRequest {
  model?: string;
  contents?: Content[];
  config?: GenerateContentConfig;
  [k: string]: unknown;
}

/** A model response (ABI.md §6): what a model callback may answer. */
export interface LlmResponse {
  content?: Content;
  partial?: boolean;
  turnComplete?: boolean;
  finishReason?: string;
  errorCode?: string;
  errorMessage?: string;
  customMetadata?: Record<string, unknown>;
  [k: string]: unknown;
}

/** An event of the session (ABI.md §6): an LlmResponse with its id, author and actions. */
export interface Event extends LlmResponse {
  id?: string;
  invocationId?: string;
  author?: string;
  branch?: string;
  actions?: Record<string, unknown>;
  timestamp?: number;
}

/** The current call, as ABI.md's InvocationInfo says it. */
export interface InvocationInfo {
  invocationId?: string;
  agentName?: string;
  userId?: string;
  sessionId?: string;
  appName?: string;
  branch?: string;
  functionCallId?: string;
  userContent?: Content;
  [k: string]: unknown;
}

/**
 * Session state with google-adk's scopes: "app:", "user:", "temp:" and
 * unprefixed keys (ABI.md §9). Reads see this invocation's own writes.
 */
export class State {
  static readonly APP_PREFIX = "app:";
  static readonly USER_PREFIX = "user:";
  static readonly TEMP_PREFIX = "temp:";

  /** The value of key, or defaultValue when the session has none. */
  get<T = unknown>(key: string, defaultValue?: T): T | undefined {
    const r = h.stateGet(key);
    return r.found ? (r.value as T) : defaultValue;
  }

  set(key: string, value: unknown): void {
    h.stateSet(key, value);
  }

  has(key: string): boolean {
    return h.stateGet(key).found;
  }

  /** Records null: google-adk's delta has no removal. */
  delete(key: string): void {
    h.stateDelete(key);
  }

  update(delta: Record<string, unknown>): void {
    for (const [k, v] of Object.entries(delta)) h.stateSet(k, v);
  }

  /** Not available: the ABI reads state one key at a time. */
  toRecord(): never {
    throw new Error("the ABI reads state one key at a time: use state.get(key)");
  }
}

/**
 * The actions of the event the hook contributes to. Setting
 * skipSummarization, escalate or transferToAgent calls the host (capability
 * `actions`); stateDelta writes go to state.
 */
export class EventActions {
  #skip = false;
  #escalate = false;
  #transfer: string | undefined;
  readonly stateDelta: Record<string, unknown> = new Proxy({}, {
    set(_t, key, value) {
      h.stateSet(String(key), value);
      return true;
    },
    get(_t, key) {
      return typeof key === "string" ? h.stateGet(key).value : undefined;
    },
  });

  get skipSummarization(): boolean { return this.#skip; }
  set skipSummarization(v: boolean) {
    if (v) h.skipSummarization();
    this.#skip = Boolean(v);
  }

  get escalate(): boolean { return this.#escalate; }
  set escalate(v: boolean) {
    if (v) h.escalate();
    this.#escalate = Boolean(v);
  }

  get transferToAgent(): string | undefined { return this.#transfer; }
  set transferToAgent(name: string | undefined) {
    if (name) h.transferToAgent(name);
    this.#transfer = name;
  }
}

/** adk-js's ToolConfirmation: what the user answered. */
export interface ToolConfirmation {
  hint?: string;
  confirmed?: boolean;
  payload?: unknown;
}

/** The HTTP request http() performs (ABI.md §4; capability `http`). */
export interface HttpRequest {
  method?: string;
  url: string;
  headers?: Record<string, string>;
  /** The body as text (UTF-8), or bodyBase64 for bytes. */
  body?: string;
  bodyBase64?: string;
}

export interface HttpResponse {
  status: number;
  headers: Record<string, string>;
  /** The body as text (UTF-8); bodyBase64 is the same bytes. */
  body: string;
  bodyBase64: string;
  json<T = unknown>(): T;
}

// State holds nothing itself (every access goes to the host): one for all
// contexts, not one built per call.
const STATE = new State();

export class ReadonlyContext {
  // The invocation info, or its JSON text until first read: a tool call's
  // context comes as text from the runtime (runtime/main.c), and most
  // tools never read it. Declared, not a class field: a field would be
  // defined again on every context built.
  declare private _info: InvocationInfo | string;

  constructor(info?: InvocationInfo) {
    this._info = info ?? {};
  }

  protected get info(): InvocationInfo {
    const i = this._info;
    return typeof i === "string" ? (this._info = parseInfo(i)) : i;
  }

  get state(): State { return STATE; }

  get invocationId(): string | undefined { return this.info.invocationId; }
  get agentName(): string | undefined { return this.info.agentName; }
  get userId(): string | undefined { return this.info.userId; }
  get sessionId(): string | undefined { return this.info.sessionId; }
  get appName(): string | undefined { return this.info.appName; }
  get branch(): string | undefined { return this.info.branch; }
  get userContent(): Content | undefined { return this.info.userContent; }
}

// parseInfo parses a context's JSON text; anything but an object reads as
// an empty one (the runtime hands on only objects).
function parseInfo(text: string): InvocationInfo {
  try {
    const v: unknown = JSON.parse(text);
    return v !== null && typeof v === "object" && !Array.isArray(v) ? (v as InvocationInfo) : {};
  } catch {
    return {};
  }
}

/**
 * adk-js's ToolContext and CallbackContext in one (google-adk 2.x's
 * Context, which both name).
 */
// A context's EventActions, built on first use: most calls never touch
// actions, and EventActions holds a Proxy with two closures. Kept aside,
// not in a field, because a field is defined on every context built.
const ACTIONS = new WeakMap<Context, EventActions>();

export class Context extends ReadonlyContext {
  declare readonly toolConfirmation?: ToolConfirmation;

  constructor(info?: InvocationInfo, confirmation?: ToolConfirmation) {
    super(info);
    if (confirmation) this.toolConfirmation = confirmation;
  }

  get actions(): EventActions {
    let a = ACTIONS.get(this);
    if (a === undefined) ACTIONS.set(this, (a = new EventActions()));
    return a;
  }
  get functionCallId(): string | undefined { return this.info.functionCallId; }
  /** adk-js's name for actions. */
  get eventActions(): EventActions { return this.actions; }

  async loadArtifact(filename: string, version?: number): Promise<Part | undefined> {
    return h.artifactLoad(filename, version) as Part | undefined;
  }

  async saveArtifact(filename: string, artifact: Part): Promise<number> {
    return h.artifactSave(filename, artifact);
  }

  async listArtifacts(): Promise<string[]> {
    return h.artifactList();
  }

  async searchMemory(query: string): Promise<{ memories: Array<Record<string, unknown>> }> {
    return h.memorySearch(query) as { memories: Array<Record<string, unknown>> };
  }

  async addSessionToMemory(): Promise<void> {
    h.memoryAddSession();
  }

  requestConfirmation({ hint, payload }: { hint?: string; payload?: unknown } = {}): void {
    h.requestConfirmation(hint, payload);
  }

  /** A config value the app grants this module (capability `config`). */
  getConfig(key: string): string | undefined {
    return h.configGet(key);
  }

  /** A log line through the host (no capability needed). */
  log(message: unknown, level: "debug" | "info" | "warn" | "error" = "info"): void {
    h.log(level, message);
  }

  /**
   * An HTTP request through the host (capability `http`, to the hosts the
   * app grants). Synchronous under the hood: the sandbox has no event loop.
   */
  async http(req: HttpRequest): Promise<HttpResponse> {
    const wire: Record<string, unknown> = { method: req.method ?? "GET", url: req.url };
    if (req.headers) wire.headers = req.headers;
    if (req.bodyBase64 !== undefined) wire.body = req.bodyBase64;
    else if (req.body !== undefined) wire.body = toBase64(req.body);
    const r = h.httpRequest(wire) as { status: number; headers?: Record<string, string>; body?: string };
    const b64 = r.body ?? "";
    const body = fromBase64(b64);
    return {
      status: r.status, headers: r.headers ?? {}, body, bodyBase64: b64,
      json<T>() { return JSON.parse(body) as T; },
    };
  }
}

const CONTEXT = Context.prototype;

/**
 * toolContext is a tool call's Context over its context's JSON text (the
 * runtime's tool entry), as new Context(info, confirmation) builds it but
 * without running two constructors: an object literal is the cheapest
 * object QuickJS builds.
 */
export function toolContext(text: string | undefined, confirmation: unknown): Context {
  const c = { __proto__: CONTEXT, _info: text ?? {} } as unknown as { toolConfirmation?: unknown };
  if (confirmation) c.toolConfirmation = confirmation;
  return c as Context;
}

export type ToolContext = Context;
export const ToolContext = Context;
export type CallbackContext = Context;
export const CallbackContext = Context;

/** What run-level plugin hooks receive (adk-js's InvocationContext). */
export class InvocationContext extends ReadonlyContext {
  get session(): { id?: string; appName?: string; userId?: string } {
    return { id: this.sessionId, appName: this.appName, userId: this.userId };
  }
}

/** The tool a tool callback is about. */
export interface BaseTool {
  name: string;
  description?: string;
  isLongRunning?: boolean;
}

// UTF-8 <-> base64 with QuickJS's btoa/atob (Latin-1 strings).
function toBase64(s: string): string {
  return btoa(unescape(encodeURIComponent(s)));
}

function fromBase64(b64: string): string {
  const bin = atob(b64);
  try {
    return decodeURIComponent(escape(bin));
  } catch {
    return bin; // not UTF-8: the bytes as Latin-1
  }
}
