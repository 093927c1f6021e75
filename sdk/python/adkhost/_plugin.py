"""google-adk's BasePlugin: subclass it and override the *_callback methods;
the module exports the hook of each one overridden."""

# google-adk callback method -> ABI hook.
METHODS = {
    "on_user_message_callback": "on_user_message",
    "before_run_callback": "before_run",
    "on_event_callback": "on_event",
    "after_run_callback": "after_run",
    "on_run_error_callback": "on_run_error",
    "before_agent_callback": "before_agent",
    "after_agent_callback": "after_agent",
    "on_agent_error_callback": "on_agent_error",
    "before_model_callback": "before_model",
    "after_model_callback": "after_model",
    "on_model_error_callback": "on_model_error",
    "before_tool_callback": "before_tool",
    "after_tool_callback": "after_tool",
    "on_tool_error_callback": "on_tool_error",
}


class BasePlugin:
    def __init__(self, name="plugin"):
        self.name = name

    async def on_user_message_callback(self, *, invocation_context, user_message):
        return None

    async def before_run_callback(self, *, invocation_context):
        return None

    async def on_event_callback(self, *, invocation_context, event):
        return None

    async def after_run_callback(self, *, invocation_context):
        return None

    async def on_run_error_callback(self, *, invocation_context, error):
        return None

    async def before_agent_callback(self, *, agent, callback_context):
        return None

    async def after_agent_callback(self, *, agent, callback_context):
        return None

    async def on_agent_error_callback(self, *, agent, callback_context, error):
        return None

    async def before_model_callback(self, *, callback_context, llm_request):
        return None

    async def after_model_callback(self, *, callback_context, llm_response):
        return None

    async def on_model_error_callback(self, *, callback_context, llm_request, error):
        return None

    async def before_tool_callback(self, *, tool, tool_args, tool_context):
        return None

    async def after_tool_callback(self, *, tool, tool_args, tool_context, result):
        return None

    async def on_tool_error_callback(self, *, tool, tool_args, tool_context, error):
        return None

    def _overridden(self):
        """The google-adk methods this plugin's class overrides."""
        return [m for m in METHODS if getattr(type(self), m) is not getattr(BasePlugin, m)]
