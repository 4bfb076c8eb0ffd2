// Shared checks for the npm MCP clients driving the real rukh binary
// (scripts/interop.sh). Each client script supplies an adapter; every
// check prints what it verified and any mismatch exits non-zero.
import { execFileSync } from "node:child_process";
import { isDeepStrictEqual } from "node:util";

export const env = {
  bin: need("RUKH_BIN"),
  home: need("RUKH_HOME"),
};
export const serverParams = {
  command: env.bin,
  args: ["serve-mcp"],
  env: { RUKH_HOME: env.home, PATH: process.env.PATH, LANG: "C.UTF-8" },
  stderr: "inherit",
};
export const TOOL_COUNT = 41; // testdata/interop/pkg: 5 commands + 36 fillers
// A page that has a next one holds PAGE_MIN to PAGE_MAX tools (docs/design.md, Page bounds).
export const PAGE_MIN = 12;
export const PAGE_MAX = 32;
// interop.sh makes the fixture's marker unique to its run.
const HANG_MARKER = process.env.RUKH_HANG_MARKER ?? "rukh-interop-hang-marker";
// compact tool names, the default: slug of at most 16 characters + 24 hex
const NAME_RE = /^[a-z0-9_-]{1,16}__[0-9a-f]{24}$/;

function need(k) {
  const v = process.env[k];
  if (!v) throw new Error(`${k} is not set`);
  return v;
}

let label = "client";
let failures = 0;
export function setLabel(l) { label = l; }
export function check(ok, what, detail) {
  if (ok) {
    console.log(`  ok    ${what}`);
  } else {
    failures++;
    console.log(`  FAIL  ${what}${detail === undefined ? "" : ": " + (typeof detail === "string" ? detail : JSON.stringify(detail))}`);
  }
}
export function done() {
  console.log(`${label}: ${failures === 0 ? "passed" : `FAILED (${failures} check(s))`}`);
  process.exit(failures === 0 ? 0 : 1);
}

export function toolByPrefix(tools, prefix) {
  const t = tools.find((t) => t.name.startsWith(prefix + "__"));
  if (!t) throw new Error(`no tool ${prefix}__…`);
  return t.name;
}

export function checkTools(tools) {
  check(tools.length === TOOL_COUNT, `listed ${tools.length} tools, want ${TOOL_COUNT}`);
  const names = tools.map((t) => t.name);
  check(new Set(names).size === names.length, "tool names are unique");
  const bad = names.filter((n) => !NAME_RE.test(n));
  check(bad.length === 0, "every name is slug__<24 hex>", bad);
  const open = tools.filter((t) => t.inputSchema?.type !== "object" || t.inputSchema?.additionalProperties !== false);
  check(open.length === 0, "every inputSchema is a closed object", open.map((t) => t.name));
  const noOut = tools.filter((t) => !t.outputSchema?.properties?.outcome || !t.outputSchema?.properties?.invocationId);
  check(noOut.length === 0, "every tool has the envelope outputSchema", noOut.map((t) => t.name));
  const greet = tools.find((t) => t.name.startsWith("interop_greet__"));
  const want = { title: "Greet", readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false };
  check(greet?.title === "Greet" && isDeepStrictEqual(greet?.annotations, want), "greet: title and annotations from hints", greet?.annotations);
  const fail = tools.find((t) => t.name.startsWith("interop_fail__"));
  check(fail?.annotations === undefined && fail?.title === "Always fails", "fail: no hints, no annotations, title from summary", fail);
}

// checkEnvelope: isError, structuredContent envelope, one text block that is
// the same object serialised.
export function checkEnvelope(what, r, isError, outcome) {
  const sc = r.structuredContent;
  check(Boolean(r.isError) === isError, `${what}: isError ${Boolean(r.isError)}`, r);
  check(sc?.outcome === outcome, `${what}: outcome ${sc?.outcome}`, sc);
  check(typeof sc?.invocationId === "string" && sc.invocationId.startsWith("inv_"), `${what}: invocationId ${sc?.invocationId}`);
  const texts = (r.content ?? []).filter((c) => c.type === "text");
  let same = false;
  try { same = r.content.length === 1 && texts.length === 1 && isDeepStrictEqual(JSON.parse(texts[0].text), sc); } catch {}
  check(same, `${what}: the one text block is structuredContent serialised`, r.content);
  return sc ?? {};
}

