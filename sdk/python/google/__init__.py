"""adkhost's google-adk compatibility shim (sdk/python/README.md): just
enough of google.adk and google.genai for tool, callback and plugin files
written for google-adk to import unchanged inside the sandbox."""
