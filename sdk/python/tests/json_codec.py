"""adkhost._obj's dumps and loads against the json module they shortcut:
the same bytes out and the same values in, and the same refusals."""

import enum
import json
import sys

from adkhost._obj import Obj, dumps, json_default, loads


class Color(enum.Enum):
    RED = "red"


def main():
    values = [
        {"a": 1, "b": [1.5, 2e300, -0.0, 10**30, "é\u2028\"\\\x01"], "c": None, "d": True},
        [], {}, "plain", "é", 1, 1.0, None, False,
        {"enum": Color.RED, "set": {3}, "obj": Obj({"k": "v"}), "t": (1, 2)},
        {"nan": float("nan"), "inf": float("inf")},
        {1: "int key", None: "none key", 2.5: "float key"},
    ]
    for v in values:
        want = json.dumps(v, separators=(",", ":"), ensure_ascii=False, default=json_default).encode("utf-8")
        got = dumps(v)
        if got != want:
            sys.exit(f"dumps({v!r}) = {got!r}, want {want!r}")
    loop = []
    loop.append(loop)
    for bad in (loop, {"x": object()}):
        try:
            dumps(bad)
        except (ValueError, TypeError):
            pass
        else:
            sys.exit(f"dumps({bad!r}) did not fail")
    # The shared encoder after a failure: no stale circular-reference
    # marker refuses the next value (ids are reused once objects are freed).
    from adkhost import _obj
    if _obj._MARKERS:
        sys.exit(f"markers left after failures: {_obj._MARKERS!r}")
    for _ in range(3):
        try:
            dumps([{"x": object()}])
        except (ValueError, TypeError):
            pass
        v = [{"x": 1}]
        if dumps(v) != b'[{"x":1}]':
            sys.exit(f"dumps after a failure: {dumps(v)!r}")

    class Model:
        # A value whose conversion calls dumps itself, while the shared
        # encoder is busy with the outer value.
        def model_dump(self):
            return {"inner": dumps({"k": [1, 2]}).decode()}

    want = json.dumps({"m": Model()}, separators=(",", ":"), ensure_ascii=False, default=json_default).encode()
    if dumps({"m": Model()}) != want or dumps([Model(), {"a": Model()}]) != b'[{"inner":"{\\"k\\":[1,2]}"},{"a":{"inner":"{\\"k\\":[1,2]}"}}]':
        sys.exit(f"nested dumps: {dumps({'m': Model()})!r}, want {want!r}")
    for raw in [b'{"a":1,"b":[true,null,"\\u00e9"]}', b' {"a":1} ', b"[1,2", b'{"a":1}x', '"é"'.encode(),
                b"1e400", b'{"a":NaN}', b"", b"  ", b'"\\ud800"', b'{"a":1,"a":2}']:
        try:
            want = ("ok", repr(json.loads(raw)))
        except ValueError as e:
            want = ("error", type(e).__name__)
        try:
            got = ("ok", repr(loads(raw)))
        except ValueError as e:
            got = ("error", type(e).__name__)
        if got != want:
            sys.exit(f"loads({raw!r}) = {got}, want {want}")
    print("ok")


main()
