"""What a module provides: its tools, callbacks, plugins and capabilities,
collected at build time (decorators run when the user's module is imported
in the snapshot)."""

# Hook names of ABI v1 (ABI.md §1) and the google-adk callback each mirrors.
AGENT_HOOKS = ("before_agent", "after_agent", "before_model", "after_model", "on_model_error",
               "before_tool", "after_tool", "on_tool_error")
PLUGIN_ONLY_HOOKS = ("on_user_message", "before_run", "on_event", "after_run", "on_agent_error",
                     "on_run_error")
CAPABILITIES = ("state", "actions", "artifacts", "config", "http", "memory", "fs", "env", "clock",
                "random")


class RegisteredTool:
    def __init__(self, func, name, long_running):
        self.func = func
        self.name = name
        self.long_running = long_running
        self.declaration = None


tools = []
callbacks = {}   # hook -> function with google-adk's callback signature
plugins = []     # BasePlugin instances
capabilities = []
module_name = None
module_version = None
