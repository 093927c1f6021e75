"""The runtime's C decoder (_adkhost.loads) against json.loads, in the
sandbox (c_loads_test.go): the same values (it answers a 1-tuple), of the same types, for what it
decodes, and None, never a wrong value or an exception, for what it leaves
to the json module. The C dispatch of tool_call beside the Python one:
each tool here answers as _tool_call would."""

import base64
import sys
import enum
import json

import _adkhost
from adkhost import tool, ToolContext
from adkhost._obj import Obj


def same(a, b):
    """a and b equal and of the same types all the way down (key order,
    int vs float, -0.0, nan, lone surrogates); a loop, not recursion (the
    tables nest past the interpreter's recursion limit)."""
    todo = [(a, b)]
    while todo:
        a, b = todo.pop()
        if type(a) is not type(b):
            return False
        if type(a) is dict:
            if list(a) != list(b) or not all(type(k) is str for k in a):
                return False
            todo.extend((a[k], b[k]) for k in a)
        elif type(a) is list:
            if len(a) != len(b):
                return False
            todo.extend(zip(a, b))
        elif type(a) is float:
            if repr(a) != repr(b):
                return False
        elif a != b:
            return False
    return True


def _json(b):
    try:
        return json.loads(b.decode("utf-8", "surrogatepass")), None
    except Exception as e:
        return None, e


def _deep(n):
    return b"[" * n + b"]" * n


# Decoded in C, each as json.loads decodes it.
DECODED = [
    b'{}', b'[]', b' \t\n\r{"a" : 1 ,"b":[ ] }\r\n', b'{"a":1,"a":2,"b":3}', b'{"b":1,"a":2,"b":3}',
    b'{"":0}', b'0', b'-0', b'7', b'123456789012345678', b'-123456789012345678', b'999999999999999999',
    b'0.0', b'-0.0', b'1e5', b'1E+5', b'1e-5', b'-1.5e300', b'1e999', b'-1e999', b'1e-400',
    b'2.2250738585072014e-308', b'5e-324', b'0.1', b'123456789.125', b'1.7976931348623157e308', b'0e0',
    b'"plain"', b'""', b'"\\"\\\\\\/\\b\\f\\n\\r\\t"', b'"\\u00e9\\u20ac\\u0041\\u007f\\u0080\\u07ff\\u0800"',
    b'"\\ud83d\\ude00"', b'"\\uD83D\\uDE00"', b'"\\ud83d"', b'"\\ude00"', b'"\\ud83d\\u0041"', b'"\\ud83d\\n"',
    b'"\\ud83d\\ud83d\\ude00"', b'"\\udbff\\udfff"', b'"x\\ud800"', '"é€😀 \u2028"'.encode(),
    b'"\xed\xa0\x80"', b'"\xed\xa0\xbd\\ude00"', b'"\\ud83d\xed\xb8\x80"', b'"\\u0000"', b'"a\\u0000b\x7f"',
    b'"' + b'\\n\\u00e9' * 200 + b'"', b'"' + b'x' * 5000 + b'\\t"', b'"' + 'é'.encode() * 300 + b'\\/"',
    b'true', b'false', b'null', b'[true,false,null]', b'[1,2.5,"3",[4],{"5":5}]',
    b'{"a":[{"b":null,"c":{"d":[1e2,-2,"\\u00ff"]}}]}', _deep(200), b'{"k":' * 100 + b'1' + b'}' * 100,
    json.dumps({"tool": "get_weather", "args": {"city": "Paris", "days": 3}}).encode(),
]

# Left to the json module (a value or an error there).
LEFT = [
    b'NaN', b'[Infinity]', b'-Infinity', b'{"x":NaN}', b'"\x01"', b'"a\nb"', b'"\\x"', b'"\\u12"', b'"\\u12g4"',
    b'"\\ud800\\uzzzz"', b'"\\ud800\\u12"', b'01', b'-01', b'1.', b'.5', b'-', b'+1', b'1e', b'1e+', b'[1,]',
    b'{"a":1,}', b'{"a"}', b'{"a":}', b'', b'   ', b'"unterminated', b'"\\', b'"\\"', b'\xff', b'"\xff"',
    b'"\xc3"', b'"\xc3("', b'"\xf4\x90\x80\x80"', b'"\xc0\x80"', b'tru', b'nul', b'falsey', b'[1] x', b'{1:2}',
    b"'a'", b'\xef\xbb\xbf{}', b'1' * 19, b'-' + b'1' * 19, b'10' * 2500, b'1.' + b'0' * 70, b'[' * 201 + b']' * 201,
    _deep(300), b'{"a":1}}', b'[1 2]', b'{"a" 1}', b'[', b'{', b'{"a":[}', b'\x00', b'[1]\x00',
]


@tool
def check() -> dict:
    """Compares the C decoder with json.loads on the tables."""
    out = {"decoded": 0, "left": 0}
    for b in DECODED:
        got = _adkhost.loads(b)
        want, err = _json(b)
        if got is None or err is not None or not same(got[0], want):
            return {"error": f"_adkhost.loads({b[:80]!r}) = {got!r:.80}, json.loads: {want!r:.80} {err!r}"}
        out["decoded"] += 1
    for b in LEFT:
        got = _adkhost.loads(b)
        if got is not None:
            return {"error": f"_adkhost.loads({b[:80]!r}) decoded {got!r:.80}, want None"}
        out["left"] += 1
    return out


@tool
def compare(data: str) -> dict:
    """The fuzz target's half: data is base64; the C decoder's value must
    be json.loads's, where it gives one."""
    b = base64.b64decode(data)
    got = _adkhost.loads(b)
    if got is None:
        return {"c": False, "same": True}
    want, err = _json(b)
    return {"c": True, "same": err is None and same(got[0], want)}


class Color(enum.Enum):
    RED = "red"


@tool
def kinds(s: str, n: int = 0, f: float = 0.0, flag: bool = False, items: list = None, tool_context: ToolContext = None) -> dict:
    """The arguments as they arrive: values, types, the context."""
    return {"s": s, "n": [n, type(n).__name__], "f": [f, type(f).__name__], "flag": flag, "items": items,
            "agent": tool_context.agent_name, "ctx": type(tool_context).__name__}


@tool
def colored(color: Color) -> str:
    """An enum parameter: _tool_call's conversion."""
    return color.name


@tool
def raises(x: int) -> dict:
    """An exception: the hook's error."""
    raise KeyError(f"no {x}")


@tool
def obj() -> Obj:
    """A result the C writer leaves to the json module."""
    return Obj({"k": [1, Color.RED]})


@tool
async def later(x: int) -> list:
    """An async tool, awaited."""
    return [x, x]


@tool
def nan() -> float:
    """A result json writes and the C writer leaves."""
    return float("nan")


@tool
def caller(x: int = 0) -> str:
    """Who called the tool: no Python frame when the runtime's C dispatch
    did, _tool_call's otherwise."""
    f = sys._getframe(1) if sys._getframe().f_back is not None else None
    return "C" if f is None else f.f_code.co_name
