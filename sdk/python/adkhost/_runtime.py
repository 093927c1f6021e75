"""The runtime side of a Python module: load() runs at build time inside the
snapshot (imports the user's module, collects what it provides, builds the
describe message); dispatch() answers every hook at run time and never
raises (a Python exception becomes the hook's "error", ABI.md §6)."""

import enum
import importlib
import inspect
import json
import re
import sys
import traceback
import typing

from . import _host, _registry, _schema
from ._context import BaseTool, Context, InvocationContext
from ._obj import Obj, dumps, loads, wrap
from ._plugin import METHODS, BasePlugin

_describe = b""
_tools = {}
# hook -> list of callables taking the decoded input, answering the output dict or None.
_handlers = {}
# hook -> its one handler, once load() checked that there is one per hook.
_handler = {}
# tool name -> what the runtime's C dispatch of tool_call (main.c,
# tool_call) needs to call it without _tool_call: (func, parameter names,
# required names, the context parameter or None, float parameters). A tool
# with enum parameters is left out: _tool_call converts them.
_fast = {}

# Imported at build time so that tools may import them lazily at run time:
# nothing is read from a filesystem once the module is snapshotted. The
# standard library's own lazy imports are here (_strptime for
# datetime.strptime); the rest is what tools commonly import inside
# functions. Each costs snapshot size (this list: about 2 MB); a module
# imports anything else at its top.
PRELOAD = ("json", "re", "math", "random", "datetime", "_strptime", "time", "enum", "typing",
           "dataclasses", "collections", "collections.abc", "functools", "itertools", "string",
           "textwrap", "base64", "hashlib", "uuid", "copy", "urllib.parse", "operator", "contextlib",
           "abc", "types", "inspect", "traceback", "struct", "binascii", "io", "unicodedata", "zlib",
           "encodings.idna", "encodings.utf_8", "encodings.latin_1", "encodings.ascii")


def _out(**fields):
    fields["abiVersion"] = 1
    return dumps(fields)


def _error_text(e):
    msg = str(e)
    return f"{type(e).__name__}: {msg}" if msg else type(e).__name__


# What a tool or callback returns most often: never awaitable.
_PLAIN = frozenset({dict, list, str, int, float, bool, type(None), tuple})


def _await(value):
    """Runs a coroutine to completion: the sandbox has no event loop, and an
    await that really suspends (a timer, a socket) cannot complete."""
    if type(value) in _PLAIN or not inspect.isawaitable(value):
        return value
    coro = value.__await__() if not inspect.iscoroutine(value) else value
    for _ in range(100000):
        try:
            coro.send(None)
        except StopIteration as stop:
            return stop.value
    coro.close()
    raise RuntimeError("a coroutine kept suspending: the sandbox has no event loop (no sleep, sockets or timers)")


def load(main):
    """Imports the user's module (build time) and prepares describe."""
    global _describe
    for name in PRELOAD:
        try:
            importlib.import_module(name)
        except ImportError:
            pass
    import os
    for cap in filter(None, os.environ.get("ADKHOST_PY_CAPABILITIES", "").split(",")):
        from . import capabilities
        capabilities(cap.strip())
    mod = importlib.import_module(main)
    for name, value in vars(mod).items():
        if isinstance(value, BasePlugin) and value not in _registry.plugins:
            _registry.plugins.append(value)
    tools = []
    seen = set()
    for t in _registry.tools:
        if t.name in seen:
            raise ValueError(f"two tools named {t.name!r}")
        seen.add(t.name)
        d = _schema.declaration(t.func, t.name)
        decl = {"name": t.name, "description": d.get("description", "")}
        if "parametersJsonSchema" in d:
            decl["parameters"] = d["parametersJsonSchema"]
        if t.long_running:
            decl["longRunning"] = True
        tools.append(decl)
        prep = _tools[t.name] = _Prepared(t)
        if not prep.enums:
            _fast[t.name] = (prep.func, prep.names, tuple(prep.required), prep.ctx_name, tuple(sorted(prep.floats)))
    hooks = []
    if tools:
        hooks.append("tool_call")
        _handlers["tool_call"] = [_tool_call]
    for hook, fn in _registry.callbacks.items():
        _handlers.setdefault(hook, []).append(_callback_handler(hook, fn))
    for p in _registry.plugins:
        for method in p._overridden():
            hook = METHODS[method]
            _handlers.setdefault(hook, []).append(_plugin_handler(hook, getattr(p, method)))
    for hook in _registry.AGENT_HOOKS + _registry.PLUGIN_ONLY_HOOKS:
        if hook in _handlers:
            if len(_handlers[hook]) > 1:
                raise ValueError(f"{hook} is implemented twice (a callback and a plugin, or two plugins): "
                                 "a module has one implementation per hook")
            hooks.append(hook)
    _handler.update((hook, hs[0]) for hook, hs in _handlers.items())
    name = (_registry.module_name or os.environ.get("ADKHOST_PY_NAME")
            or re.sub(r"[^A-Za-z0-9_.-]", "_", main.rsplit(".", 1)[-1]))
    desc = {"abiVersion": 1, "name": name, "tools": tools, "hooks": hooks,
            "capabilities": list(_registry.capabilities)}
    if _registry.module_version:
        desc["version"] = _registry.module_version
    _describe = json.dumps(desc, separators=(",", ":"), ensure_ascii=False).encode("utf-8")
    # The build's directories are gone at run time: an import of a module
    # not in the snapshot gets a ModuleNotFoundError that says why, instead
    # of an OSError from a path that no longer exists.
    sys.path[:] = []
    sys.path_importer_cache.clear()
    sys.meta_path.append(_NotSnapshotted())
    import gc
    gc.collect()
    gc.freeze()


