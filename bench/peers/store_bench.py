"""google-adk 2.13's session services on SQLite, for `make bench-store`.

Measures, for DatabaseSessionService (sqlite+aiosqlite) and
SqliteSessionService, the same operations as adkhost's store benchmark
(bench/cmd/storepeers): appends of one writer on one session, appends of
64 writers on distinct sessions (asyncio tasks: google-adk's concurrency
model), and get_session of a 1,000-event session. The events cycle through
the same four shapes (a user message, a function call, its response, a
text answer), with a state delta on every other one. Prints one JSON
object per service.
"""

import argparse
import asyncio
import json
import os
import tempfile
import time

from google.adk.events.event import Event
from google.adk.events.event_actions import EventActions
from google.adk.sessions.database_session_service import DatabaseSessionService
from google.adk.sessions.sqlite_session_service import SqliteSessionService
from google.genai import types

APP, USER = "bench", "u"


def make_event(i: int) -> Event:
    shape = i % 4
    if shape == 0:
        author, part = "user", types.Part(text="What's the weather in Paris?")
        role = "user"
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


ERRORS: dict[str, int] = {}


async def appender(svc, sid: str, n: int, stop_at: float | None = None) -> int:
    """Appends to a new session; a failed append (SQLite's "database is
    locked" under concurrent writers) is counted and ends this writer, as
    the session object is then stale."""
    try:
        session = await svc.create_session(app_name=APP, user_id=USER, session_id=sid)
    except Exception as e:  # noqa: BLE001 - counted, reported
        ERRORS[type(e).__name__] = ERRORS.get(type(e).__name__, 0) + 1
        return 0
    done = 0
    for i in range(n):
        if stop_at is not None and time.perf_counter() >= stop_at:
            break
        try:
            await svc.append_event(session, make_event(i))
        except Exception as e:  # noqa: BLE001
            ERRORS[type(e).__name__] = ERRORS.get(type(e).__name__, 0) + 1
            break
        done += 1
    return done


async def bench(name: str, svc, seconds: float, writers: int) -> dict:
    out = {"service": name}
    # Warm up: tables, connections, imports.
    await appender(svc, "warm", 8)

    t0 = time.perf_counter()
    n = await appender(svc, "serial", 10**9, stop_at=t0 + seconds)
    out["append_per_s"] = n / (time.perf_counter() - t0)

    t0 = time.perf_counter()
    counts = await asyncio.gather(*(appender(svc, f"w{w}", 10**9, stop_at=t0 + seconds) for w in range(writers)))
    out[f"append{writers}_per_s"] = sum(counts) / (time.perf_counter() - t0)

    await appender(svc, "long", 1000)
    reps = 5
    t0 = time.perf_counter()
    for _ in range(reps):
        s = await svc.get_session(app_name=APP, user_id=USER, session_id="long")
        assert len(s.events) == 1000, len(s.events)
    out["get1000_ms"] = (time.perf_counter() - t0) / reps * 1000
    out["errors"] = dict(ERRORS)
    ERRORS.clear()
    return out


async def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--seconds", type=float, default=5.0)
    ap.add_argument("--writers", type=int, default=64)
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as d:
        db = DatabaseSessionService(db_url=f"sqlite+aiosqlite:///{os.path.join(d, 'database.db')}")
        print(json.dumps(await bench("adk_database_sqlite", db, a.seconds, a.writers)), flush=True)
        lite = SqliteSessionService(db_path=os.path.join(d, "sqlite.db"))
        print(json.dumps(await bench("adk_sqlite", lite, a.seconds, a.writers)), flush=True)


if __name__ == "__main__":
    asyncio.run(main())
