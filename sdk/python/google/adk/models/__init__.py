from .llm_request import LlmRequest  # noqa: F401
from .llm_response import LlmResponse  # noqa: F401
