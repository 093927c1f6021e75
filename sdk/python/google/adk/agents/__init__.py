"""Agent/LlmAgent: a module-level agent says which functions are the
module's tools and callbacks; the rest of its configuration (model,
instruction) belongs in the app definition, not in the module."""

import adkhost
from adkhost import CallbackContext, InvocationContext, ReadonlyContext  # noqa: F401
from adkhost import _registry

_CALLBACKS = {"before_agent_callback": "before_agent", "after_agent_callback": "after_agent",
              "before_model_callback": "before_model", "after_model_callback": "after_model",
              "on_model_error_callback": "on_model_error", "before_tool_callback": "before_tool",
              "after_tool_callback": "after_tool", "on_tool_error_callback": "on_tool_error"}


class LlmAgent:
    def __init__(self, *, name="agent", tools=(), **kw):
        self.name = name
        for t in tools or ():
            if callable(t) and not hasattr(t, "func") and not any(r.func is t for r in _registry.tools):
                adkhost.tool(t)
        for key, hook in _CALLBACKS.items():
            fn = kw.get(key)
            if isinstance(fn, (list, tuple)):
                if len(fn) > 1:
                    raise ValueError(f"{key}: a module has one function per hook; give it one")
                fn = fn[0] if fn else None
            if fn is not None:
                adkhost.callback(hook)(fn)


Agent = LlmAgent
