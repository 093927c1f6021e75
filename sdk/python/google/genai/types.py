"""The google.genai.types a tool or callback builds or reads, as JSON-backed
objects: `types.Content(role="model", parts=[types.Part(text="hi")])` and
`llm_request.contents[-1].parts[0].text` work as in google-genai; fields are
google-genai's (snake_case attributes, camelCase on the wire)."""

from adkhost._obj import Obj


class Part(Obj):
    @classmethod
    def from_text(cls, *, text):
        return cls(text=text)

    @classmethod
    def from_function_call(cls, *, name, args):
        return cls(function_call=FunctionCall(name=name, args=args))

    @classmethod
    def from_function_response(cls, *, name, response):
        return cls(function_response=FunctionResponse(name=name, response=response))

    @classmethod
    def from_bytes(cls, *, data, mime_type):
        return cls(inline_data=Blob(data=data, mime_type=mime_type))


class Content(Obj):
    pass


class UserContent(Content):
    def __init__(self, parts=None, **kw):
        super().__init__(role="user", parts=_parts(parts), **kw)


class ModelContent(Content):
    def __init__(self, parts=None, **kw):
        super().__init__(role="model", parts=_parts(parts), **kw)


def _parts(parts):
    if parts is None:
        return None
    if isinstance(parts, (str, Part)):
        parts = [parts]
    return [Part(text=p) if isinstance(p, str) else p for p in parts]


class Blob(Obj):
    pass


class FileData(Obj):
    pass


class FunctionCall(Obj):
    pass


class FunctionResponse(Obj):
    pass


class FunctionDeclaration(Obj):
    pass


class Tool(Obj):
    pass


class Schema(Obj):
    pass


class GenerateContentConfig(Obj):
    pass


class GenerateContentResponseUsageMetadata(Obj):
    pass


class GroundingMetadata(Obj):
    pass


class SafetySetting(Obj):
    pass


class ThinkingConfig(Obj):
    pass


class ToolConfig(Obj):
    pass


class FunctionCallingConfig(Obj):
    pass
