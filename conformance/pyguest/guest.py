"""The conformance harness's generic guest in Python (the twin of
conformance/wasmguest, built with `adkhost module build`): it performs the
scenario behaviour vocabulary (FORMAT.md §1.4, §1.5) of the agent or plugin
whose wasmspec.Spec the config key "spec" holds. It declares one
dispatcher tool and implements every hook: agent hooks as google-adk
callbacks, run-level hooks as a BasePlugin's methods, all through the
adkhost SDK as a user's module would."""

import json

import adkhost
from adkhost import BasePlugin, ToolContext, _host, callback, tool

adkhost.module("conformance_behaviours", "1.0.0")
adkhost.capabilities("state", "actions", "artifacts", "config")

LOG_PREFIX = "callback_log:"
ERR_PREFIX = "pyerror:"

_spec = {"text": None, "spec": None}
_calls = {}


def spec():
    text = _host.config_get("spec")
    if text is None:
        raise RuntimeError("no config value 'spec'")
    if text != _spec["text"]:
        _spec["spec"], _spec["text"] = json.loads(text), text
    return _spec["spec"]


class PyError(Exception):
    def __init__(self, e):
        super().__init__(ERR_PREFIX + json.dumps({"type": e["type"], "msg": e["msg"]}))


def log_entry(e):
    _host.log("info", LOG_PREFIX + json.dumps(e, sort_keys=True, separators=(",", ":")))


def set_state(kvs):
    for kv in kvs or ():
        _host.state_set(kv["k"], kv["v"])


def artifact_ops(ops):
    """Runs artifact operations through the host; their results as
    google-adk's dumps show them. UNAVAILABLE (no artifact service) is
    google-adk's ValueError."""
    results = []
    try:
        for op in ops:
            if op.get("save") is not None:
                part = {"inlineData": {"mimeType": op.get("mime_type", ""), "data": op.get("data", "")}}
                results.append(_host.artifact_save(op["save"], part))
            elif op.get("load") is not None:
                results.append(part_dump(_host.artifact_load(op["load"], op.get("version"))))
            else:
                results.append(list(_host.artifact_list()))
    except _host.HostError as e:
        if e.status == _host.UNAVAILABLE:
            raise PyError({"type": "ValueError", "msg": "Artifact service is not initialized."})
        raise
    return results


def part_dump(p):
    """An ABI part as google-adk's Part.model_dump(mode="json", exclude_none=True)."""
    if p is None:
        return None
    d = {}
    if p.get("text"):
        d["text"] = p["text"]
    blob = p.get("inlineData")
    if blob is not None:
        b = {"data": blob.get("data", "")}
        if blob.get("mimeType"):
            b["mime_type"] = blob["mimeType"]
        if blob.get("displayName"):
            b["display_name"] = blob["displayName"]
        d["inline_data"] = b
    return d


def matches(w, info, n):
    for key in ("agent", "tool", "author"):
        want = w.get(key)
        if want is not None and info.get(key) != want:
            return False
    ec = w.get("error_contains")
    if ec is not None and (info.get("error") is None or ec not in info["error"]):
        return False
    return w.get("nth") is None or w["nth"] == n


def run(it, info, args, req):
    key = f"{it['hook']}#{it['index']}"
    _calls[key] = _calls.get(key, 0) + 1
    matched = matches(it.get("when") or {}, info, _calls[key])
    e = {"hook": it["hook"], "owner": it["owner"], "index": it["index"], "matched": matched}
    for k in ("agent", "tool", "args", "error", "author"):
        if info.get(k) is not None:
            e[k] = info[k]
    with_results = matched and it.get("artifacts") is not None
    if not with_results:
        log_entry(e)
    if not matched:
        return None
    set_state(it.get("set_state"))
    if with_results:
        try:
            e["artifacts"] = artifact_ops(it["artifacts"])
        finally:
            log_entry(e)
    if it.get("escalate"):
        _host.escalate()
    if it.get("transfer_to_agent") is not None:
        _host.transfer_to_agent(it["transfer_to_agent"])
    for kv in it.get("set_args") or ():
        args[kv["k"]] = kv["v"]
    if it.get("append_instruction") is not None:
        append_instruction(req, it["append_instruction"])
    if it.get("raise"):
        raise PyError(it["raise"])
    if not it.get("has_return"):
        return None
    if it.get("return_event") is not None:
        return ("event", it["return_event"])
    if it.get("return_content") is not None:
        return ("content", it["return_content"])
    if it.get("return_response") is not None:
        return ("response", it["return_response"])
    v = it.get("return_value")
    if v is None:
        return None
    return ("value", v if isinstance(v, dict) else {"result": v})


def first(hook, info, args=None, req=None):
    for it in spec().get("hooks", {}).get(hook, ()):
        r = run(it, info, args, req)
        if r is not None:
            return r[1]
    return None


def _zero(v):
    return v in (None, "", False, 0) or v == [] or v == {}


