"""A google-adk function tool, built into a sandboxed module with
`adkhost module build weather.py` (plugins/examples/README.md). The body is
what it would be under google-adk: a dict result, state through the
ToolContext, an exception for bad input."""

import adkhost
from adkhost import ToolContext, tool

# The tool writes state: the app grants it (adkhost.modules.weather-py.grants).
adkhost.capabilities("state")

_FORECASTS = {"paris": ("sunny", 7), "tokyo": ("rainy", 18), "rome": ("cloudy", 14)}


@tool
def get_weather(city: str, days: int = 1, tool_context: ToolContext = None) -> dict:
    """Returns the forecast for a city.

    Args:
      city: the city, e.g. Paris.
      days: how many days ahead.
    """
    name = city.strip()
    if not name:
        raise ValueError("city must not be empty")
    condition, temp = _FORECASTS.get(name.lower(), ("windy", 10))
    tool_context.state["last_city"] = name
    visits = tool_context.state.get("user:weather_calls", 0)
    return {"city": name, "condition": condition, "temperatureC": temp, "days": days,
            "previous_calls": visits}
