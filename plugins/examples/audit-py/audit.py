"""A google-adk plugin (BasePlugin), as a sandboxed module: it counts each
tool call in the session state (capability `state`), marks every tool
result as audited, and logs the run's start."""

import adkhost
from google.adk.plugins.base_plugin import BasePlugin

adkhost.capabilities("state")


class AuditPlugin(BasePlugin):
    async def before_run_callback(self, *, invocation_context):
        adkhost.log(f"audit-py: run {invocation_context.invocation_id} for {invocation_context.user_id}")
        return None

    async def after_tool_callback(self, *, tool, tool_args, tool_context, result):
        calls = tool_context.state.get("audit_tool_calls", 0) + 1
        tool_context.state["audit_tool_calls"] = calls
        return dict(result, audited_by="audit-py", call_number=calls)


audit = AuditPlugin(name="audit")
