"""FunctionTool and LongRunningFunctionTool: wrapping a function registers
it as one of the module's tools, as adkhost.tool does."""

import adkhost
from adkhost import _registry


class FunctionTool:
    _long_running = False

    def __init__(self, func, *, require_confirmation=False):
        if require_confirmation:
            raise NotImplementedError("require_confirmation: call tool_context.request_confirmation() in the tool instead")
        self.func = func
        self.name = func.__name__
        if not any(t.func is func for t in _registry.tools):
            adkhost.tool(func, long_running=self._long_running)


class LongRunningFunctionTool(FunctionTool):
    _long_running = True
