from . import Event  # noqa: F401
