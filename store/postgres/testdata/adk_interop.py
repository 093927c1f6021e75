"""google-adk 2.13's DatabaseSessionService on the database interop_test.go
shares with adkhost's store/postgres.

usage: adk_interop.py DB_URL COMMAND APP USER SESSION [ARG]

Commands print one JSON line each: the session as google-adk reads it
(state, events dumped by alias, in mode json).
  write   create the session and append three events
  read    read the session
  append  append one model event whose state delta sets py_after=ARG
  stale   read the session, print {"loaded": true}, wait for a line on
          stdin, then append through the copy read before and print
          {"stale": bool, "error": str}
"""

import asyncio
import json
import sys

from google.adk.events import Event
from google.adk.events import EventActions
from google.adk.sessions import DatabaseSessionService
from google.genai import types


def dump(s):
  return {
      "id": s.id,
      "state": s.state,
      "last_update_time": s.last_update_time,
      "events": [
          e.model_dump(mode="json", by_alias=True, exclude_none=True)
          for e in s.events
      ],
  }


def out(v):
  print(json.dumps(v, sort_keys=True), flush=True)


async def main():
  url, cmd, app, user, sid = sys.argv[1:6]
  arg = sys.argv[6] if len(sys.argv) > 6 else ""
  svc = DatabaseSessionService(url)
  try:
    if cmd == "write":
      s = await svc.create_session(
          app_name=app,
          user_id=user,
          session_id=sid,
          state={"k": "py", "user:name": "Ada", "app:greeting": "hi"},
      )
      await svc.append_event(
          s,
          Event(
              invocation_id="inv-py-1",
              author="user",
              content=types.Content(
                  role="user", parts=[types.Part(text="What is the weather?")]
              ),
              actions=EventActions(
                  state_delta={"temp:scratch": 1, "turns": 1}
              ),
          ),
      )
      await svc.append_event(
          s,
          Event(
              invocation_id="inv-py-1",
              author="weather_agent",
              content=types.Content(
                  role="model",
                  parts=[
                      types.Part(
                          function_call=types.FunctionCall(
                              id="call-1",
                              name="get_weather",
                              args={"city": "Paris", "unitSystem": "metric"},
                          )
                      ),
                      types.Part(
                          inline_data=types.Blob(
                              mime_type="image/png", data=b"\xfb\xff\xfe"
                          )
                      ),
                  ],
              ),
              long_running_tool_ids={"call-1"},
          ),
      )
      await svc.append_event(
          s,
          Event(
              invocation_id="inv-py-1",
              author="weather_agent",
              content=types.Content(
                  role="user",
                  parts=[
                      types.Part(
                          function_response=types.FunctionResponse(
                              id="call-1",
                              name="get_weather",
                              response={"tempC": 7, "sky": "sunny"},
                          )
                      )
                  ],
              ),
              actions=EventActions(
                  state_delta={
                      "app:calls": 1,
                      "user:lastCity": "Paris",
                      "turns": 2,
                  }
              ),
          ),
      )
    elif cmd == "append":
      s = await svc.get_session(app_name=app, user_id=user, session_id=sid)
      await svc.append_event(
          s,
          Event(
              invocation_id="inv-py-2",
              author="weather_agent",
              content=types.Content(
                  role="model", parts=[types.Part(text="py says " + arg)]
              ),
              actions=EventActions(state_delta={"py_after": arg}),
          ),
      )
    elif cmd == "stale":
      s = await svc.get_session(app_name=app, user_id=user, session_id=sid)
      out({"loaded": True})
      sys.stdin.readline()
      try:
        await svc.append_event(
            s,
            Event(
                invocation_id="inv-py-3",
                author="weather_agent",
                content=types.Content(
                    role="model", parts=[types.Part(text="too late")]
                ),
            ),
        )
        out({"stale": False, "error": ""})
      except Exception as e:  # pylint: disable=broad-except
        out({"stale": type(e).__name__ == "StaleSessionError", "error": f"{type(e).__name__}: {e}"})
      return
    elif cmd != "read":
      raise SystemExit("unknown command " + cmd)
    s = await svc.get_session(app_name=app, user_id=user, session_id=sid)
    out(dump(s))
  finally:
    await svc.close()


asyncio.run(main())
