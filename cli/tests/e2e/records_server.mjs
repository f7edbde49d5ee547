// An MCP server made with the official TypeScript SDK whose one tool, `list_records`, returns
// 5,000 records as structuredContent under a strict outputSchema: no one string of it can be cut
// to fit a limit, so the proxy must drop records instead, and the client must still accept it.
//
//   node cli/tests/e2e/records_server.mjs PARTS

import { createRequire } from "node:module";
import path from "node:path";

const require = createRequire(path.join(path.resolve(process.argv[2]), "package.json"));
const { McpServer } = require("@modelcontextprotocol/sdk/server/mcp.js");
const { StdioServerTransport } = require("@modelcontextprotocol/sdk/server/stdio.js");
const { z } = require("zod");

const records = Array.from({ length: 5000 }, (_, i) => ({
  path: `/usr/share/doc/package-${i}/copyright`,
  size: i * 7,
}));

const server = new McpServer({ name: "records", version: "1.0.0" });
server.registerTool(
  "list_records",
  {
    description: "Every record, with the root they are under.",
    outputSchema: {
      records: z.array(z.object({ path: z.string(), size: z.number() }).strict()),
      root: z.string(),
    },
  },
  async () => {
    const structuredContent = { records, root: "/usr/share/doc" };
    return { content: [{ type: "text", text: JSON.stringify(structuredContent) }], structuredContent };
  },
);
await server.connect(new StdioServerTransport());
