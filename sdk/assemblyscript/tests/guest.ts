// A test guest of the SDK: sdk_test.go builds it with asc and calls every
// feature through the real sandbox (the Go host decodes outputs strictly).

import {
  Context, Value, Status, module, tool, afterTool, beforeModel, onEvent, onRunError, afterRun,
  state, logger, lastStatus, parseError, configGet, artifacts, HttpRequest, httpRequest,
  base64Encode, base64Decode, searchMemory, addSessionToMemory,
} from "../assembly/index";
export * from "../assembly/exports";

module("as-sdk-test", "0.0.1", ["state", "config", "artifacts", "http", "memory"]);
tool("echo", "Returns its arguments.", `{"type":"object"}`, echo);
tool("count", "Counts calls in state.", `{"type":"object","properties":{"key":{"type":"string"}},"required":["key"]}`, count);
tool("json", "Parses args.text and re-serializes it.", `{"type":"object","properties":{"text":{"type":"string"}}}`, json);
tool("fail", "Always fails.", `{}`, fail);
tool("config", "Reads a config value.", `{}`, config);
tool("save", "Saves args.part as the next version of args.name.", `{}`, save);
tool("load", "Loads a version (default: the newest) of args.name.", `{}`, loadArtifact);
tool("list", "Lists the artifacts.", `{}`, list);
tool("fetch", "Sends args.method (default GET) to args.url with args.body.", `{}`, fetch);
tool("base64", "Round-trips args.text through base64.", `{}`, base64);
tool("recall", "Searches the memory for args.query.", `{}`, recall);
tool("remember", "Adds the session to the memory.", `{}`, remember);
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

function save(ctx: Context, args: Value): Value | null {
  const name = args.getString("name");
  const part = args.get("part");
  if (name == null || part == null) return ctx.fail("save needs name and part");
  const v = artifacts.save(name as string, part as Value);
  if (v < 0) return ctx.fail("artifact_save: status " + lastStatus().toString());
  return Value.newObject().set("version", Value.fromInteger(v));
}

function loadArtifact(ctx: Context, args: Value): Value | null {
  const name = args.getString("name");
  if (name == null) return ctx.fail("load needs a name");
  const ver = args.get("version");
  const part = artifacts.load(name as string, ver == null ? artifacts.LATEST : <i32>ver.asNumber());
  if (part == null && lastStatus() != Status.NOT_FOUND) return ctx.fail("artifact_load: status " + lastStatus().toString());
  return Value.newObject().set("part", part == null ? Value.makeNull() : part as Value); // null: NOT_FOUND
}

function list(ctx: Context, args: Value): Value | null {
  const names = artifacts.list();
  if (names == null) return ctx.fail("artifact_list: status " + lastStatus().toString());
  const a = Value.newArray();
  for (let i = 0; i < names.length; i++) a.push(Value.fromString(names[i]));
  return Value.newObject().set("names", a);
}

function fetch(ctx: Context, args: Value): Value | null {
  const url = args.getString("url");
  const method = args.getString("method");
  const body = args.getString("body");
  if (url == null) return ctx.fail("fetch needs a url");
  const req = new HttpRequest(url as string, method == null ? "GET" : method as string).header("X-Test", "as");
  if (body != null) req.text(body as string);
  const resp = httpRequest(req);
  if (resp == null) return ctx.fail("http_request: status " + lastStatus().toString());
  const ct = resp.header("content-type");
  return Value.newObject().set("status", Value.fromInteger(resp.status))
    .set("contentType", Value.fromString(ct == null ? "" : ct as string))
    .set("body", Value.fromString(resp.text()));
}

function base64(ctx: Context, args: Value): Value | null {
  const text = args.getString("text");
  if (text == null) return ctx.fail("base64 needs text");
  const enc = base64Encode(Uint8Array.wrap(String.UTF8.encode(text as string)));
  const dec = base64Decode(enc);
  const bad = base64Decode("Zm9v!");
  return Value.newObject().set("encoded", Value.fromString(enc))
    .set("decoded", dec == null ? Value.makeNull() : Value.fromString(String.UTF8.decode(dec.buffer)))
    .set("invalid", Value.fromBool(bad == null));
}

function recall(ctx: Context, args: Value): Value | null {
  const query = args.getString("query");
  const found = searchMemory(query == null ? "" : query as string);
  if (found == null) return ctx.fail("memory_search: status " + lastStatus().toString());
  const texts = Value.newArray();
  const memories = Value.newArray();
  for (let i = 0; i < found.length; i++) {
    texts.push(Value.fromString(found[i].text()));
    memories.push(found[i].toValue());
  }
  return Value.newObject().set("texts", texts).set("memories", memories);
}

function remember(ctx: Context, args: Value): Value | null {
  const st = addSessionToMemory();
  if (st != Status.OK) return ctx.fail("memory_add_session: status " + st.toString());
  return Value.newObject().set("added", Value.fromBool(true));
}
