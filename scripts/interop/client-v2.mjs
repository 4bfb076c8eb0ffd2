// @modelcontextprotocol/client 2.x: MODE=pin (2026-07-28, server/discover)
// or MODE=legacy (initialize).
import { Client } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import { serverParams, setLabel, check, done, checkTools, exercise, TOOL_COUNT, PAGE_MIN, PAGE_MAX } from "./common.mjs";

const mode = process.env.MODE === "pin" ? { pin: "2026-07-28" } : "legacy";
setLabel(`@modelcontextprotocol/client ${process.env.MODE}`);
console.log(`== @modelcontextprotocol/client 2.4.0, versionNegotiation ${JSON.stringify({ mode })}`);
const client = new Client({ name: "rukh-interop", version: "0.0.1" }, { versionNegotiation: { mode } });
const transport = new StdioClientTransport(serverParams);

// Watch the wire: which methods went out, and every tools/list page.
const sent = [];
const pages = [];
const send = transport.send.bind(transport);
transport.send = (msg, opts) => { sent.push(msg); return send(msg, opts); };
await client.connect(transport);
const onmessage = transport.onmessage;
transport.onmessage = (msg, extra) => {
  if (msg.result?.tools) pages.push(msg.result);
  return onmessage(msg, extra);
};

const version = client.getNegotiatedProtocolVersion();
if (process.env.MODE === "pin") {
  // The SDK probes server/discover on a disposable sibling process.
  const d = client.getDiscoverResult();
  check(version === "2026-07-28" && client.getProtocolEra() === "modern", `negotiated ${version} (${client.getProtocolEra()})`);
  check(JSON.stringify(d?.supportedVersions) === '["2026-07-28"]' && d?.cacheScope === "private" && d?.ttlMs === 0,
    "server/discover: supportedVersions, ttlMs 0, cacheScope private", d);
  check(client.getServerVersion()?.name === "rukh", "serverInfo from _meta names rukh", client.getServerVersion());
} else {
  check(version === "2025-11-25" && client.getProtocolEra() === "legacy", `negotiated ${version} (${client.getProtocolEra()})`);
  check(sent.some((m) => m.method === "initialize"), "legacy: initialize");
}

// The SDK walks every page itself when given no cursor.
const { tools, nextCursor } = await client.listTools();
check(nextCursor === undefined, "aggregated listing has no nextCursor");
check(pages.length >= 2, `the SDK followed nextCursor over ${pages.length} pages`);
const n1 = pages[0]?.tools.length;
check(n1 >= PAGE_MIN && n1 <= PAGE_MAX && typeof pages[0]?.nextCursor === "string", `page 1 has ${n1} tools and a cursor`);
check(pages.reduce((n, p) => n + p.tools.length, 0) === TOOL_COUNT, `the pages hold ${TOOL_COUNT} tools`);
// ...and a single page on request, with the cursor the server gave.
const page2 = await client.listTools({ cursor: pages[0].nextCursor });
const names = (p) => JSON.stringify(p?.tools.map((t) => t.name));
check(names(page2) === names(pages[1]) && page2.nextCursor === pages[1]?.nextCursor, `page 2 by cursor: ${page2.tools.length} tools, as on the walk`);
checkTools(tools);

await exercise(tools, (name, args, signal) => client.callTool({ name, arguments: args }, signal ? { signal } : undefined));
check(sent.some((m) => m.method === "notifications/cancelled"), "the abort sent notifications/cancelled");
const requests = sent.filter((m) => m.id !== undefined && m.method);
if (process.env.MODE === "pin") {
  check(!requests.some((m) => m.method === "initialize"), "modern: no initialize on the session");
  const bare = requests.filter((m) => m.params?._meta?.["io.modelcontextprotocol/protocolVersion"] !== "2026-07-28");
  check(bare.length === 0, `modern: all ${requests.length} requests carry the protocol version in _meta`, bare.map((m) => m.method));
}
await client.close();
done();
