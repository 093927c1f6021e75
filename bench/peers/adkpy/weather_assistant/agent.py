"""The peer benchmark's app for google-adk's `adk api_server`.

The same app as bench/cmd/adkgoserver and adkhost's: one LlmAgent, a
scripted model that answers a user message with a get_weather function
call and the function response with text, one Python function tool.
"""

from typing import AsyncGenerator

from google.adk.agents import LlmAgent
from google.adk.models.base_llm import BaseLlm
from google.adk.models.llm_request import LlmRequest
from google.adk.models.llm_response import LlmResponse
from google.genai import types


class ScriptedLlm(BaseLlm):
    """Answers by the request's last content, keeping no state."""

    async def generate_content_async(
        self, llm_request: LlmRequest, stream: bool = False
    ) -> AsyncGenerator[LlmResponse, None]:
        last = llm_request.contents[-1]
        if last.parts and last.parts[0].function_response is not None:
            part = types.Part(text="It is sunny in Paris.")
        else:
            part = types.Part(
                function_call=types.FunctionCall(name="get_weather", args={"city": "Paris"})
            )
        yield LlmResponse(content=types.Content(role="model", parts=[part]), turn_complete=True)


def get_weather(city: str) -> dict:
    """Returns the weather forecast of a city."""
    return {"city": city, "condition": "sunny", "temperatureC": 21}


root_agent = LlmAgent(
    name="weather_assistant",
    description="Answers weather questions.",
    model=ScriptedLlm(model="scripted"),
    instruction="Call get_weather for the city they ask about.",
    tools=[get_weather],
)
