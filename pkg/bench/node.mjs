// The wasm half of bench/scripts/wasm-bench.sh: the same work as bench/examples/native_bench.rs,
// through the package's API in Node (a memory store), plus the .wasm size. Prints JSON.
// `searchMs` calls the bindings directly, as native calls the core; `connectionSearchMs` is
// `connection.search()`, which also refreshes to the store's head on each call.
// Usage: node bench/node.mjs <dir> <queries.json>

import { readFileSync } from 'node:fs';
import { gzipSync } from 'node:zlib';
import { createHash } from 'node:crypto';
import { open, memory } from 'langonrock';
import { readFolder } from '../src/folder.js';
import { WasmEngine } from '../gen/langonrock_wasm.js';
import { serveNeed } from '../src/host.js';

const [dir, queriesFile] = process.argv.slice(2);
const queries = JSON.parse(readFileSync(queriesFile, 'utf8'));
const now = () => new Date('2026-09-21T10:00:00.000Z');
const median = (v) => [...v].sort((a, b) => a - b)[Math.floor(v.length / 2)];

const read = await readFolder(dir);
const documents = read.docs.map(({ bundle, path, content }) => ({ bundle, path, content }));

const imports = [];
const importCpus = [];
const cpuMs = () => {
  const c = process.cpuUsage();
  return (c.user + c.system) / 1000;
};
let conn;
for (let i = 0; i < 3; i++) {
  await conn?.close();
  const t = performance.now();
  const c = cpuMs();
  conn = await open({ tenant: 'bench', store: memory({ strict: false }), now });
  await conn.importDocuments('/bench', documents);
  imports.push(performance.now() - t);
  importCpus.push(cpuMs() - c);
}
const concepts = (await conn.snapshot()).concepts;
let t = performance.now();
const first = await conn.search(queries[0]);
const firstSearchMs = performance.now() - t;
const perQuery = [];
let all = '';
for (let round = 0; round < 20; round++) {
  for (const q of queries) {
    t = performance.now();
    const tsv = await conn.search(q);
    perQuery.push(performance.now() - t);
    if (round === 0) all += tsv;
  }
}
await conn.close();

// The same searches on the bindings directly (no refresh per call), as native runs them.
const engine = new WasmEngine('bench');
const store = await memory({ strict: false }).open('bench');
const drive = async (op) => {
  let step = op.resume(engine, undefined);
  while (!('done' in step)) step = op.resume(engine, await serveNeed(store, step));
  op.free();
  return step.done;
};
await drive(engine.refresh());
// A connection op of the core: its refresh and clock steps answered here.
const imported = engine.import('/bench', documents, false);
let step = imported.begin(engine, false, false);
while (!('done' in step)) {
  let answer;
  if ('refresh' in step) {
    await drive(engine.refresh());
    answer = { refreshed: true };
  }
  else if ('now' in step) answer = { now: { commitTime: '2026-09-21T10:00:00.000Z', millis: 0 } };
  else answer = await serveNeed(store, step);
  step = imported.resume(engine, answer);
}
imported.free();
engine.search(queries[0], undefined, '2026-09-21');
const direct = [];
for (let round = 0; round < 20; round++) {
  for (const q of queries) {
    t = performance.now();
    engine.search(q, undefined, '2026-09-21');
    direct.push(performance.now() - t);
  }
}
engine.free();
const wasm = readFileSync(new URL('../gen/langonrock_wasm_bg.wasm', import.meta.url));
console.log(
  JSON.stringify({
    documents: documents.length,
    concepts,
    importMs: median(imports),
    importCpuMs: median(importCpus),
    firstSearchMs,
    searchMs: median(direct),
    connectionSearchMs: median(perQuery),
    searchDigest: createHash('sha256').update(all).digest('hex'),
    firstSearchLines: first.split('\n').length - 1,
    wasmBytes: wasm.byteLength,
    wasmGzipBytes: gzipSync(wasm, { level: 9 }).byteLength,
  }),
);
