"""Tools that use every host function through google-adk's ToolContext
(context_test.go runs them in an engine turn)."""

import adkhost
from adkhost import HostError, ToolContext, tool
from google.genai import types

adkhost.capabilities("state", "actions", "artifacts", "memory", "config")


@tool
async def context_tour(note: str, tool_context: ToolContext) -> dict:
    """Touches state, artifacts, memory, config and the invocation info."""
    st = tool_context.state
    st["note"] = note
    st["temp:scratch"] = [1, 2]
    out = {"read_back": st["note"], "has_note": "note" in st, "missing": st.get("nope", "default")}
    try:
        st["user:name"] = "Ada"
    except HostError as e:
        out["user_write"] = str(e)
    del st["temp:scratch"]
    out["deleted"] = st.get("temp:scratch", "gone")
    version = await tool_context.save_artifact("notes.txt", types.Part(text=note))
    part = await tool_context.load_artifact("notes.txt")
    out["artifact"] = {"version": version, "text": part.text, "names": await tool_context.list_artifacts(),
                       "absent": await tool_context.load_artifact("nope.txt")}
    mem = await tool_context.search_memory("tea")
    out["memories"] = len(mem.memories)
    out["greeting"] = tool_context.get_config("greeting")
    out["ids"] = [tool_context.function_call_id, tool_context.agent_name, tool_context.user_id]
    return out


@tool
def finish(tool_context: ToolContext) -> str:
    """Asks to skip summarization."""
    tool_context.actions.skip_summarization = True
    return "done"


@tool
def needs_ok(amount: int, tool_context: ToolContext) -> dict:
    """Asks the user to confirm, then answers with the confirmation."""
    if not tool_context.tool_confirmation:
        tool_context.request_confirmation(hint=f"pay {amount}?", payload={"amount": amount})
        return {"error": "This tool call requires confirmation, please approve or reject."}
    return {"confirmed": tool_context.tool_confirmation.confirmed}


@tool
def fails(x: int) -> int:
    """Raises."""
    return 10 // x


@tool
def lazy_imports(when: str) -> dict:
    """Imports inside the function, at run time: preloaded modules work
    (datetime.strptime itself imports _strptime lazily); others cannot be
    read from a filesystem."""
    import datetime
    import uuid
    out = {"parsed": datetime.datetime.strptime(when, "%Y-%m-%d").strftime("%d/%m/%Y"),
           "uuid_len": len(str(uuid.uuid4()))}
    try:
        import wave  # noqa: F401  (in the standard library, not preloaded)
        out["wave"] = "imported"
    except ImportError as e:
        out["wave"] = type(e).__name__
    return out
