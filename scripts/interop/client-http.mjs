// The npm clients over Streamable HTTP against `rukh serve-http`, with an
// agent's bearer token: CLIENT=v2 (@modelcontextprotocol/client 2.4.0,
// MODE=pin for 2026-07-28 or MODE=legacy) or CLIENT=v1
// (@modelcontextprotocol/sdk 1.32.2, legacy). RUKH_HTTP_URL is the
// endpoint's URL, RUKH_TOKEN the agent's token.
import { Client as ClientV2, StreamableHTTPClientTransport as HTTPv2 } from "@modelcontextprotocol/client";
import { Client as ClientV1 } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport as HTTPv1 } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { CallToolResultSchema } from "@modelcontextprotocol/sdk/types.js";
import { setLabel, check, done, checkTools, exercise } from "./common.mjs";

const url = new URL(process.env.RUKH_HTTP_URL);
const token = process.env.RUKH_TOKEN;
const v2 = process.env.CLIENT === "v2";
const pin = v2 && process.env.MODE === "pin";
const requestInit = { headers: { Authorization: `Bearer ${token}` } };
setLabel(`${v2 ? "@modelcontextprotocol/client" : "@modelcontextprotocol/sdk"} over HTTP ${pin ? "pin" : "legacy"}`);
console.log(`== ${v2 ? "@modelcontextprotocol/client 2.4.0" : "@modelcontextprotocol/sdk 1.32.2"} StreamableHTTPClientTransport, ${pin ? "pinned to 2026-07-28" : "legacy initialize"}`);

// Without the token, the server answers 401 and the client cannot connect.
{
  const c = v2 ? new ClientV2({ name: "rukh-interop", version: "0.0.1" }, { versionNegotiation: { mode: pin ? { pin: "2026-07-28" } : "legacy" } })
    : new ClientV1({ name: "rukh-interop", version: "0.0.1" });
  const t = v2 ? new HTTPv2(url) : new HTTPv1(url);
  let err;
  try { await c.connect(t); await c.listTools(); } catch (e) { err = e; }
  check(err !== undefined && /401|nauthori/i.test(String(err?.message ?? err) + String(err?.code ?? "")), "no token: refused (401)", String(err));
  await c.close().catch(() => {});
}

const client = v2 ? new ClientV2({ name: "rukh-interop", version: "0.0.1" }, { versionNegotiation: { mode: pin ? { pin: "2026-07-28" } : "legacy" } })
  : new ClientV1({ name: "rukh-interop", version: "0.0.1" });
const transport = v2 ? new HTTPv2(url, { requestInit }) : new HTTPv1(url, { requestInit });
const sent = [];
const send = transport.send.bind(transport);
transport.send = (msg, opts) => { sent.push(msg); return send(msg, opts); };
await client.connect(transport);
check(client.getServerVersion()?.name === "rukh", "serverInfo names rukh", client.getServerVersion());
if (pin) {
  check(client.getNegotiatedProtocolVersion() === "2026-07-28" && client.getProtocolEra() === "modern", `negotiated ${client.getNegotiatedProtocolVersion()}`);
} else {
  check(sent.some((m) => m.method === "initialize"), `legacy: initialize with ${sent.find((m) => m.method === "initialize")?.params?.protocolVersion}`);
}

const tools = [];
let cursor;
let pages = 0;
do {
  const page = await client.listTools(cursor === undefined ? {} : { cursor });
  pages++;
  tools.push(...page.tools);
  cursor = page.nextCursor;
} while (cursor !== undefined && pages < 10);
// The 2.x SDK follows nextCursor itself when given none; 1.x lists a page.
check(v2 ? pages === 1 && cursor === undefined : pages >= 2, v2 ? "the SDK followed nextCursor itself" : `walked ${pages} pages`);
checkTools(tools);

await exercise(tools, (name, args, signal) => v2
  ? client.callTool({ name, arguments: args }, signal ? { signal } : undefined)
  : client.callTool({ name, arguments: args }, CallToolResultSchema, signal ? { signal } : undefined));
if (pin) {
  const requests = sent.filter((m) => m.id !== undefined && m.method);
  check(!requests.some((m) => m.method === "initialize"), "modern: no initialize");
}
await client.close();
done();
