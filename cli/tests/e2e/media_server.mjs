// An MCP server made with the official TypeScript SDK whose tools return what a result carries
// besides text blocks: `read_listing`, a listing as an embedded resource (as the filesystem
// servers return a file), and `screenshots`, PNGs as image blocks.
//
//   node cli/tests/e2e/media_server.mjs PARTS LISTING_FILE PNG_FILE...

import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";

const [parts, listingFile, ...pngs] = process.argv.slice(2);
const require = createRequire(path.join(path.resolve(parts), "package.json"));
const { McpServer } = require("@modelcontextprotocol/sdk/server/mcp.js");
const { StdioServerTransport } = require("@modelcontextprotocol/sdk/server/stdio.js");

const listing = readFileSync(listingFile, "utf8");
const images = pngs.map((file) => readFileSync(file).toString("base64"));

const server = new McpServer({ name: "media", version: "1.0.0" });
server.registerTool("read_listing", { description: "The listing, as a file." }, async () => ({
  content: [{ type: "resource", resource: { uri: "file:///listing.txt", mimeType: "text/plain", text: listing } }],
}));
server.registerTool("screenshots", { description: "A screenshot of each page." }, async () => ({
  content: images.map((data) => ({ type: "image", data, mimeType: "image/png" })),
}));
await server.connect(new StdioServerTransport());
