"""JSON-backed objects with google-adk's attribute names.

google-adk hands callbacks pydantic objects (LlmRequest, Content, Event...).
pydantic-core cannot run in the sandbox, so the ABI's JSON (camelCase, as
google-adk writes it) is wrapped: attribute `system_instruction` reads and
writes key `systemInstruction`, nested objects and lists are wrapped as they
are read, and changes land in the underlying dict.
"""

import enum
import json


def camel(name):
    head, *rest = name.split("_")
    return head + "".join(p[:1].upper() + p[1:] for p in rest)


def to_json(value):
    """Plain JSON values from wrapped objects, enums, tuples and sets."""
    if isinstance(value, Obj):
        return to_json(value._d)
    if isinstance(value, ObjList):
        return [to_json(v) for v in value._l]
    if isinstance(value, dict):
        return {str(k): to_json(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, set, frozenset)):
        return [to_json(v) for v in value]
    if isinstance(value, enum.Enum):
        return to_json(value.value)
    if isinstance(value, (bytes, bytearray)):
        import base64
        return base64.b64encode(bytes(value)).decode("ascii")
    if hasattr(value, "model_dump"):
        return to_json(value.model_dump())
    if hasattr(value, "isoformat"):
        return value.isoformat()
    return value


def json_default(value):
    """json.dumps's default=: what to_json converts, one level at a time
    (json walks plain dicts and lists itself, faster than to_json)."""
    if isinstance(value, Obj):
        return value._d
    if isinstance(value, ObjList):
        return value._l
    if isinstance(value, (set, frozenset)):
        return list(value)
    if isinstance(value, enum.Enum):
        return value.value
    return to_json(value)


# One encoder and one scanner for every message: json.dumps with options
# builds a new JSONEncoder (and json its C encoder) per call, and loads
# walks three Python frames around the C scanner; in the sandbox's
# interpreter those were a fifth of a tool call. The C encoder is built
# once too (building it parses nine arguments): its markers dict, which
# finds circular references, is empty between calls.
_ENCODER = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False, default=json_default)
_ENCODE_STR = json.encoder.encode_basestring
_MARKERS = {}
_C_ENCODER = json.encoder.c_make_encoder
_C_ENCODE = None if _C_ENCODER is None else _C_ENCODER(
    _MARKERS, json_default, _ENCODE_STR, None, ":", ",", False, False, True)
_SCAN = json.decoder.JSONDecoder().scan_once


def dumps_str(value):
    """value as the ABI's JSON, a str: json.dumps(value, separators=(",",
    ":"), ensure_ascii=False, default=json_default)."""
    if isinstance(value, str):
        return _ENCODE_STR(value)
    if _C_ENCODE is None or _MARKERS:
        # Without the C encoder, or called from json_default while the
        # shared encoder is busy (an object's model_dump calling dumps).
        return _ENCODER.encode(value)
    try:
        return "".join(_C_ENCODE(value, 0))
    except BaseException:
        # The C encoder leaves the markers of the containers it was in
        # when it failed (circular reference, a value it cannot encode).
        _MARKERS.clear()
        raise


try:
    # The runtime's C writer of plain values (sdk/python/runtime/main.c):
    # None for anything it leaves to the json module.
    from _adkhost import dumps as _PLAIN_DUMPS
except ImportError:  # outside the sandbox
    _PLAIN_DUMPS = None


def dumps(value):
    """dumps_str(value) in UTF-8 bytes."""
    if _PLAIN_DUMPS is not None:
        b = _PLAIN_DUMPS(value)
        if b is not None:
            return b
    return dumps_str(value).encode("utf-8")


def loads(data):
    """The ABI's JSON (UTF-8 bytes, or a str) decoded, as json.loads(data)
    does without its encoding detection."""
    s = data if type(data) is str else data.decode("utf-8", "surrogatepass")
    try:
        value, end = _SCAN(s, 0)
        if end == len(s):
            return value
    except (StopIteration, ValueError):
        pass
    return json.loads(s)  # whitespace around the value, or an error that says where


def wrap(value):
    if isinstance(value, dict):
        return Obj(value)
    if isinstance(value, list):
        return ObjList(value)
    return value


class Obj:
    """A JSON object read and written through snake_case attributes."""

    def __init__(self, _data=None, **fields):
        object.__setattr__(self, "_d", {} if _data is None else _data)
        for k, v in fields.items():
            if v is not None:
                setattr(self, k, v)

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        d = object.__getattribute__(self, "_d")
        for key in (camel(name), name):
            if key in d:
                return wrap(d[key])
        return None

    def __setattr__(self, name, value):
        key = camel(name)
        if value is None:
            self._d.pop(key, None)
        else:
            self._d[key] = to_json(value)

    def __getitem__(self, key):
        return wrap(self._d[key])

    def __contains__(self, key):
        return key in self._d

    def get(self, key, default=None):
        return wrap(self._d.get(key, default))

    def model_dump(self, **_):
        return to_json(self._d)

    def model_copy(self, deep=False, **_):
        import copy
        return type(self)(copy.deepcopy(self._d) if deep else dict(self._d))

    def __eq__(self, other):
        return isinstance(other, Obj) and to_json(self) == to_json(other)

    def __repr__(self):
        return f"{type(self).__name__}({self._d!r})"


class ObjList:
    """A JSON array whose items are wrapped as they are read."""

    def __init__(self, items):
        self._l = items

    def __getitem__(self, i):
        if isinstance(i, slice):
            return [wrap(v) for v in self._l[i]]
        return wrap(self._l[i])

    def __setitem__(self, i, v):
        self._l[i] = to_json(v)

    def __len__(self):
        return len(self._l)

    def __iter__(self):
        return (wrap(v) for v in self._l)

    def __bool__(self):
        return bool(self._l)

    def append(self, v):
        self._l.append(to_json(v))

    def extend(self, vs):
        self._l.extend(to_json(v) for v in vs)

    def insert(self, i, v):
        self._l.insert(i, to_json(v))

    def pop(self, i=-1):
        return wrap(self._l.pop(i))

    def clear(self):
        self._l.clear()

    def __repr__(self):
        return f"ObjList({self._l!r})"
