// @modelcontextprotocol/client 2.x told when tools change: its own
// ClientOptions.listChanged handler (auto-refresh on), MODE=pin (the SDK
// opens subscriptions/listen itself) or MODE=legacy (unsolicited after
// initialize). Another rukh process publishes a profile that renames every
// tool while the client is connected.
import { execFileSync } from "node:child_process";
import { writeFileSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import { env, serverParams, setLabel, check, done, TOOL_COUNT } from "./common.mjs";

const modern = process.env.MODE === "pin";
const mode = modern ? { pin: "2026-07-28" } : "legacy";
setLabel(`@modelcontextprotocol/client list changed ${process.env.MODE}`);
console.log(`== @modelcontextprotocol/client 2.4.0 listChanged, versionNegotiation ${JSON.stringify({ mode })}`);

let onChanged;
const changed = new Promise((resolve) => { onChanged = resolve; });
const client = new Client({ name: "rukh-interop", version: "0.0.1" }, {
  versionNegotiation: { mode },
  listChanged: { tools: { debounceMs: 0, onChanged: (error, tools) => onChanged({ error, tools }) } },
});
const transport = new StdioClientTransport(serverParams);
const sent = [];
const received = [];
const send = transport.send.bind(transport);
transport.send = (msg, opts) => { sent.push(msg); return send(msg, opts); };
await client.connect(transport);
const onmessage = transport.onmessage;
transport.onmessage = (msg, extra) => { received.push(msg); return onmessage(msg, extra); };

check(client.getProtocolEra() === (modern ? "modern" : "legacy"), `era ${client.getProtocolEra()}`);
check(client.getServerCapabilities()?.tools?.listChanged === true, "the server announces tools.listChanged", client.getServerCapabilities());
const sub = client.autoOpenedSubscription;
if (modern) {
  check(sent.some((m) => m.method === "subscriptions/listen" && m.params?.notifications?.toolsListChanged === true),
    "the SDK opened subscriptions/listen for tools");
  check(sub?.honoredFilter?.toolsListChanged === true, "the acknowledgement honours toolsListChanged", sub?.honoredFilter);
} else {
  check(sub === undefined && !sent.some((m) => m.method === "subscriptions/listen"), "legacy: no subscriptions/listen");
}

const before = (await client.listTools()).tools.map((t) => t.name);
check(before.length === TOOL_COUNT, `listed ${before.length} tools`);

// Another process publishes: every revision renames every tool (the same
// namespace: a running server refuses a new one, its launch binding is fixed).
const dir = mkdtempSync(join(tmpdir(), "rukh-list-changed-"));
const profile = join(dir, "profile.json");
writeFileSync(profile, JSON.stringify({ endpoints: { local: { namespace: "interop", publish: { packages: ["interop.fake"] } } }, templates: { default: { timeoutMs: 29000 } } }));
const rukh = (...args) => execFileSync(env.bin, args, { env: { ...process.env, RUKH_HOME: env.home }, encoding: "utf8" });
rukh("policy", "set", profile);
rukh("publish");

const got = await Promise.race([changed, new Promise((r) => setTimeout(() => r({ timeout: true }), 10000))]);
check(!got.timeout, "onChanged ran after a publish by another process", got);
check(got.error === null || got.error === undefined, "the auto-refresh listed without error", got.error);
const after = (got.tools ?? []).map((t) => t.name);
check(after.length === TOOL_COUNT && !after.includes(before[0]), `the refreshed list has ${after.length} renamed tools`);
const note = received.find((m) => m.method === "notifications/tools/list_changed");
const tag = note?.params?._meta?.["io.modelcontextprotocol/subscriptionId"];
const listenId = sent.find((m) => m.method === "subscriptions/listen")?.id;
check(modern ? tag !== undefined && tag === listenId : tag === undefined,
  modern ? `the notification is tagged with the listen id ${JSON.stringify(listenId)}` : "legacy: the notification is untagged", note);

let stale;
try { await client.callTool({ name: before[0], arguments: {} }); } catch (e) { stale = e; }
check(/list tools again/.test(String(stale?.message)), "a stale name: the error says to list tools again", String(stale));

if (modern) {
  await sub.close();
  check(await sub.closed === "local", "closing the subscription");
  check(sent.some((m) => m.method === "notifications/cancelled" && m.params?.requestId === listenId),
    "close sent notifications/cancelled for the listen id");
  await new Promise((r) => setTimeout(r, 200));
  check(!received.some((m) => m.id === listenId), "no response for the cancelled listen request");
}
await client.close();
done();
