from adkhost import EventActions  # noqa: F401
