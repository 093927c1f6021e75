"""adkhost's google.adk shim: ToolContext, CallbackContext, BasePlugin,
LlmRequest/LlmResponse, Event, and Agent/FunctionTool to say which functions
are tools and callbacks (sdk/python/README.md)."""
from .agents import Agent  # noqa: F401
