"""google-adk 2.13's DatabaseSessionService on PostgreSQL (asyncpg), for
`make bench-postgres`: one writer appends to one session for --seconds,
events cycling through the four shapes of store_bench.py (a user message,
a function call, its response, a text answer; a state delta on every
other one). Prints {"append_per_s": N}.
"""

import argparse
import asyncio
import json
import time

from google.adk.events.event import Event
from google.adk.events.event_actions import EventActions
from google.adk.sessions.database_session_service import DatabaseSessionService
from google.genai import types


def make_event(i: int) -> Event:
  shape = i % 4
  if shape == 0:
    author, role = "user", "user"
    part = types.Part(text="What's the weather in Paris?")
  elif shape == 1:
    author, role = "weather_assistant", "model"
    part = types.Part(function_call=types.FunctionCall(id=f"call-{i}", name="get_weather", args={"city": "Paris"}))
  elif shape == 2:
    author, role = "weather_assistant", "user"
    part = types.Part(function_response=types.FunctionResponse(
        id=f"call-{i-1}", name="get_weather", response={"city": "Paris", "condition": "sunny", "temperatureC": 21}))
  else:
    author, role = "weather_assistant", "model"
    part = types.Part(text="It is sunny in Paris, 21 °C.")
  actions = EventActions(state_delta={"last_city": "Paris", "turns": i} if i % 2 == 0 else {})
  return Event(invocation_id=f"inv-{i // 4}", author=author,
               content=types.Content(role=role, parts=[part]), actions=actions)


async def main() -> None:
  ap = argparse.ArgumentParser()
  ap.add_argument("--url", required=True)
  ap.add_argument("--seconds", type=float, default=5.0)
  a = ap.parse_args()
  svc = DatabaseSessionService(a.url)
  warm = await svc.create_session(app_name="bench", user_id="u", session_id="py-warm")
  for i in range(8):
    await svc.append_event(warm, make_event(i))
  s = await svc.create_session(app_name="bench", user_id="u", session_id="py-serial")
  n = 0
  t0 = time.perf_counter()
  while time.perf_counter() - t0 < a.seconds:
    await svc.append_event(s, make_event(n))
    n += 1
  print(json.dumps({"append_per_s": n / (time.perf_counter() - t0)}), flush=True)
  await svc.close()


if __name__ == "__main__":
  asyncio.run(main())
