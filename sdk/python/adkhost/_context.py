"""google-adk's ToolContext and CallbackContext over the host functions.

Every read and write goes to the host, behind the module's grants (ABI.md
§8): a tool without the `state` grant that touches `state` gets HostError
(DENIED), as any module would. google-adk's async methods (load_artifact,
search_memory, ...) are async here too, so tool bodies move unchanged.
"""

from . import _host
from ._obj import Obj, loads as _loads, wrap

HostError = _host.HostError


class State:
    """Session state with google-adk's scopes: "app:", "user:", "temp:" and
    unprefixed keys (ABI.md §9). Reads see this invocation's own writes."""

    APP_PREFIX = "app:"
    USER_PREFIX = "user:"
    TEMP_PREFIX = "temp:"

    # state[key] and state[key] = value are the host functions themselves,
    # without a Python frame around them (a staticmethod special method is
    # called without self); the sandbox's interpreter pays for every frame.
    __getitem__ = staticmethod(_host.state_get)
    __setitem__ = staticmethod(_host.state_set)

    def __delitem__(self, key):
        # google-adk's delta has no removal: None is what it records.
        _host.state_delete(key)

    def __contains__(self, key):
        try:
            _host.state_get(key)
            return True
        except KeyError:
            return False

    def get(self, key, default=None):
        try:
            return _host.state_get(key)
        except KeyError:
            return default

    def setdefault(self, key, default=None):
        try:
            return _host.state_get(key)
        except KeyError:
            _host.state_set(key, default)
            return default

    def update(self, delta=(), **kw):
        for k, v in dict(delta, **kw).items():
            _host.state_set(k, v)

    def to_dict(self):
        raise NotImplementedError("the ABI reads state one key at a time: use state[key] or state.get(key)")


class EventActions:
    """The actions of the event the hook contributes to. Setting
    skip_summarization, escalate or transfer_to_agent calls the host
    (capability `actions`); state_delta writes go to state."""

    def __init__(self):
        object.__setattr__(self, "_set", {})

    @property
    def state_delta(self):
        return _DeltaView()

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        return self._set.get(name)

    def __setattr__(self, name, value):
        if name == "skip_summarization":
            if value:
                _host.skip_summarization()
        elif name == "escalate":
            if value:
                _host.escalate()
        elif name == "transfer_to_agent":
            if value:
                _host.transfer_to_agent(value)
        else:
            raise AttributeError(f"EventActions.{name} cannot be set by a module: use the context's methods")
        self._set[name] = value


class _DeltaView:
    def __setitem__(self, key, value):
        _host.state_set(key, value)

    def __getitem__(self, key):
        return _host.state_get(key)

    def update(self, delta=(), **kw):
        for k, v in dict(delta, **kw).items():
            _host.state_set(k, v)


class ToolConfirmation(Obj):
    """google-adk's ToolConfirmation: hint, confirmed, payload."""


# State holds nothing of its own: every context hands out this one.
_STATE = State()


class ReadonlyContext:
    def __init__(self, info):
        self._info = info or {}

    def __getattr__(self, name):
        # Only when _info is unset: the context came as its JSON text
        # (bytes, cut out of a tool call's input by the runtime), decoded
        # here, once, when first read; most tools never read it.
        if name == "_info" and "_raw" in self.__dict__:
            info = self._info = _loads(self.__dict__.pop("_raw")) or {}
            return info
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}", name=name, obj=self)

    @property
    def invocation_id(self):
        return self._info.get("invocationId")

    @property
    def agent_name(self):
        return self._info.get("agentName")

    @property
    def user_id(self):
        return self._info.get("userId")

    @property
    def session_id(self):
        return self._info.get("sessionId")

    @property
    def app_name(self):
        return self._info.get("appName")

    @property
    def branch(self):
        return self._info.get("branch")

    @property
    def user_content(self):
        return wrap(self._info.get("userContent"))

    # A class attribute, not a property: no Python call per access.
    state = _STATE


class Context(ReadonlyContext):
    """google-adk 2.x's Context, which ToolContext and CallbackContext name."""

    def __init__(self, info, confirmation=None):
        # One per tool call or callback: kept to what every call needs
        # (the actions are made when first used, the info decoded when
        # first read if it came as JSON text). The runtime's C dispatch of
        # tool_call sets the same three attributes itself for JSON text
        # and no confirmation (main.c, context_new): keep the two alike.
        if type(info) is bytes:
            self._raw = info
        else:
            self._info = info or {}
        self._actions = None
        self.tool_confirmation = ToolConfirmation(confirmation) if confirmation else None

    @property
    def actions(self):
        a = self._actions
        if a is None:
            a = self._actions = EventActions()
        return a

    @actions.setter
    def actions(self, value):
        self._actions = value

    @property
    def function_call_id(self):
        return self._info.get("functionCallId")

    async def load_artifact(self, filename, version=None):
        return wrap(_host.artifact_load(filename, version))

    async def save_artifact(self, filename, artifact, custom_metadata=None):
        return _host.artifact_save(filename, artifact)

    async def list_artifacts(self):
        return _host.artifact_list()

    async def search_memory(self, query):
        return wrap(_host.memory_search(query))

    async def add_session_to_memory(self):
        _host.memory_add_session()

    def request_confirmation(self, *, hint=None, payload=None):
        _host.request_confirmation(hint, payload)

    def get_config(self, key):
        """A config value the app grants this module (capability `config`)."""
        return _host.config_get(key)


ToolContext = Context
CallbackContext = Context


class InvocationContext(ReadonlyContext):
    """What run-level plugin hooks receive (google-adk's InvocationContext):
    ids, the user's content, and state through the host."""

    @property
    def session(self):
        return Obj({"id": self.session_id, "appName": self.app_name, "userId": self.user_id})


class BaseTool:
    """The tool a tool callback is about: name, description, is_long_running."""

    def __init__(self, info):
        info = info or {}
        self.name = info.get("name")
        self.description = info.get("description", "")
        self.is_long_running = bool(info.get("longRunning"))
