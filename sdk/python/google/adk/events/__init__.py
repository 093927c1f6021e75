from adkhost import EventActions  # noqa: F401
from adkhost._obj import Obj


class Event(Obj):
    """google-adk's Event over the ABI's JSON."""