class _NotSnapshotted:
    """The last import finder: what was not imported at build time."""

    def find_spec(self, name, path=None, target=None):
        raise ModuleNotFoundError(
            f"No module named {name!r} in this module's snapshot: import it at the top of your "
            "file, so that it is imported at build time (the sandbox has no filesystem)", name=name)


_seeded = False


def _reseed():
    """The snapshot holds the random module's state from build time: every
    instance would draw the same numbers. Reseed from WASI's random_get
    (real randomness under the `random` grant, deterministic without)."""
    global _seeded
    if _seeded:
        return
    _seeded = True
    import random
    random.seed()


def dispatch(hook, data, context=None):
    """Answers hook's input (data: the JSON as str, or already decoded by
    the runtime, a dict of its own). For tool_call, the runtime may cut the
    input's "context" out and pass its JSON text as bytes (context), which
    the call's Context decodes if the tool reads it: bytes are never a
    decoded JSON value, so the handlers tell it apart."""
    try:
        if hook == "describe":
            return _describe
        if not _seeded:
            _reseed()
        handler = _handler.get(hook)
        if handler is None:
            return _out(error=f"this module does not implement {hook}")
        msg = data if type(data) is dict else loads(data) if data else {}
        if context is not None:
            msg["context"] = context
        out = handler(msg)
        if out is None:
            return b""
        # Every handler answers a dict of its own.
        out["abiVersion"] = 1
        return dumps(out)
    except BaseException as e:  # SystemExit and KeyboardInterrupt too: the host must get an answer
        traceback.print_exc(file=sys.stderr)
        return _out(error=_error_text(e))


def _failed(e):
    """The output of a hook that raised e (the runtime's C dispatch)."""
    traceback.print_exception(e, file=sys.stderr)
    return _out(error=_error_text(e))


def _answer(result):
    """tool_call's output for a result the runtime's C writer leaves to
    the json module (an Obj, an enum, ...), as dispatch writes it."""
    try:
        return dumps({"result": result, "abiVersion": 1})
    except BaseException as e:
        return _failed(e)


# ---- tools


class _Prepared:
    """What a call needs of a tool's signature, worked out once at build
    time (signature and type-hint introspection cost more than the call)."""

    def __init__(self, t):
        self.tool = t
        self.func = t.func
        sig = inspect.signature(t.func)
        self.params = sig.parameters
        self.names = frozenset(self.params)
        self.ctx_name = _schema.context_param(t.func)
        if self.ctx_name not in self.params:
            self.ctx_name = None
        self.required = [n for n, p in self.params.items()
                         if p.default is p.empty and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)
                         and n != self.ctx_name and n != "input_stream"]
        self.required_set = frozenset(self.required)
        try:
            hints = typing.get_type_hints(t.func)
        except Exception:
            hints = {}
        # google-adk validates arguments against the type hints (pydantic's
        # TypeAdapter); here: enums from their values, ints as floats.
        self.enums = {k: tp for k, tp in hints.items() if inspect.isclass(tp) and issubclass(tp, enum.Enum)}
        self.floats = {k for k, tp in hints.items() if tp is float}


def _tool_call(msg):
    prep = _tools.get(msg.get("tool"))
    if prep is None:
        return {"error": f"no tool {msg.get('tool')!r} in this module"}
    args = msg.get("args") or {}
    # The decoded message is the call's own: its args dict becomes the
    # keyword arguments when every key is a parameter (checked without a
    # Python loop; a set view compares in C).
    call = args if args.keys() <= prep.names else {k: v for k, v in args.items() if k in prep.names}
    if prep.required and not call.keys() >= prep.required_set:
        missing = [n for n in prep.required if n not in call]
        return {"result": {"error": (
            f"Invoking `{prep.tool.name}()` failed as the following mandatory input parameters are not present:\n"
            + "\n".join(missing)
            + "\nYou could retry calling this tool, but it is IMPORTANT for you to provide all the mandatory parameters.")}}
    if prep.ctx_name:
        call[prep.ctx_name] = Context(msg.get("context"), msg.get("confirmation"))
    if prep.enums:
        for k, tp in prep.enums.items():
            if k in call and not isinstance(call[k], tp):
                call[k] = tp(call[k])
    if prep.floats:
        for k in prep.floats:
            v = call.get(k)
            if isinstance(v, int) and not isinstance(v, bool):
                call[k] = float(v)
    r = prep.func(**call)
    return {"result": r if type(r) in _PLAIN else _await(r)}


