"""The demo's Python tool (`make demo`): a google-adk function tool, built
into a sandboxed module with `adkhost module build wear.py`. It needs no
capability: it only computes from its arguments."""

from adkhost import tool


@tool
def what_to_wear(city: str, condition: str, temperature_c: int) -> dict:
    """Advises what to wear for a forecast.

    Args:
      city: the city the forecast is for.
      condition: the sky, e.g. sunny, rainy.
      temperature_c: the temperature in degrees Celsius.
    """
    if temperature_c < 10:
        advice = "a warm coat"
    elif temperature_c < 18:
        advice = "a light jacket"
    else:
        advice = "a T-shirt"
    if condition.lower() in ("rainy", "showers", "stormy"):
        advice += " and an umbrella"
    # The forecast it advised on comes back with the advice.
    return {"city": city, "condition": condition, "temperatureC": temperature_c,
            "advice": advice}
