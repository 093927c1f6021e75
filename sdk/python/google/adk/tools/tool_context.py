from adkhost import ToolContext  # noqa: F401
