"""Function declarations by google-adk 2.13's rules, without pydantic.

google-adk builds a function tool's declaration with pydantic: a model named
``<function>Params`` made from the parameters (the tool context and
``input_stream`` left out), whose ``model_json_schema()`` becomes
``parametersJsonSchema``. pydantic-core is a C extension and cannot run in the
sandbox, so this module writes the same JSON schema for the annotations tools
use: scalars, ``Optional``/unions, lists, sets, tuples, dicts, ``Literal``,
enums, ``Any`` and defaults. sdk/python/declaration_test.py checks it against
google-adk itself.
"""

import enum
import inspect
import types as _pytypes
import typing

_NoneType = type(None)
_SCALARS = {
    str: {"type": "string"},
    int: {"type": "integer"},
    float: {"type": "number"},
    bool: {"type": "boolean"},
    bytes: {"format": "binary", "type": "string"},
    _NoneType: {"type": "null"},
}
_CONTEXT_NAMES = ("ToolContext", "CallbackContext", "Context", "ReadonlyContext")


class SchemaError(TypeError):
    """An annotation this builder does not know how to declare."""


def is_context_annotation(ann):
    """True for google-adk's context types (by name, as the shim's are)."""
    if isinstance(ann, str):
        return ann.rsplit(".", 1)[-1] in _CONTEXT_NAMES
    return inspect.isclass(ann) and any(c.__name__ in _CONTEXT_NAMES for c in ann.__mro__)


def context_param(func):
    """The parameter google-adk fills with the context, or "tool_context"."""
    try:
        hints = typing.get_type_hints(func)
    except Exception:
        hints = {}
    for name, p in inspect.signature(func).parameters.items():
        if is_context_annotation(hints.get(name, p.annotation)):
            return name
    return "tool_context"


def _json_default(value):
    if isinstance(value, enum.Enum):
        return _json_default(value.value)
    if isinstance(value, (tuple, set, frozenset)):
        return [_json_default(v) for v in value]
    if isinstance(value, list):
        return [_json_default(v) for v in value]
    if isinstance(value, dict):
        return {k: _json_default(v) for k, v in value.items()}
    return value


def _sorted(d):
    # pydantic sorts a schema's keys, but keeps the order of properties.
    return {k: d[k] for k in sorted(d)}


class _Builder:
    def __init__(self):
        self.defs = {}

    def schema(self, tp):
        if tp is typing.Any or tp is inspect.Parameter.empty or tp is object:
            return {}
        if tp in _SCALARS:
            return dict(_SCALARS[tp])
        origin = typing.get_origin(tp)
        args = typing.get_args(tp)
        if origin is typing.Annotated:
            return self.schema(args[0])
        if origin is typing.Union or origin is _pytypes.UnionType:
            return {"anyOf": [self.schema(a) for a in args]}
        if origin is typing.Literal:
            values = [_json_default(a) for a in args]
            kinds = {type(v) for v in values}
            out = {}
            if len(values) == 1:
                out["const"] = values[0]
            else:
                out["enum"] = values
            if len(kinds) == 1:
                t = _SCALARS.get(kinds.pop())
                if t is not None and "format" not in t:
                    out["type"] = t["type"]
            return _sorted(out)
        if tp in (list, typing.List) or origin in (list,):
            item = self.schema(args[0]) if args else {}
            return {"items": item, "type": "array"}
        if tp in (set, frozenset) or origin in (set, frozenset):
            item = self.schema(args[0]) if args else {}
            return {"items": item, "type": "array", "uniqueItems": True}
        if tp is tuple or origin is tuple:
            if not args:
                return {"items": {}, "type": "array"}
            if len(args) == 2 and args[1] is Ellipsis:
                return {"items": self.schema(args[0]), "type": "array"}
            n = len(args)
            return {"maxItems": n, "minItems": n,
                    "prefixItems": [self.schema(a) for a in args], "type": "array"}
        if tp is dict or origin is dict:
            value = args[1] if len(args) == 2 else typing.Any
            vs = self.schema(value)
            return {"additionalProperties": vs if vs else True, "type": "object"}
        if inspect.isclass(tp) and issubclass(tp, enum.Enum):
            return self.enum_ref(tp)
        raise SchemaError(f"cannot declare a parameter of type {tp!r}: use str, int, float, bool, "
                          "list, dict, Optional, Literal or an Enum")

    def enum_ref(self, tp):
        name = tp.__name__
        if name not in self.defs:
            values = [m.value for m in tp]
            d = {"enum": values, "title": name}
            kinds = {type(v) for v in values}
            if len(kinds) == 1 and next(iter(kinds)) in (str, int, float, bool):
                d["type"] = _SCALARS[next(iter(kinds))]["type"]
            doc = tp.__doc__
            if doc and doc != "An enumeration.":
                d["description"] = inspect.cleandoc(doc)
            self.defs[name] = _sorted(d)
        return {"$ref": "#/$defs/" + name}


def _is_ref(tp):
    """pydantic leaves the title out of a field whose schema is a reference
    (an enum), or an Optional of one."""
    origin = typing.get_origin(tp)
    if origin is typing.Annotated:
        return _is_ref(typing.get_args(tp)[0])
    if origin is typing.Union or origin is _pytypes.UnionType:
        rest = [a for a in typing.get_args(tp) if a is not _NoneType]
        return len(rest) == 1 and _is_ref(rest[0])
    return inspect.isclass(tp) and issubclass(tp, enum.Enum)


def _title(name):
    return name.title().replace("_", " ")


def callable_doc(func):
    return inspect.getdoc(func) or ""


def parameters_schema(func, name=None, ignore=None):
    """The parametersJsonSchema google-adk 2.13 builds for func, or None."""
    name = name or func.__name__
    ignore = set(ignore if ignore is not None else (context_param(func), "input_stream"))
    try:
        hints = typing.get_type_hints(func, include_extras=True)
    except Exception:
        hints = {}
    b = _Builder()
    props, required = {}, []
    for pname, p in inspect.signature(func).parameters.items():
        if pname in ignore or p.kind not in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY, p.POSITIONAL_ONLY):
            continue
        ann = hints.get(pname, p.annotation)
        try:
            s = b.schema(ann)
        except SchemaError as e:
            raise SchemaError(f"{name}: parameter {pname!r}: {e}") from None
        s = dict(s)
        if not _is_ref(ann):
            s["title"] = _title(pname)
        if p.default is inspect.Parameter.empty:
            required.append(pname)
        else:
            s["default"] = _json_default(p.default)
        props[pname] = _sorted(s)
    if not props:
        return None
    out = {"properties": props, "title": name + "Params", "type": "object"}
    if required:
        out["required"] = required
    if b.defs:
        out["$defs"] = {k: b.defs[k] for k in sorted(b.defs)}
    return _sorted(out)


def declaration(func, name=None):
    """name, description and parametersJsonSchema, as google-adk declares func."""
    name = name or func.__name__
    d = {"name": name}
    doc = callable_doc(func)
    if doc:
        d["description"] = doc
    params = parameters_schema(func, name)
    if params is not None:
        d["parametersJsonSchema"] = params
    return d
