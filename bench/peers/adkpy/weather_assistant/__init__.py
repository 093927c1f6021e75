from . import agent  # noqa: F401  (adk api_server loads root_agent from it)
