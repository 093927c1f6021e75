"""A google-adk 2.13 app continuing a session adkhost served, on the same
PostgreSQL database (serve_postgres_test.go).

usage: adk_continue.py DB_URL APP USER SESSION TEXT

Runs one turn of an LlmAgent named like the adkhost app's root agent, on
a model that answers with how many contents its request carried (so the
history adkhost wrote is visibly read), through google-adk's Runner and
DatabaseSessionService. Prints {"answer": ..., "events": N}.
"""

import asyncio
import json
import sys

from google.adk.agents import LlmAgent
from google.adk.models.base_llm import BaseLlm
from google.adk.models.llm_response import LlmResponse
from google.adk.runners import Runner
from google.adk.sessions import DatabaseSessionService
from google.genai import types


class CountingModel(BaseLlm):
  model: str = "counting"

  async def generate_content_async(self, llm_request, stream=False):
    texts = [p.text for c in llm_request.contents for p in (c.parts or []) if p.text]
    yield LlmResponse(content=types.Content(
        role="model", parts=[types.Part(text=f"python saw {len(llm_request.contents)} contents, last: {texts[-1]}")]))


async def main():
  url, app, user, sid, text = sys.argv[1:6]
  svc = DatabaseSessionService(url)
  try:
    agent = LlmAgent(name="chat", model=CountingModel(), instruction="Echo.")
    runner = Runner(app_name=app, agent=agent, session_service=svc)
    answer = ""
    async for ev in runner.run_async(user_id=user, session_id=sid,
                                     new_message=types.Content(role="user", parts=[types.Part(text=text)])):
      if ev.content and ev.content.parts and ev.content.parts[0].text:
        answer = ev.content.parts[0].text
    s = await svc.get_session(app_name=app, user_id=user, session_id=sid)
    print(json.dumps({"answer": answer, "events": len(s.events)}), flush=True)
  finally:
    await svc.close()


asyncio.run(main())
