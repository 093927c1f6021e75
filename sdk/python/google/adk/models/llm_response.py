from adkhost._obj import Obj


class LlmResponse(Obj):
    """google-adk's LlmResponse: content, error_code, error_message, ..."""
