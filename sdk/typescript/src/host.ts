// The host functions of ABI v1 (abi/ABI.md §4), with their status codes
// (§10) as HostError. The JavaScript runtime (sdk/typescript/runtime/main.c)
// installs them as globalThis.__adkhost: data results are a string on OK
// and the status code otherwise; the others answer the status.

interface HostFunctions {
  state_get(key: string): string | number;
  state_set(key: string, json: string): number;
  state_delete(key: string): number;
  transfer_to_agent(name: string): number;
  escalate(): number;
  skip_summarization(): number;
  request_confirmation(hint: string, payload: string): number;
  artifact_load(name: string, version: number): string | number;
  artifact_save(name: string, part: string): [number, number];
  artifact_list(): string | number;
  log(level: number, message: string): number;
  invocation_info(): string | number;
  config_get(key: string): string | number;
  http_request(request: string): string | number;
  memory_search(query: string): string | number;
  memory_add_session(): number;
  buildName: string;
  buildCapabilities: string;
}

declare const globalThis: { __adkhost?: HostFunctions; [k: string]: unknown };

export const OK = 0;
export const NOT_FOUND = 1;
export const INVALID_ARGUMENT = 2;
export const DENIED = 3;
export const UNAVAILABLE = 4;
export const TOO_LARGE = 5;
export const BAD_POINTER = 6;
export const FAILED = 7;
export const ALLOC_FAILED = 8;

const STATUS_NAMES: Record<number, string> = {
  1: "NOT_FOUND", 2: "INVALID_ARGUMENT", 3: "DENIED", 4: "UNAVAILABLE", 5: "TOO_LARGE",
  6: "BAD_POINTER", 7: "FAILED", 8: "ALLOC_FAILED",
};

const CAPABILITY: Record<string, string> = {
  state_get: "state", state_set: "state", state_delete: "state",
  transfer_to_agent: "actions", escalate: "actions", skip_summarization: "actions",
  request_confirmation: "actions", artifact_load: "artifacts", artifact_save: "artifacts",
  artifact_list: "artifacts", config_get: "config", http_request: "http",
  memory_search: "memory", memory_add_session: "memory",
};

/** A host function failed; status is its ABI.md §10 code. */
export class HostError extends Error {
  readonly function: string;
  readonly status: number;

  constructor(fn: string, status: number) {
    let msg = `${fn}: ${STATUS_NAMES[status] ?? `status ${status}`}`;
    if (status === DENIED && fn === "http_request") {
      msg += " (the destination is not among the hosts the app grants this module, or the module lacks " +
        "the 'http' capability: capabilities(\"http\") or `module build --capabilities http`)";
    } else if (status === DENIED && fn in CAPABILITY) {
      const cap = CAPABILITY[fn];
      msg += ` (the module needs the '${cap}' capability, asked for with capabilities("${cap}") ` +
        `or \`module build --capabilities ${cap}\`, and granted by the app)`;
    } else if (status === UNAVAILABLE) {
      msg += " (not available in this call)";
    }
    super(msg);
    this.name = "HostError";
    this.function = fn;
    this.status = status;
  }
}

// The runtime defines __adkhost before the bundle runs, and for good (not
// writable, not configurable): read once.
const HOST = globalThis.__adkhost;

function host(): HostFunctions {
  const h = HOST;
  if (h === undefined) {
    throw new Error("adkhost host functions exist only inside the sandbox (build the module with adkhost module build)");
  }
  return h;
}

/** buildInfo is what `module build` was told: --name and --capabilities. */
export function buildInfo(): { name: string; capabilities: string[] } {
  const h = globalThis.__adkhost;
  if (h === undefined) return { name: "", capabilities: [] };
  return { name: h.buildName, capabilities: h.buildCapabilities.split(",").map((s) => s.trim()).filter(Boolean) };
}

function check(fn: string, st: number): void {
  if (st !== OK) throw new HostError(fn, st);
}

/** data answers the string of an OK result, undefined for NOT_FOUND. */
function data(fn: string, r: string | number): string | undefined {
  if (typeof r === "string") return r;
  if (r === NOT_FOUND) return undefined;
  throw new HostError(fn, r);
}

/** JSON of a value; undefined becomes null (JSON has no undefined). */
export function dumps(value: unknown): string {
  const s = JSON.stringify(value);
  return s === undefined ? "null" : s;
}

function parse(s: string | undefined): unknown {
  return s === undefined || s === "" ? undefined : JSON.parse(s);
}

export function stateGet(key: string): { found: boolean; value?: unknown } {
  const s = data("state_get", host().state_get(String(key)));
  if (s === undefined) return { found: false };
  return { found: true, value: s === "" ? null : JSON.parse(s) };
}

export function stateSet(key: string, value: unknown): void {
  const st = host().state_set(typeof key === "string" ? key : String(key), dumps(value));
  if (st !== OK) throw new HostError("state_set", st);
}

export function stateDelete(key: string): void {
  check("state_delete", host().state_delete(String(key)));
}

export function transferToAgent(name: string): void {
  check("transfer_to_agent", host().transfer_to_agent(String(name)));
}

export function escalate(): void {
  check("escalate", host().escalate());
}

export function skipSummarization(): void {
  check("skip_summarization", host().skip_summarization());
}

export function requestConfirmation(hint: string | undefined, payload: unknown): void {
  check("request_confirmation",
    host().request_confirmation(hint ?? "", payload === undefined ? "" : dumps(payload)));
}

export function artifactLoad(name: string, version?: number): unknown {
  return parse(data("artifact_load", host().artifact_load(String(name), version ?? -1)));
}

export function artifactSave(name: string, part: unknown): number {
  const [st, version] = host().artifact_save(String(name), dumps(part));
  check("artifact_save", st);
  return version;
}

export function artifactList(): string[] {
  const s = data("artifact_list", host().artifact_list());
  return (parse(s) as string[] | undefined) ?? [];
}

export const LEVELS: Record<string, number> = { debug: -4, info: 0, warn: 4, warning: 4, error: 8 };

export function log(level: string | number, message: unknown): void {
  const lv = typeof level === "number" ? level : (LEVELS[level] ?? 0);
  host().log(lv | 0, typeof message === "string" ? message : String(message));
}

export function invocationInfo(): Record<string, unknown> {
  return (parse(data("invocation_info", host().invocation_info())) as Record<string, unknown>) ?? {};
}

export function configGet(key: string): string | undefined {
  return data("config_get", host().config_get(String(key)));
}

export function httpRequest(req: unknown): unknown {
  const r = host().http_request(dumps(req));
  if (typeof r !== "string") throw new HostError("http_request", r);
  return JSON.parse(r);
}

export function memorySearch(query: string): unknown {
  const r = host().memory_search(String(query ?? ""));
  if (typeof r !== "string") throw new HostError("memory_search", r);
  return parse(r) ?? { memories: [] };
}

export function memoryAddSession(): void {
  check("memory_add_session", host().memory_add_session());
}
