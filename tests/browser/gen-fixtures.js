// gen-fixtures.js - writes the generated fixtures of the browser tests into
// OUT (argument 1): a verdict with 41 measures (3 regressed, hostile
// names), its base and head runs (stacks that grew, shrank, appeared and
// disappeared), a run with 10,000 distinct stacks, and an anatomy run
// whose reuse was not judged; with --bench also a
// run with 100,000 and a verdict over two runs of 10,000 stacks, for the
// render and interaction figures of `make bench`. Deterministic: the same
// files every time.
"use strict";
const fs = require("fs");
const path = require("path");

const out = process.argv[2] || "out";
fs.mkdirSync(out, { recursive: true });
const write = (name, doc) => fs.writeFileSync(path.join(out, name), JSON.stringify(doc, null, 1));

let seed = 12345;
function rand() { // xorshift32, deterministic
  seed ^= seed << 13; seed >>>= 0; seed ^= seed >>> 17; seed ^= seed << 5; seed >>>= 0;
  return seed / 4294967296;
}

function run(over) {
  return Object.assign({
    schema: "clockprof.run/1",
    tool: { name: "clockprof", version: "0.1.0" },
    complete: true, end_reason: "duration",
    started_at: "2026-11-29T21:00:00Z", duration_s: 2.0,
    target: { pid: 4242, comm: "server", exe: "/usr/bin/server", build_id: "9f1c", cmdline: ["./server"] },
    host: { kernel: "6.1.0-13-amd64", cpu: "AMD EPYC 7B13", clocksource: "tsc", pmu: false, tool_version: "0.1.0" },
    request: { spec: "func:handle_request", count: 200 }, ops: 200, ops_source: "request",
    clock_reads: { total: 0, per_op: 0, per_second: 0, by_entry: {}, by_clock: {}, by_path: {} },
    per_request: null, call_sites: [], stacks: [], counters: {},
    probe: { hits: 0, cost_ns_per_hit: 10500, estimated_overhead_pct: 0.5 },
    measures: { "clock_reads/op": { value: 0, unit: "reads/op", kind: "exact", better: "lower" } },
    warnings: []
  }, over);
}

const HOSTILE = "</script><img src=x onerror=alert(1)>";
const OP = "std::ostream& operator<<(std::ostream&, Foo const&)";

// --- base and head runs of a comparison.
function site(fn, file, line, via, count) {
  return { function: fn, file, line, via, module: "/usr/bin/server", count, per_op: count / 200 };
}
const base = run({
  target: { pid: 100, comm: "server", exe: "/usr/bin/server", build_id: "aaaa", cmdline: ["./server"] },
  clock_reads: { total: 1800, per_op: 9, per_second: 900, by_entry: { clock_gettime: 1800 }, by_clock: {}, by_path: { vdso: 1800 } },
  call_sites: [site("handle_request", "server.c", 42, "clock_gettime", 600),
    site("Pool::get", "pool.c", 10, "clock_gettime", 600),
    site("stats_update", "stats.c", 77, "clock_gettime", 400),
    site(OP, "foo.cc", 5, "clock_gettime", 200)],
  stacks: [
    { frames: ["main", "serve", "handle_request", "clock_gettime"], count: 600 },
    { frames: ["main", "serve", "Pool::get", "clock_gettime"], count: 600 },
    { frames: ["main", "serve", "handle_request", "stats_update", "clock_gettime"], count: 400 },
    { frames: ["main", "serve", OP, "clock_gettime"], count: 200 }]
});
const head = run({
  target: { pid: 200, comm: "server", exe: "/usr/bin/server", build_id: "bbbb", cmdline: ["./server"] },
  clock_reads: { total: 1400, per_op: 7, per_second: 700, by_entry: { clock_gettime: 1400 }, by_clock: {}, by_path: { vdso: 1400 } },
  call_sites: [site("handle_request", "server.c", 42, "clock_gettime", 200),
    site("Pool::get", "pool.c", 10, "clock_gettime", 600),
    site(HOSTILE, "evil.c", 1, "clock_gettime", 400),
    site(OP, "foo.cc", 5, "clock_gettime", 200)],
  stacks: [
    { frames: ["main", "serve", "handle_request", "clock_gettime"], count: 200 },
    { frames: ["main", "serve", "Pool::get", "clock_gettime"], count: 600 },
    { frames: ["main", "serve", "handle_request", HOSTILE, "clock_gettime"], count: 400 },
    { frames: ["main", "serve", OP, "clock_gettime"], count: 200 }]
});
write("base-1.json", base);
write("head-1.json", head);

