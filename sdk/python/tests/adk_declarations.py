"""Prints, as JSON, the FunctionDeclaration google-adk builds for each tool of
a Python file (its @tool functions), as google-adk 2.13's FunctionTool sends
it to the Gemini API. Run with the python of a venv holding google-adk; the
adkhost package is imported from sdk/python.

Usage: adk_declarations.py FILE.py
"""
import importlib.util
import json
import os
import sys

# google-adk first: once imported, the shim's google package (a regular
# package, which would win over the namespace package) is not looked at.
from google.adk.tools import ToolContext as AdkToolContext  # noqa: E402
from google.adk.tools.function_tool import FunctionTool  # noqa: E402

sys.path.append(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

import adkhost  # noqa: E402

# The file's `from adkhost import ToolContext` gets google-adk's own, so that
# google-adk recognises the context parameter by its annotation.
adkhost.ToolContext = AdkToolContext


def main():
    path = sys.argv[1]
    spec = importlib.util.spec_from_file_location("tools_under_test", path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod
    spec.loader.exec_module(mod)
    out = []
    for t in adkhost._registry.tools:
        decl = FunctionTool(t.func)._get_declaration()
        out.append(decl.model_dump(mode="json", exclude_none=True, by_alias=True))
    json.dump(out, sys.stdout, indent=1)


if __name__ == "__main__":
    main()