# ---- callbacks


def _tool_info(msg):
    return BaseTool(msg.get("tool"))


def _callback_handler(hook, fn):
    """An agent callback, called with google-adk's keyword arguments."""
    def handle(msg):
        # before_tool carries the user's confirmation of the call.
        ctx = Context(msg.get("context"), msg.get("confirmation"))
        if hook in ("before_agent", "after_agent"):
            return _content(_await(fn(callback_context=ctx)))
        if hook == "before_model":
            req = wrap(msg.get("request") or {})
            before = json.dumps(req._d, sort_keys=True)
            r = _await(fn(callback_context=ctx, llm_request=req))
            return _model_out(r, req, before)
        if hook == "after_model":
            return _model_out(_await(fn(callback_context=ctx, llm_response=wrap(msg.get("response") or {}))))
        if hook == "on_model_error":
            return _model_out(_await(fn(callback_context=ctx, llm_request=wrap(msg.get("request") or {}),
                                        error=Exception(msg.get("error", "")))))
        tool, args = _tool_info(msg), msg.get("args") or {}
        if hook == "before_tool":
            before = json.dumps(args, sort_keys=True)
            return _tool_out(_await(fn(tool=tool, args=args, tool_context=ctx)), args, before)
        if hook == "after_tool":
            return _tool_out(_await(fn(tool=tool, args=args, tool_context=ctx,
                                       tool_response=msg.get("result"))))
        if hook == "on_tool_error":
            return _tool_out(_await(fn(tool=tool, args=args, tool_context=ctx,
                                       error=Exception(msg.get("error", "")))))
        raise ValueError(hook)
    return handle


def _plugin_handler(hook, method):
    """A plugin method, called with google-adk's keyword arguments."""
    def handle(msg):
        info = msg.get("context")
        if hook in ("on_user_message", "before_run", "after_run", "on_event", "on_run_error"):
            ic = InvocationContext(info)
            if hook == "on_user_message":
                message = wrap(msg.get("message") or {})
                r = _await(method(invocation_context=ic, user_message=message))
                return None if r is None else {"message": r}
            if hook == "on_event":
                r = _await(method(invocation_context=ic, event=wrap(msg.get("event") or {})))
                return None if r is None else {"event": r}
            if hook == "on_run_error":
                _await(method(invocation_context=ic, error=Exception(msg.get("error", ""))))
                return None
            r = _await(method(invocation_context=ic))
            return _content(r) if hook == "before_run" else None
        ctx = Context(info, msg.get("confirmation"))
        agent = Obj({"name": (info or {}).get("agentName")})
        if hook in ("before_agent", "after_agent"):
            return _content(_await(method(agent=agent, callback_context=ctx)))
        if hook == "on_agent_error":
            _await(method(agent=agent, callback_context=ctx, error=Exception(msg.get("error", ""))))
            return None
        if hook == "before_model":
            req = wrap(msg.get("request") or {})
            before = json.dumps(req._d, sort_keys=True)
            return _model_out(_await(method(callback_context=ctx, llm_request=req)), req, before)
        if hook == "after_model":
            return _model_out(_await(method(callback_context=ctx, llm_response=wrap(msg.get("response") or {}))))
        if hook == "on_model_error":
            return _model_out(_await(method(callback_context=ctx, llm_request=wrap(msg.get("request") or {}),
                                            error=Exception(msg.get("error", "")))))
        tool, args = _tool_info(msg), msg.get("args") or {}
        if hook == "before_tool":
            before = json.dumps(args, sort_keys=True)
            return _tool_out(_await(method(tool=tool, tool_args=args, tool_context=ctx)), args, before)
        if hook == "after_tool":
            return _tool_out(_await(method(tool=tool, tool_args=args, tool_context=ctx,
                                           result=msg.get("result"))))
        if hook == "on_tool_error":
            return _tool_out(_await(method(tool=tool, tool_args=args, tool_context=ctx,
                                           error=Exception(msg.get("error", "")))))
        raise ValueError(hook)
    return handle


def _content(r):
    return None if r is None else {"content": r}


def _model_out(r, req=None, before=None):
    out = {}
    if r is not None:
        out["response"] = r
    if req is not None and json.dumps(req._d, sort_keys=True) != before:
        out["request"] = req
    return out or None


def _tool_out(r, args=None, before=None):
    out = {}
    if r is not None:
        out["result"] = r
    if args is not None and json.dumps(args, sort_keys=True) != before:
        out["args"] = args
    return out or None
