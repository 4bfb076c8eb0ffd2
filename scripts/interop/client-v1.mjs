// @modelcontextprotocol/sdk 1.x: legacy only (initialize); lists page by page.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { CallToolResultSchema } from "@modelcontextprotocol/sdk/types.js";
import { serverParams, setLabel, check, done, checkTools, exercise, PAGE_MIN, PAGE_MAX } from "./common.mjs";

setLabel("@modelcontextprotocol/sdk");
console.log("== @modelcontextprotocol/sdk 1.32.2 (legacy initialize)");
const client = new Client({ name: "rukh-interop", version: "0.0.1" });
const transport = new StdioClientTransport(serverParams);
const sent = [];
const send = transport.send.bind(transport);
transport.send = (msg, opts) => { sent.push(msg); return send(msg, opts); };
await client.connect(transport);
check(sent[0]?.method === "initialize", `initialize with ${sent[0]?.params?.protocolVersion}`);
check(client.getServerVersion()?.name === "rukh", "serverInfo names rukh", client.getServerVersion());

const tools = [];
let cursor;
let pages = 0;
do {
  const page = await client.listTools(cursor === undefined ? {} : { cursor });
  pages++;
  if (page.nextCursor !== undefined) check(page.tools.length >= PAGE_MIN && page.tools.length <= PAGE_MAX, `page ${pages}: ${page.tools.length} tools and a cursor`);
  tools.push(...page.tools);
  cursor = page.nextCursor;
} while (cursor !== undefined && pages < 10);
check(pages >= 2, `walked ${pages} pages`);
checkTools(tools);

await exercise(tools, (name, args, signal) => client.callTool({ name, arguments: args }, CallToolResultSchema, signal ? { signal } : undefined));
check(sent.some((m) => m.method === "notifications/cancelled"), "the abort sent notifications/cancelled");
await client.close();
done();
