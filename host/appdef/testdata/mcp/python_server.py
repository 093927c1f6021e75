"""A small MCP server made with the Python `mcp` package (2.x), for
host/appdef's MCPToolset tests: stdio by default, streamable HTTP on
127.0.0.1:<port>/mcp with `http <port>`."""

import sys

from mcp.server.mcpserver import MCPServer

server = MCPServer("adkhost-test-python")


@server.tool()
def multiply(a: int, b: int) -> int:
    """Multiplies two integers."""
    return a * b


@server.tool()
def refuse(reason: str) -> str:
    """Always fails, with the reason given."""
    raise ValueError(reason)


if __name__ == "__main__":
    if len(sys.argv) > 2 and sys.argv[1] == "http":
        server.run(transport="streamable-http", port=int(sys.argv[2]))
    else:
        server.run()
