// @modelcontextprotocol/inspector 2.x --cli, protocolEra modern and legacy,
// over stdio (serve-mcp from a config file) or, with TRANSPORT=http, over
// Streamable HTTP (serve-http at RUKH_HTTP_URL with --header
// "Authorization: Bearer $RUKH_TOKEN"). The CLI walks every tools/list page
// itself and cannot cancel: list, then a succeeding, a failing (exit 5) and
// a rejected (exit 5) call, an unknown tool and, over HTTP, a bad token.
import { spawnSync } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, dirname } from "node:path";
import { fileURLToPath } from "node:url";
import { env, setLabel, check, done, checkTools, checkEnvelope, toolByPrefix } from "./common.mjs";

const era = process.env.ERA ?? "modern";
const overHTTP = process.env.TRANSPORT === "http";
setLabel(`@modelcontextprotocol/inspector --cli ${overHTTP ? "http " : ""}${era}`);
console.log(`== @modelcontextprotocol/inspector 2.12.0 --cli, ${overHTTP ? "Streamable HTTP" : "stdio"}, protocolEra ${era}`);
const here = dirname(fileURLToPath(import.meta.url));
const bin = join(here, "node_modules", ".bin", "mcp-inspector");
const dir = mkdtempSync(join(tmpdir(), "rukh-inspector-"));
const config = join(dir, "mcp.json");
writeFileSync(config, JSON.stringify({ mcpServers: { rukh: {
  command: env.bin, args: ["serve-mcp"], env: { RUKH_HOME: env.home }, protocolEra: era } } }));

let target = ["--config", config, "--server", "rukh"];
if (overHTTP) {
  const url = process.env.RUKH_HTTP_URL, token = process.env.RUKH_TOKEN;
  if (!url || !token) throw new Error("TRANSPORT=http needs RUKH_HTTP_URL and RUKH_TOKEN");
  target = (tok) => ["--server-url", url, "--transport", "http", "--header", `Authorization: Bearer ${tok ?? token}`, "--protocol-era", era];
}

function inspectAs(token, ...args) {
  const where = typeof target === "function" ? target(token) : target;
  const r = spawnSync(bin, ["--cli", ...where, "--format", "json", ...args], {
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
  return { status: r.status, out, stderr: r.stderr };
}
const inspect = (...args) => inspectAs(undefined, ...args);

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

if (overHTTP) {
  // A token that is not the agent's: 401, nothing listed (the CLI calls
  // that auth_required; --stored-auth-only: no interactive OAuth instead).
  r = inspectAs("rukh_static_not-a-real-token", "--stored-auth-only", "--method", "tools/list");
  check(r.status === 3 && !r.out.result, `bad token: exit ${r.status}, want 3, no result`, r.out);
  check(r.out.error?.code === "auth_required" && /HTTP 401|unauthorized: the bearer token is not valid/.test(r.out.error?.message), "bad token: the CLI reports the 401", r.out);
}
done();
