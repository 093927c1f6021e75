"""adkhost: google-adk style tools, callbacks and plugins as sandboxed
WebAssembly modules (ABI v1, abi/ABI.md).

    from adkhost import tool, ToolContext

    @tool
    def get_weather(city: str, tool_context: ToolContext = None) -> dict:
        \"\"\"Returns the forecast for a city.\"\"\"
        tool_context.state["last_city"] = city
        return {"city": city, "forecast": "sunny"}

`adkhost module build weather.py` imports the file at build time and
snapshots the interpreter; sdk/python/README.md has the whole guide.
"""

from . import _registry
from ._context import (BaseTool, CallbackContext, Context, EventActions, HostError, InvocationContext,
                       ReadonlyContext, State, ToolConfirmation, ToolContext)
from ._plugin import BasePlugin

__all__ = ["tool", "callback", "plugin", "capabilities", "module", "ToolContext", "CallbackContext",
           "Context", "ReadonlyContext", "InvocationContext", "State", "EventActions",
           "ToolConfirmation", "BasePlugin", "BaseTool", "HostError", "log"]


def tool(func=None, *, name=None, long_running=False):
    """Declares a function as a tool, as google-adk's FunctionTool wraps it:
    the declaration comes from its name, signature, type hints and docstring;
    a parameter typed ToolContext (or named tool_context) receives the
    context. long_running=True is google-adk's LongRunningFunctionTool."""
    def register(f):
        _registry.tools.append(_registry.RegisteredTool(f, name or f.__name__, long_running))
        return f
    if func is None:
        return register
    return register(func)


def callback(hook):
    """Declares an agent callback with google-adk's signature, for the hook
    named as in ABI.md (before_model, after_tool, ...):

        @callback("before_model")
        def guard(callback_context, llm_request): ...
    """
    if hook not in _registry.AGENT_HOOKS:
        raise ValueError(f"unknown callback {hook!r}: one of {', '.join(_registry.AGENT_HOOKS)}")

    def register(f):
        if hook in _registry.callbacks:
            raise ValueError(f"a second {hook} callback: a module has one function per hook")
        _registry.callbacks[hook] = f
        return f
    return register


def plugin(instance):
    """Registers a BasePlugin instance: its overridden *_callback methods
    become the module's hooks. Module-level instances are found without it."""
    if instance not in _registry.plugins:
        _registry.plugins.append(instance)
    return instance


def capabilities(*names):
    """The capabilities the module asks for (ABI.md §8): state, actions,
    artifacts, config, http, memory, fs, env, clock, random."""
    for n in names:
        if n not in _registry.CAPABILITIES:
            raise ValueError(f"unknown capability {n!r}: one of {', '.join(_registry.CAPABILITIES)}")
        if n not in _registry.capabilities:
            _registry.capabilities.append(n)


def module(name=None, version=None):
    """The module's name and version in its describe message (the default
    name is the file's)."""
    if name:
        _registry.module_name = name
    if version:
        _registry.module_version = version


def log(message, level="info"):
    """A log line through the host (no capability needed)."""
    from . import _host
    _host.log(level, message)
