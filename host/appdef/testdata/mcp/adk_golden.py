"""Records what google-adk 2.13 does with python_server.py's tools through
its McpToolset (stdio), for TestMCPToolsetMatchesADK: the function
declarations and system instruction its model receives, and the function
responses of a call that succeeds and one that fails.

Run with a Python that has google-adk==2.13.0 and mcp==2.3.0:
  python adk_golden.py > adk_golden.json
"""

import asyncio
import json
import os
import sys

from google.adk.agents import LlmAgent
from google.adk.models.base_llm import BaseLlm
from google.adk.models.llm_response import LlmResponse
from google.adk.runners import InMemoryRunner
from google.adk.tools.mcp_tool.mcp_toolset import McpToolset
from google.adk.tools.mcp_tool.mcp_session_manager import StdioConnectionParams
from google.genai import types
from mcp import StdioServerParameters

HERE = os.path.dirname(os.path.abspath(__file__))
CALLS = [("py_multiply", {"a": 6, "b": 7}), ("py_refuse", {"reason": "nope"})]


class Recorder(BaseLlm):
  requests: list = []

  async def generate_content_async(self, llm_request, stream=False):
    self.requests.append(llm_request)
    n = len(self.requests)
    if n <= len(CALLS):
      name, args = CALLS[n - 1]
      yield LlmResponse(content=types.Content(role="model", parts=[
          types.Part(function_call=types.FunctionCall(name=name, args=args))]))
    else:
      yield LlmResponse(content=types.Content(role="model", parts=[types.Part(text="done")]))


async def main():
  toolset = McpToolset(
      connection_params=StdioConnectionParams(
          server_params=StdioServerParameters(command=sys.executable, args=[os.path.join(HERE, "python_server.py")],
                                            env={"PYTHONPATH": os.environ.get("PYTHONPATH", "")}),
          timeout=30),
      tool_name_prefix="py")
  model = Recorder(model="recorder")
  agent = LlmAgent(name="mcp_agent", model=model, instruction="Use the MCP tools.", tools=[toolset])
  runner = InMemoryRunner(agent=agent, app_name="a")
  session = await runner.session_service.create_session(app_name="a", user_id="u")
  responses = []
  async for ev in runner.run_async(user_id="u", session_id=session.id,
                                   new_message=types.Content(role="user", parts=[types.Part(text="go")])):
    for fr in ev.get_function_responses():
      responses.append({"name": fr.name, "response": fr.response})
  await toolset.close()
  req = model.requests[0]
  decls = [d.model_dump(mode="json", by_alias=True, exclude_none=True)
           for t in req.config.tools for d in (t.function_declarations or [])]
  json.dump({
      "declarations": decls,
      "system_instruction": req.config.system_instruction,
      "responses": responses,
  }, sys.stdout, indent=1, sort_keys=True)
  print()


asyncio.run(main())