// --- the verdict: 41 measures, 3 regressed, 2 improved, 1 inconclusive.
const measures = [];
function m(name, unit, kind, b, h, status, dir, extra) {
  const pct = b ? 100 * (h - b) / b : null;
  const spread = kind === "sampled" ? 1.2 : 0;
  return Object.assign({
    name, unit, kind, better: "lower",
    base: { median: b, lo: b * (1 - spread / 100), hi: b * (1 + spread / 100), n: 5 },
    head: { median: h, lo: h * (1 - spread / 100), hi: h * (1 + spread / 100), n: 5 },
    change_pct: pct === null ? null : { point: pct, lo: pct - spread, hi: pct + spread },
    change_abs: { point: h - b, lo: h - b, hi: h - b },
    p_value: kind === "sampled" ? 0.004 : null, p_adjusted: kind === "sampled" ? 0.03 : null,
    bound: kind === "exact" ? "+0" : "+5%", bound_rule: { line: kind === "exact" ? 1 : 5, pattern: "*" },
    status, direction: dir, reason: status + " by the bound", warnings: []
  }, extra || {});
}
measures.push(m("clock_reads/op", "reads/op", "exact", 9, 7, "improved", "better"));
measures.push(m("clock_reads.clock_gettime/op", "reads/op", "exact", 9, 7, "improved", "better"));
measures.push(m("clock_reads@" + HOSTILE + "/op", "reads/op", "exact", 0, 2, "regressed", "worse",
  { change_pct: null, reason: "0 -> 2 reads/op, beyond bound +0" }));
measures.push(m("clock_reads@" + OP + "/op", "reads/op", "exact", 1, 1.5, "regressed", "worse"));
measures.push(m("task-clock/op", "ns/op", "sampled", 7.5e6, 8.1e6, "regressed", "worse",
  { change_pct: { point: 8, lo: 6.5, hi: 9.4 } }));
measures.push(m("context-switches/op", "switches/op", "sampled", 2.0, 2.09, "inconclusive", "worse",
  { change_pct: { point: 4.5, lo: 3.2, hi: 6.1 }, reason: "interval +3.2% .. +6.1% straddles bound +5%" }));
for (let i = measures.length; i < 41; i++) {
  const b = Math.round(100 + rand() * 5000) / 10, h = b * (1 + (rand() - 0.5) * 0.04);
  measures.push(m("suite_" + String(i).padStart(2, "0") + "::bench instructions/op", "instructions/op",
    "sampled", b, h, "within", h > b ? "worse" : "better",
    { change_pct: { point: 100 * (h - b) / b, lo: 100 * (h - b) / b - 1, hi: 100 * (h - b) / b + 1 } }));
}
measures.sort((a, b) => (a.name < b.name ? -1 : 1));
write("verdict.json", {
  schema: "clockprof.verdict/1",
  tool: { name: "clockprof", version: "0.1.0" },
  created_at: "2026-11-29T21:30:00Z",
  status: "fail", exit_code: 1,
  summary: { measures: 41, within: 35, regressed: 3, improved: 2, inconclusive: 1, added: 0, removed: 0,
    outside_bounds: 3, judged: 41 },
  method: { alpha: 0.05, confidence: 0.95, interval: "hodges-lehmann", test: "mann-whitney-u", correction: "holm",
    min_runs: 4, fail_on_inconclusive: false },
  bounds: { file: ".clockprof-bounds", sha256: "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
    default: false, rules: [] },
  base: { runs: 1, files: ["base-1.json"], env: { kernel: ["6.1.0-13-amd64"], clocksource: ["tsc"] } },
  head: { runs: 1, files: ["head-1.json"], env: { kernel: ["6.1.0-15-amd64"], clocksource: ["tsc"] } },
  env_mismatch: [{ field: "kernel", base: ["6.1.0-13-amd64"], head: ["6.1.0-15-amd64"], effect: "warning" }],
  measures,
  warnings: ["base run base-1.json has <b>1</b> run only"],
  reusable_removed: [{
    read: { function: HOSTILE, file: "server.c", line: 44, callers: [{ function: "handle_request", file: "server.c", line: 40 }] },
    reuses: { function: "handle_request", file: "server.c", line: 42, callers: [] },
    share: 0.99, gap_ns: { p50: 80, p99: 300 }, per_op: 1, still_read: false }]
});

// --- Edge cases the report once drew badly at 1,400 px: a --stacks run
// whose stacks are empty, one value of reads per request for every
// request, a tiny probe overhead; a verdict whose changes span a wide range
// (a 500x improvement, a 40x regression, an interval past -100%), with a
// long reason.
write("run-edge.json", run({
  clock_reads: { total: 600, per_op: 3, per_second: 300, by_entry: { clock_gettime: 600 }, by_clock: {}, by_path: { vdso: 600 } },
  per_request: { count: 200, min: 3, p50: 3, p90: 3, p99: 3, max: 3, mean: 3, histogram: [[3, 200]] },
  stacks: [],
  probe: { hits: 600, cost_ns_per_hit: 900, estimated_overhead_pct: 2.14e-05 }
}));
const wide = JSON.parse(JSON.stringify(measures.slice(0, 6)));
wide[0] = m("clock_reads/op", "reads/op", "exact", 500, 1, "improved", "better");
wide[1] = m("task-clock/op", "ns/op", "sampled", 1000, 40000, "regressed", "worse",
  { change_pct: { point: 3900, lo: 3500, hi: 4300 } });
