"""A before_tool callback answering with the user's confirmation of the
call, as google-adk's tool_context.tool_confirmation shows it
(context_test.go: TestBeforeToolConfirmation)."""

from google.adk.agents import Agent


def see_confirmation(tool, args, tool_context):
    c = tool_context.tool_confirmation
    if c is None:
        return None
    return {"confirmed": c.confirmed, "hint": c.hint, "by": "callback"}


root_agent = Agent(name="confirm", model="gemini-2.5-flash", before_tool_callback=see_confirmation)
