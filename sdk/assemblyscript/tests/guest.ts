// A test guest of the SDK: sdk_test.go builds it with asc and calls every
// feature through the real sandbox (the Go host decodes outputs strictly).

import {
  Context, Value, Status, module, tool, afterTool, beforeModel, onEvent, onRunError, afterRun,
  state, logger, lastStatus, parseError, configGet,
} from "../assembly/index";
export * from "../assembly/exports";

module("as-sdk-test", "0.0.1", ["state", "config"]);
tool("echo", "Returns its arguments.", `{"type":"object"}`, echo);
tool("count", "Counts calls in state.", `{"type":"object","properties":{"key":{"type":"string"}},"required":["key"]}`, count);
tool("json", "Parses args.text and re-serializes it.", `{"type":"object","properties":{"text":{"type":"string"}}}`, json);
tool("fail", "Always fails.", `{}`, fail);
tool("config", "Reads a config value.", `{}`, config);
afterTool(markChecked);
afterTool(replaceSecret);
beforeModel(blockOrEdit);
onEvent(tagEvent);
onRunError(noteRunError);
afterRun(failAfterRun);

function echo(ctx: Context, args: Value): Value | null {
  return Value.newObject().set("args", args).set("call", Value.fromString(ctx.functionCallId))
    .set("agent", Value.fromString(ctx.agentName));
}

function count(ctx: Context, args: Value): Value | null {
  const key = args.getString("key");
  if (key == null) return ctx.fail("count needs a string key");
  const k = key as string;
  const old = state.get(k);
  let n: f64 = 0;
  if (old != null) n = old.asNumber();
  else if (lastStatus() != Status.NOT_FOUND) return ctx.fail("state_get: status " + lastStatus().toString());
  const st = state.set(k, Value.fromNumber(n + 1));
  if (st != Status.OK) return ctx.fail("state_set: status " + st.toString());
  logger.info("count " + k + " = " + Value.fromNumber(n + 1).toJSON());
  return Value.fromNumber(n + 1); // not an object: the model sees {"result": n}
}

function json(ctx: Context, args: Value): Value | null {
  const text = args.getString("text");
  if (text == null) return ctx.fail("json needs text");
  const v = Value.parse(text as string);
  if (v == null) return Value.newObject().set("error", Value.fromString(parseError()));
  return Value.newObject().set("json", Value.fromString(v.toJSON()));
}

function fail(ctx: Context, args: Value): Value | null {
  return ctx.fail("it \"failed\"\non purpose");
}

function config(ctx: Context, args: Value): Value | null {
  const v = configGet("greeting");
  return Value.newObject().set("greeting", v == null ? Value.makeNull() : Value.fromString(v as string))
    .set("status", Value.fromInteger(lastStatus()));
}

// Edits in place: adds checked:true when the result has "mark".
function markChecked(ctx: Context, result: Value): Value | null {
  if (result.get("mark") != null) result.set("checked", Value.fromBool(true));
  return null;
}

// Returns a replacement when the result has "secret" (ends the chain).
function replaceSecret(ctx: Context, result: Value): Value | null {
  if (result.get("secret") == null) return null;
  return Value.newObject().set("secret", Value.fromString("***")).set("tool", Value.fromString(ctx.tool));
}

function blockOrEdit(ctx: Context, request: Value): Value | null {
  if (ctx.agentName == "blocked") {
    return Value.parse(`{"content":{"role":"model","parts":[{"text":"blocked"}]}}`);
  }
  if (ctx.agentName == "failing") return ctx.fail("model refused");
  if (ctx.agentName == "editor") request.set("model", Value.fromString("edited-model"));
  return null;
}

function tagEvent(ctx: Context, event: Value): Value | null {
  if (event.getString("author") == "tag-me") event.set("branch", Value.fromString("tagged"));
  return null;
}

function noteRunError(ctx: Context): Value | null {
  logger.warn("run failed: " + ctx.error);
  return ctx.fail("ignored: notifications cannot fail");
}

function failAfterRun(ctx: Context): Value | null {
  if (ctx.invocationId == "fail-after-run") return ctx.fail("after_run failed");
  return null;
}
