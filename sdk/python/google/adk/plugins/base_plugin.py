from adkhost import BasePlugin  # noqa: F401