wide[2] = m("context-switches/op", "switches/op", "sampled", 10, 9, "inconclusive", "better",
  { change_pct: { point: -10, lo: -140, hi: 25 },
    reason: "interval -140% .. +25% straddles bound +5%: too few runs (4 per side) to tell a change this size " +
      "from noise on this machine; add runs with --runs or widen the bound in .clockprof-bounds" });
write("verdict-wide.json", Object.assign(JSON.parse(JSON.stringify(require(path.resolve(out, "verdict.json")))), {
  measures: wide,
  summary: { measures: 6, within: 3, regressed: 1, improved: 1, inconclusive: 1, added: 0, removed: 0,
    outside_bounds: 1, judged: 6 }
}));

// --- Big profiles: N distinct stacks of realistic depth and name length
// (10,000 and 100,000 for the render figures), and a base/head pair of
// 10,000 stacks each with its verdict for the differential flame graph.
const fns = [];
for (let i = 0; i < 2500; i++)
  fns.push("app::module" + (i % 40) + "::Component" + (i % 97) + "::handle_event_" + i + "(Request const&, Context&)");
const entries = ["clock_gettime", "gettimeofday", "time", "__vdso_clock_gettime"];

function bigStacks(n) {
  const seen = new Set(), stacks = [];
  let total = 0;
  while (stacks.length < n) {
    const depth = 6 + Math.floor(rand() * 14), frames = ["main", "event_loop"];
    let prev = Math.floor(rand() * 40);
    for (let d = 0; d < depth; d++) {
      prev = (prev * 7 + Math.floor(rand() * (d < 3 ? 8 : 200)) + d * 37) % fns.length;
      frames.push(fns[prev]);
    }
    frames.push(entries[Math.floor(rand() * entries.length)]);
    const key = frames.join(";");
    if (seen.has(key)) continue;
    seen.add(key);
    const count = 1 + Math.floor(Math.pow(rand(), 4) * 5000);
    total += count;
    stacks.push({ frames, count });
  }
  return { stacks, total };
}

function bigRun(stacks, total) {
  return run({
    target: { pid: 31337, comm: "bigserver", exe: "/usr/bin/bigserver", build_id: "cafe", cmdline: ["./bigserver", "--threads=64"] },
    clock_reads: { total, per_op: total / 200, per_second: total / 2, by_entry: { clock_gettime: total }, by_clock: {}, by_path: { vdso: total } },
    stacks,
    call_sites: stacks.slice(0, 500).map((s, i) => site(s.frames[s.frames.length - 2], "src/file" + i + ".cc", i + 1, "clock_gettime", s.count))
  });
}

// --- the anatomy run with reuse not judged (uprobe: a trap in each gap),
// from the hand-written fixtures/run-anatomy.json.
const unjudged = JSON.parse(fs.readFileSync(path.join(__dirname, "fixtures", "run-anatomy.json"), "utf8"));
Object.assign(unjudged.anatomy, {
  judged: false, every_request: true, truncated_requests: 0, reusable: [], reusable_per_op: 0,
  not_judged_because: "counted by uprobe: a trap in each gap <i>makes</i> gaps inexact"
});
delete unjudged.measures["clock_reads_reusable/op"];
write("run-anatomy-unjudged.json", unjudged);

const b10k = bigStacks(10000);
write("big-10000.json", bigRun(b10k.stacks, b10k.total));
if (!process.argv.includes("--bench")) process.exit(0);
const b100k = bigStacks(100000);
fs.writeFileSync(path.join(out, "big-100000.json"), JSON.stringify(bigRun(b100k.stacks, b100k.total)));

// Head: the same stacks, a quarter of them with other counts, some gone.
const headStacks = [];
let headTotal = 0;
b10k.stacks.forEach((s, i) => {
  if (i % 50 === 7) return;
  const count = i % 4 === 1 ? 1 + Math.floor(s.count * (0.2 + rand() * 2)) : s.count;
  headTotal += count;
  headStacks.push({ frames: s.frames, count });
});
write("bigbase-1.json", bigRun(b10k.stacks, b10k.total));
write("bighead-1.json", bigRun(headStacks, headTotal));
const bigVerdict = JSON.parse(fs.readFileSync(path.join(out, "verdict.json"), "utf8"));
bigVerdict.base.files = ["bigbase-1.json"];
bigVerdict.head.files = ["bighead-1.json"];
write("bigverdict.json", bigVerdict);
