"""The host functions (ABI.md §4) with their status codes as exceptions."""

from ._obj import _ENCODE_STR, dumps, dumps_str, loads as _loads

try:
    import _adkhost
except ImportError:  # outside the sandbox (the declaration test imports tools on CPython)
    _adkhost = None

OK, NOT_FOUND, INVALID_ARGUMENT, DENIED, UNAVAILABLE, TOO_LARGE, BAD_POINTER, FAILED, ALLOC_FAILED = range(9)
_NAMES = {1: "NOT_FOUND", 2: "INVALID_ARGUMENT", 3: "DENIED", 4: "UNAVAILABLE", 5: "TOO_LARGE",
          6: "BAD_POINTER", 7: "FAILED", 8: "ALLOC_FAILED"}
_CAPABILITY = {"state_get": "state", "state_set": "state", "state_delete": "state",
               "transfer_to_agent": "actions", "escalate": "actions", "skip_summarization": "actions",
               "request_confirmation": "actions", "artifact_load": "artifacts",
               "artifact_save": "artifacts", "artifact_list": "artifacts", "config_get": "config",
               "http_request": "http", "memory_search": "memory", "memory_add_session": "memory"}
LEVELS = {"debug": -4, "info": 0, "warn": 4, "warning": 4, "error": 8}


class HostError(Exception):
    """A host function failed; status is its ABI.md §10 code."""

    def __init__(self, function, status):
        self.function = function
        self.status = status
        name = _NAMES.get(status, f"status {status}")
        msg = f"{function}: {name}"
        if status == DENIED and function in _CAPABILITY:
            cap = _CAPABILITY[function]
            msg += (f" (the module needs the {cap!r} capability, asked for with "
                    f"adkhost.capabilities({cap!r}) or `module build --capabilities {cap}`, "
                    "and granted by the app)")
        elif status == UNAVAILABLE:
            msg += " (not available in this call)"
        super().__init__(msg)


class _Outside:
    def __getattr__(self, name):
        raise RuntimeError("adkhost host functions exist only inside the sandbox")


# The host functions, or, outside the sandbox, an object refusing them
# (not a function returning the module: a Python call per host call).
_h = _Outside() if _adkhost is None else _adkhost


def _b(s):
    return s.encode("utf-8") if isinstance(s, str) else bytes(s)


def _check(function, st):
    if st != OK:
        raise HostError(function, st)


def state_get(key):
    """The value of key, or raises KeyError."""
    st, data = _h.state_get(key if type(key) is str else _b(key))
    if st:
        if st == NOT_FOUND:
            raise KeyError(key)
        raise HostError("state_get", st)
    return _loads(data) if data else None


def state_set(key, value):
    # The most common host call of a tool, in one Python frame (the
    # interpreter in the sandbox pays for every call); the runtime takes
    # str as UTF-8.
    st = _h.state_set(key if type(key) is str else _b(key),
                      _ENCODE_STR(value) if type(value) is str else dumps_str(value))
    if st:
        raise HostError("state_set", st)


def _state_set_failed(st):
    raise HostError("state_set", st)


if hasattr(_adkhost, "state_put"):
    # In the sandbox: state_set in C for a str key and a plain value (no
    # Python frame), this module's for the rest (main.c, state_put).
    _adkhost.state_put_init(state_set, _state_set_failed)
    state_set = _adkhost.state_put


def state_delete(key):
    _check("state_delete", _h.state_delete(_b(key)))


def transfer_to_agent(name):
    _check("transfer_to_agent", _h.transfer_to_agent(_b(name)))


def escalate():
    _check("escalate", _h.escalate())


def skip_summarization():
    _check("skip_summarization", _h.skip_summarization())


def request_confirmation(hint, payload):
    _check("request_confirmation",
           _h.request_confirmation(_b(hint or ""), b"" if payload is None else dumps(payload)))


def artifact_load(name, version=None):
    st, data = _h.artifact_load(_b(name), -1 if version is None else int(version))
    if st == NOT_FOUND:
        return None
    _check("artifact_load", st)
    return _loads(data) if data else None


def artifact_save(name, part):
    st, version = _h.artifact_save(_b(name), dumps(part))
    _check("artifact_save", st)
    return version


def artifact_list():
    st, data = _h.artifact_list()
    _check("artifact_list", st)
    return _loads(data) if data else []


def log(level, message):
    lv = LEVELS.get(level, level) if isinstance(level, str) else int(level)
    _h.log(int(lv), _b(str(message)))


def invocation_info():
    st, data = _h.invocation_info()
    _check("invocation_info", st)
    return _loads(data) if data else {}


def config_get(key):
    st, data = _h.config_get(_b(key))
    if st == NOT_FOUND:
        return None
    _check("config_get", st)
    return data.decode("utf-8")


def http_request(req):
    st, data = _h.http_request(dumps(req))
    _check("http_request", st)
    return _loads(data)


def memory_search(query):
    st, data = _h.memory_search(_b(query or ""))
    _check("memory_search", st)
    return _loads(data) if data else {"memories": []}


def memory_add_session():
    _check("memory_add_session", _h.memory_add_session())
