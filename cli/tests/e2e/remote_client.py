"""The official Python MCP SDK client, in front of `tool-output-cap mcp --url URL` as a stdio
server (HOW `stdio`), or of the URL HOW (the reverse proxy's): prints, as JSON, the tools it
lists and the results of the calls it is given.

    python remote_client.py BINARY URL HOW < CALLS_JSON
"""

import asyncio
import json
import sys

from mcp import Client, StdioServerParameters


async def main(binary: str, url: str, how: str, calls: list) -> None:
    server = StdioServerParameters(command=binary, args=["mcp", "--url", url]) if how == "stdio" else how
    async with Client(server) as client:
        tools = await client.list_tools()
        results = []
        for name, arguments in calls:
            result = await client.call_tool(name, arguments)
            results.append(result.model_dump(mode="json", by_alias=True, exclude_none=True))
    print(json.dumps({"tools": sorted(tool.name for tool in tools.tools), "results": results}))


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2], sys.argv[3], json.load(sys.stdin)))
