// @modelcontextprotocol/inspector 2.x --cli, protocolEra modern and legacy.
// The CLI walks every tools/list page itself and cannot cancel: list, then
// a succeeding, a failing (exit 5) and a rejected (exit 5) call.
import { spawnSync } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, dirname } from "node:path";
import { fileURLToPath } from "node:url";
import { env, setLabel, check, done, checkTools, checkEnvelope, toolByPrefix } from "./common.mjs";

const era = process.env.ERA ?? "modern";
setLabel(`@modelcontextprotocol/inspector --cli ${era}`);
console.log(`== @modelcontextprotocol/inspector 2.12.0 --cli, protocolEra ${era}`);
const here = dirname(fileURLToPath(import.meta.url));
const bin = join(here, "node_modules", ".bin", "mcp-inspector");
const dir = mkdtempSync(join(tmpdir(), "rukh-inspector-"));
const config = join(dir, "mcp.json");
writeFileSync(config, JSON.stringify({ mcpServers: { rukh: {
  command: env.bin, args: ["serve-mcp"], env: { RUKH_HOME: env.home }, protocolEra: era } } }));

function inspect(...args) {
  const r = spawnSync(bin, ["--cli", "--config", config, "--server", "rukh", "--format", "json", ...args], {
    encoding: "utf8",
    // the CLI keeps its own state under HOME: keep it out of the real one
    env: { ...process.env, HOME: dir, MCP_INSPECTOR_SECRET_STORE: "memory" },
    timeout: 30000,
  });
  let out;
  try { out = JSON.parse(r.stdout); } catch {
    // an error envelope goes to stderr, after the banners
    const line = r.stderr.split("\n").reverse().find((l) => l.startsWith("{"));
    try { out = JSON.parse(line); } catch { out = { stdout: r.stdout, stderr: r.stderr }; }
  }
  return { status: r.status, out };
}

let r = inspect("--method", "tools/list", "--strict");
check(r.status === 0, `tools/list --strict exit ${r.status} (no schema portability errors)`, r.out);
const tools = r.out.result?.tools ?? [];
checkTools(tools);

const greet = toolByPrefix(tools, "interop_greet");
r = inspect("--method", "tools/call", "--tool-name", greet, "--tool-args-json", JSON.stringify({ name: "Ada", times: 2, tags: ["a,b"] }));
check(r.status === 0, `greet: exit ${r.status}`);
let sc = checkEnvelope("greet", r.out.result ?? {}, false, "succeeded");
check(JSON.stringify(sc.commandResult?.data) === '{"name":"Ada","tags":["a,b"],"times":2}', "greet: the extension got the arguments", sc.commandResult);

r = inspect("--method", "tools/call", "--tool-name", toolByPrefix(tools, "interop_fail"));
check(r.status === 5, `fail: exit ${r.status}, want 5 (isError)`);
sc = checkEnvelope("fail", r.out.result ?? {}, true, "command_failed");
check(sc.reason === "the thing was not there", "fail: reason", sc.reason);

r = inspect("--method", "tools/call", "--tool-name", greet, "--tool-args-json", '{"times":9}');
check(r.status === 5, `greet {"times":9}: exit ${r.status}, want 5 (isError)`);
checkEnvelope('greet {"times":9}', r.out.result ?? {}, true, "rejected");

r = inspect("--method", "tools/call", "--tool-name", "interop_greet__0000");
check(r.status === 5 && r.out.error?.code === "tool_not_found", `unknown tool: exit ${r.status}, ${r.out.error?.code}`);
done();
