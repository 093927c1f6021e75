from adkhost import BaseTool, ToolContext  # noqa: F401

from .function_tool import FunctionTool, LongRunningFunctionTool  # noqa: F401

__all__ = ["BaseTool", "ToolContext", "FunctionTool", "LongRunningFunctionTool"]
