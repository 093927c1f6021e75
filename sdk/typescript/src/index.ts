/**
 * adkhost: adk-js style tools, callbacks and plugins as sandboxed
 * WebAssembly modules (ABI v1, abi/ABI.md).
 *
 *     import { tool, ToolContext } from "adkhost";
 *
 *     tool({
 *       name: "get_weather",
 *       description: "Returns the forecast for a city.",
 *       parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
 *     }, (args: { city: string }, ctx: ToolContext) => {
 *       ctx.state.set("last_city", args.city);
 *       return { city: args.city, forecast: "sunny" };
 *     });
 *
 * `adkhost module build weather.ts` bundles the file with esbuild, evaluates
 * it at build time and snapshots the interpreter; sdk/typescript/README.md
 * has the whole guide.
 */

import * as h from "./host.js";
import { runtime, AGENT_HOOKS, BasePlugin, type AgentHook, type Callback } from "./runtime.js";

export {
  BaseTool, CallbackContext, Content, Context, Event, EventActions, FunctionDeclaration,
  GenerateContentConfig, HttpRequest, HttpResponse, InvocationContext, InvocationInfo, JSONValue,
  LlmRequest, LlmResponse, Part, ReadonlyContext, State, ToolConfirmation, ToolContext,
} from "./context.js";
export { HostError } from "./host.js";
export { BasePlugin };
export type { AgentHook, Callback } from "./runtime.js";

import type { Context } from "./context.js";

/** A JSON Schema object (ABI.md §7: "type" absent or "object"). */
export interface ParametersSchema {
  type?: "object";
  properties?: Record<string, unknown>;
  required?: string[];
  [k: string]: unknown;
}

/**
 * A zod 4 schema, as adk-js takes one (z.object({...})): anything with
 * toJSONSchema() and parse(). The SDK does not depend on zod; a module that
 * imports it bundles it.
 */
export interface SchemaLike {
  toJSONSchema(opts?: { io?: "input" | "output" }): Record<string, unknown>;
  parse(value: unknown): unknown;
}

export interface ToolOptions {
  /** The tool's name: a letter or _, then letters, digits, _ . - (64 at most). */
  name: string;
  description?: string;
  /**
   * The arguments: a JSON Schema object, or a zod 4 object schema (its
   * JSON Schema is declared, and parse() checks the arguments and fills
   * their defaults before each call, as adk-js does); none: no arguments.
   */
  parameters?: ParametersSchema | SchemaLike;
  /** adk-js's LongRunningFunctionTool. */
  isLongRunning?: boolean;
}

export type ToolFunction<A, R> = (args: A, context: Context) => R | Promise<R>;

/**
 * adk-js's FunctionTool: a tool made of a function. Every FunctionTool
 * created while the module is built is one of its tools.
 */
export class FunctionTool<A = Record<string, unknown>, R = unknown> {
  readonly name: string;
  readonly description: string;
  readonly parameters?: ParametersSchema;
  readonly isLongRunning: boolean;
  readonly execute: ToolFunction<A, R>;

  constructor(opts: ToolOptions & { execute: ToolFunction<A, R> }) {
    if (!opts || typeof opts.name !== "string" || opts.name === "") {
      throw new TypeError("a tool needs a name");
    }
    if (typeof opts.execute !== "function") {
      throw new TypeError(`tool ${opts.name}: execute must be a function`);
    }
    this.name = opts.name;
    this.description = opts.description ?? "";
    this.isLongRunning = Boolean(opts.isLongRunning);
    const p = opts.parameters as Record<string, unknown> | undefined;
    if (isSchemaLike(p)) {
      // What the model may send (io "input": fields with defaults are
      // optional); the meta-schema's URL says nothing to a model.
      const { $schema: _, ...decl } = p.toJSONSchema({ io: "input" });
      this.parameters = decl as ParametersSchema;
      const fn = opts.execute;
      this.execute = (args, ctx) => fn(p.parse(args) as A, ctx);
    } else {
      if (p && typeof p.safeParse === "function") {
        throw new TypeError(`tool ${opts.name}: parameters is a schema without toJSONSchema() (zod 3?): ` +
          "use zod 4, or write the JSON Schema");
      }
      this.parameters = p as ParametersSchema | undefined;
      this.execute = opts.execute;
    }
    runtime.addTool(this as FunctionTool<never, unknown>);
  }
}

/** adk-js's LongRunningFunctionTool: a FunctionTool with isLongRunning set. */
export class LongRunningFunctionTool<A = Record<string, unknown>, R = unknown> extends FunctionTool<A, R> {
  constructor(opts: ToolOptions & { execute: ToolFunction<A, R> }) {
    super({ ...opts, isLongRunning: true });
  }
}

/**
 * Declares a tool: its declaration is name, description and parameters;
 * fn receives the arguments and the ToolContext, and may be async.
 */
export function tool<A = Record<string, unknown>, R = unknown>(opts: ToolOptions, fn: ToolFunction<A, R>): FunctionTool<A, R> {
  return new FunctionTool<A, R>({ ...opts, execute: fn });
}

/**
 * Declares an agent callback for the hook named as adk-js or ABI.md names
 * it (beforeModel, afterTool, ... or before_model, after_tool, ...), called
 * as adk-js calls an LlmAgent's callbacks: the context for beforeAgent and
 * afterAgent, one object for the others:
 *
 *     callback("beforeAgent", (context) => { ... });
 *     callback("beforeModel", ({ context, request }) => { ... });
 */
export function callback<H extends AgentHook>(hook: H, fn: Callback<H>): void {
  runtime.addCallback(hook, fn);
}

/** Registers a BasePlugin instance (exported instances are found without it). */
export function plugin<P extends BasePlugin>(p: P): P {
  runtime.addPlugin(p);
  return p;
}

function isSchemaLike(p: unknown): p is SchemaLike {
  return p !== null && typeof p === "object" && typeof (p as SchemaLike).toJSONSchema === "function" &&
    typeof (p as SchemaLike).parse === "function";
}

const CAPABILITIES = ["state", "actions", "artifacts", "config", "http", "memory", "fs", "env", "clock", "random"];

/** The capabilities the module asks for (ABI.md §8). */
export function capabilities(...names: string[]): void {
  for (const n of names) {
    if (!CAPABILITIES.includes(n)) {
      throw new Error(`unknown capability "${n}": one of ${CAPABILITIES.join(", ")}`);
    }
    runtime.addCapability(n);
  }
}

/** The module's name and version in its describe message (default name: the file's). */
export function module(opts: { name?: string; version?: string }): void {
  if (opts.name) runtime.name = opts.name;
  if (opts.version) runtime.version = opts.version;
}

/** A log line through the host (no capability needed). */
export function log(message: unknown, level: "debug" | "info" | "warn" | "error" = "info"): void {
  h.log(level, message);
}

export { AGENT_HOOKS };
