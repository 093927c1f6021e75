from adkhost._obj import Obj


class LlmRequest(Obj):
    """google-adk's LlmRequest over the ABI's JSON: model, contents, config."""

    def append_instructions(self, instructions):
        text = "\n\n".join(instructions)
        if self.config is None:
            self.config = {}
        si = self.config.system_instruction
        if si is None:
            self.config.system_instruction = text
        elif isinstance(si, str):
            self.config.system_instruction = si + "\n\n" + text
        else:
            si.parts.append({"text": text})
