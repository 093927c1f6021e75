"""Calls the Wasm tools of an app through `adkhost serve`'s MCP endpoint
with the Python `mcp` package's client (mcp-requirements.txt), as an MCP
client no one here wrote would. Run by TestServeMCPPythonClient:

    python mcp_client.py http://127.0.0.1:PORT/mcp/APP TOKEN

It checks what it can see as a client and exits non-zero on the first
difference; its last line is a JSON summary the Go test checks against the
server's store.
"""

import asyncio
import json
import sys

import httpx2
from mcp import Client, ClientSession
from mcp.client.streamable_http import streamable_http_client


def text(res):
    return "".join(getattr(c, "text", "") for c in res.content)


def check(cond, what):
    if not cond:
        raise SystemExit("mcp_client.py: " + what)


async def main(url, token):
    initialize = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}}}
    headers = {"Accept": "application/json, text/event-stream"}
    async with httpx2.AsyncClient() as raw:
        r = await raw.post(url, json=initialize, headers=headers)
        check(r.status_code == 401, f"without a token: {r.status_code} {r.text}")
        r = await raw.post(url.rsplit("/", 1)[0] + "/no_such_app", json=initialize,
                           headers={**headers, "Authorization": f"Bearer {token}"})
        check(r.status_code == 404, f"unknown app: {r.status_code} {r.text}")

    summary = {}
    async with httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}) as http:
        # The session API: one MCP session, so one adkhost session.
        async with streamable_http_client(url, http_client=http) as (read, write):
            async with ClientSession(read, write) as s:
                await s.initialize()
                tools = {t.name: t for t in (await s.list_tools()).tools}
                summary["tools"] = sorted(tools)
                add = tools.get("add")
                check(add is not None and add.input_schema.get("properties", {}).get("n", {}).get("type") == "integer",
                      f"add's input schema: {add and add.input_schema}")
                totals = []
                for n in (2, 3):
                    res = await s.call_tool("add", {"n": n})
                    check(not res.is_error, f"add: {text(res)}")
                    totals.append(res.structured_content["total"])
                summary["totals"] = totals
                res = await s.call_tool("note", {"text": "from python"})
                check(not res.is_error and json.loads(text(res)) == {"version": 0}, f"note: {text(res)}")
                res = await s.call_tool("fail", {"message": "boom"})
                check(res.is_error and "failed as asked: boom" in text(res), f"fail: {res}")
                summary["fail"] = text(res)
                res = await s.call_tool("spin", {})
                check(res.is_error, f"spin: {res}")
                summary["spin"] = text(res)
        # The high-level client, protocol negotiated (mode "auto"): a
        # second MCP session, a second adkhost session.
        async with Client(streamable_http_client(url, http_client=http)) as c:
            res = await c.call_tool("add", {"n": 10})
            check(not res.is_error, f"add with Client: {text(res)}")
            summary["client_total"] = res.structured_content["total"]
    print(json.dumps(summary))


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2]))