def append_instruction(req, text):
    """llm_request.append_instructions([text]), as the Go guest does it."""
    config = req._d.setdefault("config", {})
    si = config.get("systemInstruction")
    blank = si is None or all(p is None or all(_zero(v) for v in p.values()) for p in si.get("parts") or [])
    if blank:
        if text:
            config["systemInstruction"] = {"role": "user", "parts": [{"text": text}]}
        return
    parts = si.setdefault("parts", [])
    if parts and parts[-1] and parts[-1].get("text"):
        parts[-1] = {"text": parts[-1]["text"] + "\n\n" + text}
        return
    if text:
        parts.append({"text": text})


@tool(name="scenario_tool")
def scenario_tool(tool: str, args: dict, tool_context: ToolContext):
    """Runs a scenario tool's behaviour."""
    t = spec().get("tools", {}).get(tool)
    if t is None:
        raise RuntimeError(f"no tool {tool!r} in this module's spec")
    call_args = {}
    for p in t.get("params") or ():
        name = p["name"]
        if name in (args or {}):
            v = args[name]
        elif p.get("has_default"):
            v = p.get("default")
        elif p.get("optional"):
            v = None
        else:
            raise PyError({"type": "TypeError",
                           "msg": f"{tool}() missing 1 required keyword-only argument: '{name}'"})
        call_args[name] = v
    entry = {"hook": "tool", "owner": "tool:" + tool, "agent": tool_context.agent_name, "tool": tool,
             "args": call_args}
    conf = tool_context.tool_confirmation
    if conf is not None:
        ce = {"confirmed": bool(conf.confirmed), "hint": conf.hint or ""}
        if conf.payload is not None:
            ce["payload"] = conf.model_dump().get("payload")
        entry["confirmation"] = ce
    log_entry(entry)
    rc = t.get("request_confirmation")
    if rc is not None:
        if conf is None:
            tool_context.request_confirmation(hint=rc.get("hint", ""), payload=rc.get("payload"))
            return {"status": "confirmation requested"}
        if not conf.confirmed:
            return {"status": "rejected"}
    set_state(t.get("set_state"))
    artifact_results = None
    if t.get("artifacts") is not None:
        artifact_results = artifact_ops(t["artifacts"])
    if t.get("transfer_to_agent") is not None:
        tool_context.actions.transfer_to_agent = t["transfer_to_agent"]
    if t.get("escalate"):
        tool_context.actions.escalate = True
    if t.get("skip_summarization"):
        tool_context.actions.skip_summarization = True
    if t.get("raise"):
        raise PyError(t["raise"])
    if t.get("return_args"):
        return call_args
    if t.get("return_artifacts"):
        return {"artifacts": artifact_results}
    if t.get("has_return"):
        return t.get("return")
    return None


def _agent(ctx):
    return {"agent": ctx.agent_name}


def _tool(tool, args, ctx):
    return {"agent": ctx.agent_name, "tool": tool.name, "args": json.loads(json.dumps(args or {}))}


@callback("before_agent")
def before_agent(callback_context):
    return first("before_agent", _agent(callback_context))


@callback("after_agent")
def after_agent(callback_context):
    return first("after_agent", _agent(callback_context))


@callback("before_model")
def before_model(callback_context, llm_request):
    return first("before_model", _agent(callback_context), None, llm_request)


@callback("after_model")
def after_model(callback_context, llm_response):
    return first("after_model", _agent(callback_context))


@callback("on_model_error")
def on_model_error(callback_context, llm_request, error):
    return first("on_model_error", dict(_agent(callback_context), error=str(error)), None, llm_request)


@callback("before_tool")
def before_tool(tool, args, tool_context):
    return first("before_tool", _tool(tool, args, tool_context), args)


@callback("after_tool")
def after_tool(tool, args, tool_context, tool_response):
    return first("after_tool", _tool(tool, args, tool_context), args)


@callback("on_tool_error")
def on_tool_error(tool, args, tool_context, error):
    return first("on_tool_error", dict(_tool(tool, args, tool_context), error=str(error)), args)


class RunHooks(BasePlugin):
    """The run-level hooks, which only a plugin has."""

    async def on_user_message_callback(self, *, invocation_context, user_message):
        return first("on_user_message", _agent(invocation_context))

    async def before_run_callback(self, *, invocation_context):
        return first("before_run", _agent(invocation_context))

    async def on_event_callback(self, *, invocation_context, event):
        upd = first("on_event", {"author": event.author})
        if upd is None:
            return None
        # The event with the item's fields replaced (google-adk merges the
        # fields a replacement sets onto the event).
        out = event.model_dump()
        if upd.get("content") is not None:
            out["content"] = upd["content"]
        if upd.get("custom_metadata") is not None:
            out["customMetadata"] = upd["custom_metadata"]
        return out

    async def after_run_callback(self, *, invocation_context):
        first("after_run", _agent(invocation_context))

    async def on_agent_error_callback(self, *, agent, callback_context, error):
        try:
            first("on_agent_error", dict(_agent(callback_context), error=str(error)))
        except Exception:
            pass

    async def on_run_error_callback(self, *, invocation_context, error):
        try:
            first("on_run_error", dict(_agent(invocation_context), error=str(error)))
        except Exception:
            pass


run_hooks = RunHooks(name="conformance_run_hooks")
