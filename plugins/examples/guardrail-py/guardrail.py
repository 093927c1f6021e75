"""A google-adk before_model callback, unchanged: it imports google.adk and
google.genai as it would under google-adk (the shim inside the module
answers them) and is named by a module-level Agent's
before_model_callback. A request whose latest user text contains BLOCK is
answered by the callback; the model never sees it."""

from typing import Optional

from google.adk.agents import Agent
from google.adk.agents.callback_context import CallbackContext
from google.adk.models import LlmRequest, LlmResponse
from google.genai import types

REFUSAL = "Sorry, I can't help with that: the request was blocked by policy."


def block_keyword_guardrail(callback_context: CallbackContext, llm_request: LlmRequest) -> Optional[LlmResponse]:
    last_user_text = ""
    for content in reversed(llm_request.contents or []):
        if content.role == "user":
            last_user_text = "".join(p.text or "" for p in content.parts or [])
            break
    if "BLOCK" in last_user_text:
        import adkhost
        adkhost.log(f"guardrail-py: request blocked for agent {callback_context.agent_name}", "warn")
        return LlmResponse(content=types.Content(role="model", parts=[types.Part(text=REFUSAL)]))
    return None


root_agent = Agent(name="guarded", model="gemini-2.5-flash", before_model_callback=block_keyword_guardrail)
