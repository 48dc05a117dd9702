// Ranks the retrieval benchmark's exported sets (bench/scripts/retrieval-peers.sh) with
// MiniSearch and prints hit@8, MRR@8 and hit@1 per set and kind, as our table does.
//
// MiniSearch indexes the same four texts our index reads (the id, the title, the
// description and the body), with its defaults: its own tokenizer, lower-casing, no
// prefix or fuzzy matching, no field boosts; a query ORs its terms. The first 8 results
// are its direct rows.
//
//   node bench/scripts/retrieval-peers.mjs DIR    (DIR/node_modules/minisearch, DIR/sets/*.json)

import { createRequire } from "node:module";
import { readdirSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";

const K = 8;
const dir = resolve(process.argv[2] ?? "target/bench-data/peers");
const require = createRequire(join(dir, "package.json"));
const mod = require("minisearch");
const MiniSearch = mod.default ?? mod;
const version = JSON.parse(
  readFileSync(join(dir, "node_modules", "minisearch", "package.json"), "utf8"),
).version;

const pct = (x) => `${(100 * x).toFixed(1)} %`;
const rows = [];
const files = readdirSync(join(dir, "sets")).filter((f) => f.endsWith(".json")).sort();
for (const f of files) {
  const set = JSON.parse(readFileSync(join(dir, "sets", f), "utf8"));
  const ms = new MiniSearch({
    idField: "key",
    fields: ["id", "title", "description", "body"],
    storeFields: ["id"],
  });
  ms.addAll(set.docs.map((d, key) => ({ key, ...d })));
  const kinds = new Map();
  for (const q of set.questions) {
    const ids = ms.search(q.query).slice(0, K).map((r) => r.id);
    const at = ids.indexOf(q.wanted);
    if (!kinds.has(q.kind)) kinds.set(q.kind, []);
    kinds.get(q.kind).push(at < 0 ? null : at + 1);
  }
  for (const [kind, ranks] of kinds) {
    const n = ranks.length;
    const hit = ranks.filter((r) => r !== null).length / n;
    const mrr = ranks.reduce((s, r) => s + (r === null ? 0 : 1 / r), 0) / n;
    const first = ranks.filter((r) => r === 1).length / n;
    rows.push(`| ${set.name} | ${set.docs.length} | ${kind} | ${n} | ${pct(hit)} / ${mrr.toFixed(3)} | ${pct(first)} |`);
  }
}
console.log(`MiniSearch ${version}, direct rows, k = ${K}:\n`);
console.log("| Set | Concepts | Kind | Questions | hit@8 / MRR@8 | hit@1 |");
console.log("|---|---:|---|---:|---:|---:|");
for (const r of rows) console.log(r);
