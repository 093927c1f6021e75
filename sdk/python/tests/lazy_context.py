"""A tool that reports its context (lazy_context_test.go): whether the
invocation info was still undecoded when the tool began, and what it reads."""

from adkhost import ToolContext, tool


@tool
def info(tool_context: ToolContext) -> dict:
    """Reads the invocation info."""
    undecoded = "_raw" in vars(tool_context)
    return {"agent": tool_context.agent_name, "call": tool_context.function_call_id,
            "text": tool_context.user_content.parts[0].text if tool_context.user_content else None,
            "undecoded": undecoded}
