"""A table of tool signatures whose declarations must equal google-adk's
(declaration_test.go builds this file into a module and compares its
describe message with what google-adk 2.13 declares for each function)."""

import enum
from typing import Any, Dict, List, Literal, Optional, Union

from adkhost import tool, ToolContext


class Color(enum.Enum):
    RED = "red"
    GREEN = "green"


class Level(enum.IntEnum):
    """How loud."""
    LOW = 1
    HIGH = 2


@tool
def scalars(city: str, days: int, ratio: float, metric: bool) -> dict:
    """Returns the forecast for a city.

    Args:
      city: the city.
    """
    return {}


@tool
def defaults(city: str, days: int = 1, unit: str = "C", ratio: float = 0.5, metric: bool = True,
             tool_context: ToolContext = None) -> dict:
    return {}


@tool
def optionals(a: Optional[str], b: Optional[int] = None, c: str | None = None, d: Union[int, str] = 3):
    """Optionals and unions."""


@tool
def containers(xs: list[str], ys: List[int], m: dict, n: Dict[str, float], o: dict[str, Any],
               p: list, q: list[dict[str, int]], r: Optional[list[str]] = None, s: set[int] = frozenset(),
               t: tuple[int, str] = (1, "a")):
    """Containers."""


@tool
def literals(mode: Literal["fast", "slow"], one: Literal["x"], n: Literal[1, 2] = 1,
             color: Color = Color.RED, level: Optional[Level] = None, colors: list[Color] = []):
    """Literals and enums."""


@tool
def untyped(a, b=2, *args, c: Any = None, **kwargs):
    pass


@tool
def no_params(tool_context: ToolContext) -> str:
    """Takes nothing."""
    return "ok"


@tool
def renamed_ctx(query: str, ctx: ToolContext) -> str:
    return query


@tool
async def asynchronous(query: str, limit: int = 10) -> list[str]:
    """An async tool."""
    return [query] * limit
