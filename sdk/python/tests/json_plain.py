"""The runtime's C writer of plain values (_adkhost.dumps) against the json
module, in the sandbox (plain_dumps_test.go): the same bytes for what it
writes, None for what it leaves to the json module, and the SDK's dumps the
same bytes and refusals either way."""

import enum
import json

import _adkhost
from adkhost import tool
from adkhost._obj import Obj, dumps, json_default


class Color(enum.Enum):
    RED = "red"


class Str(str):
    pass


def _want(v):
    return json.dumps(v, separators=(",", ":"), ensure_ascii=False, default=json_default).encode("utf-8")


@tool
def check() -> dict:
    """Compares the C writer with the json module."""
    deep = []
    for _ in range(150):
        deep = [deep]
    plain = [
        {"a": 1, "b": [1.5, 2e300, -0.0, 1e-7, 0.1, 10**30, -5, "é\u2028\"\\\x01\x1f\x7f/"], "c": None, "d": True},
        [], {}, "", "plain", "é€😀", 1, 0, -1, 1.0, 21.0, 123456789.125, None, False, True, (1, "t"), deep,
        {"k": {"nested": [{}, [], [[]]], "tab\there": "\b\f\n\r\t"}},
    ]
    left = [
        {"enum": Color.RED}, {"set": {3}}, Obj({"k": "v"}), {1: "int key"}, {None: "none key"}, {Str("k"): 1},
        [Str("sub")], float("nan"), [float("inf")], {"x": -float("inf")}, "\udc80", True.__class__, [[[]] * 2] * 3,
    ]
    for _ in range(60):
        deep = [deep]
    left.append(deep)
    out = {"plain": 0, "left": 0}
    for v in plain:
        got = _adkhost.dumps(v)
        if got != _want(v):
            return {"error": f"_adkhost.dumps({v!r}) = {got!r}, want {_want(v)!r}"}
        out["plain"] += 1
    for v in left:
        if v is left[-2]:
            v = [[[]] * 2] * 3  # shared (not circular) lists are plain
            if _adkhost.dumps(v) != _want(v):
                return {"error": f"shared lists: {_adkhost.dumps(v)!r}"}
            continue
        if _adkhost.dumps(v) is not None:
            return {"error": f"_adkhost.dumps({v!r}) wrote {_adkhost.dumps(v)!r}, want None"}
        try:
            want = _want(v)
        except Exception as e:
            want = type(e)
        try:
            got = dumps(v)
        except Exception as e:
            got = type(e)
        if got != want:
            return {"error": f"dumps({v!r}) = {got!r}, want {want!r}"}
        out["left"] += 1
    loop = []
    loop.append(loop)
    if _adkhost.dumps(loop) is not None:
        return {"error": "a cycle was written"}
    try:
        dumps(loop)
        return {"error": "dumps of a cycle did not fail"}
    except ValueError:
        pass
    return out
