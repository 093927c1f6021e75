"""A plugin's before_tool_callback answering with the user's confirmation
of the call (context_test.go: TestBeforeToolConfirmation)."""

from google.adk.plugins.base_plugin import BasePlugin


class SeeConfirmation(BasePlugin):
    async def before_tool_callback(self, *, tool, tool_args, tool_context):
        c = tool_context.tool_confirmation
        if c is None:
            return None
        return {"confirmed": c.confirmed, "hint": c.hint, "by": "plugin"}


plugin = SeeConfirmation(name="see_confirmation")
