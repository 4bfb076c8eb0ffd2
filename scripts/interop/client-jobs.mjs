// @modelcontextprotocol/client 2.x, which knows nothing of tasks, drives the
// explicit job family (docs/tasks.md) with a 1 s timeout on every request
// while the task takes 3 s: the call answers "started" with a taskId, the
// status tool reports it working then completed, the result tool returns
// the envelope a direct call would have; a second task is cancelled through
// the cancel tool and its child is gone. MODE=pin (2026-07-28) or legacy.
// RUKH_HOME holds testdata/tasks/pkg published with jobTools (interop.sh).
import { execFileSync } from "node:child_process";
import { Client } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import { serverParams, setLabel, check, done } from "./common.mjs";

const modern = process.env.MODE === "pin";
const mode = modern ? { pin: "2026-07-28" } : "legacy";
setLabel(`@modelcontextprotocol/client job family ${process.env.MODE}`);
console.log(`== @modelcontextprotocol/client 2.4.0 job family, versionNegotiation ${JSON.stringify({ mode })}`);
const MARKER = process.env.TASKS_MARKER;

const client = new Client({ name: "rukh-interop", version: "0.0.1" }, { versionNegotiation: { mode } });
await client.connect(new StdioClientTransport(serverParams));
const short = { timeout: 1000 }; // per request
const call = (name, args) => client.callTool({ name, arguments: args }, short);

const names = (await client.listTools(undefined, short)).tools.map((t) => t.name);
for (const n of ["site_build", "rukh_task-status", "rukh_task-result", "rukh_task-cancel"]) {
  check(names.includes(n), `tools/list has ${n}`);
}

const began = Date.now();
const started = await call("site_build", { tenths: 30 });
const id = started.structuredContent?.taskId;
check(started.structuredContent?.outcome === "started" && /^t-[0-9a-f]{32}$/.test(id ?? ""), "the call answered started with a taskId", started);
let st;
for (;;) {
  st = (await call("rukh_task-status", { taskId: id })).structuredContent;
  if (st?.status !== "working" || Date.now() - began > 15000) break;
  await new Promise((r) => setTimeout(r, 200));
}
check(st?.status === "completed", "the task completed", st);
check(Date.now() - began >= 3000, `it ran past many 1 s request timeouts (${Date.now() - began} ms)`);
const res = await call("rukh_task-result", { taskId: id });
check(res.isError === false && res.structuredContent?.outcome === "succeeded" && res.structuredContent?.commandResult?.text === "built 30",
  "the result tool returned the direct call's envelope", res.structuredContent);

const second = (await call("site_build", { tenths: 600 })).structuredContent?.taskId;
const pending = await call("rukh_task-result", { taskId: second });
check(pending.isError === true, "the result of a working task is a tool error");
const cancelled = (await call("rukh_task-cancel", { taskId: second })).structuredContent;
check(cancelled?.status === "cancelled", "the cancel tool stopped it", cancelled);
let alive = true;
for (let i = 0; i < 100 && alive; i++) {
  try { execFileSync("pgrep", ["-f", MARKER]); await new Promise((r) => setTimeout(r, 50)); } catch { alive = false; }
}
check(!alive, "no process of the cancelled task is left");
await client.close();
done();