// The hang command's processes; its init (rukh-init, with the program's
// command line after its own) is not the program and is not counted.
export function procs() {
  try {
    return execFileSync("pgrep", ["-a", "-f", HANG_MARKER], { encoding: "utf8" })
      .trim().split("\n").filter((l) => l && l.split(/\s+/)[1] !== "rukh-init").length;
  } catch (e) {
    if (e.status === 1) return 0;
    throw e;
  }
}

export async function waitProcs(n, what) {
  const deadline = Date.now() + 10000;
  let got;
  while ((got = procs()) !== n && Date.now() < deadline) await new Promise((r) => setTimeout(r, 25));
  check(got === n, `${what} (${got} hang process(es), want ${n})`);
}

// exercise runs the calls through adapter.call(name, args, signal).
export async function exercise(tools, call) {
  const greet = toolByPrefix(tools, "interop_greet");
  let sc = checkEnvelope("greet", await call(greet, { name: "Ada", times: 3, tags: ["a,b", "😀 e\u0301"] }), false, "succeeded");
  check(isDeepStrictEqual(sc.commandResult, { kind: "structured", data: { name: "Ada", times: 3, tags: ["a,b", "😀 e\u0301"] } }),
    "greet: the extension got the arguments", sc.commandResult);
  sc = checkEnvelope("greet defaults", await call(greet, {}), false, "succeeded");
  check(isDeepStrictEqual(sc.commandResult?.data, { name: "world", times: 1 }), "greet: defaults applied", sc.commandResult);

  const msg = 'héllo "q" \\ 𝄞';
  sc = checkEnvelope("echo", await call(toolByPrefix(tools, "interop_echo"), { message: msg }), false, "succeeded");
  let echoed;
  try { echoed = JSON.parse(sc.commandResult?.text); } catch {}
  check(echoed?.message === msg, "echo: text result carries the input exactly", sc.commandResult);

  for (const i of [1, 36]) {
    const n = String(i).padStart(2, "0");
    // compact slugs cut interop.filler-01 to 16 characters: find it by title
    const filler = tools.find((t) => t.title === `Filler ${n}`);
    if (!filler) throw new Error(`no tool titled Filler ${n}`);
    sc = checkEnvelope(`filler-${n}`, await call(filler.name, {}), false, "succeeded");
    check(sc.commandResult?.text === `filler-${n}`, `filler-${n}: text`, sc.commandResult);
  }

  sc = checkEnvelope("fail", await call(toolByPrefix(tools, "interop_fail"), {}), true, "command_failed");
  check(sc.reason === "the thing was not there", "fail: reason", sc.reason);

  for (const args of [{ times: 9 }, { times: 1.5 }, { nope: 1 }, { name: null }]) {
    sc = checkEnvelope(`greet ${JSON.stringify(args)}`, await call(greet, args), true, "rejected");
    check(sc.commandResult === undefined, `greet ${JSON.stringify(args)}: no commandResult`);
  }

  // cancel: abort while the hanging tool runs
  check(procs() === 0, "no hang process before the cancel test");
  const ac = new AbortController();
  const pending = call(toolByPrefix(tools, "interop_hang"), {}, ac.signal).then(
    (r) => ({ r }), (e) => ({ e }));
  await waitProcs(1, "hang: the extension runs");
  ac.abort("interop test");
  const res = await Promise.race([pending, new Promise((r) => setTimeout(() => r({ timeout: true }), 10000))]);
  check(res.e !== undefined, "hang: the aborted call rejected", res.r ?? res);
  await waitProcs(0, "hang: the extension process is gone after notifications/cancelled");
  sc = checkEnvelope("greet after cancel", await call(greet, { name: "after" }), false, "succeeded");
  check(sc.commandResult?.data?.name === "after", "the server still serves after a cancel");
}
