from .function_tool import LongRunningFunctionTool  # noqa: F401
