"""google.genai's types for modules built with adkhost: JSON-backed objects
with the same field names (adkhost._obj)."""
from . import types  # noqa: F401
