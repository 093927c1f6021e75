from adkhost import BaseTool  # noqa: F401
