// The browser half of bench/scripts/wasm-bench.sh: commit latency through a connection on the
// IndexedDB store, on a small tenant and on one holding a whole corpus. `window.bench(docs)`
// resolves the figures (milliseconds).

import { open, indexedDb } from '../src/browser.js';

const stats = (v) => {
  const s = [...v].sort((a, b) => a - b);
  return { n: s.length, median: s[Math.floor(s.length / 2)], p95: s[Math.min(s.length - 1, Math.floor(s.length * 0.95))], max: s[s.length - 1] };
};

const note = (i) => `---\ntype: note\n---\n# Note ${i}\n\nA short note, number ${i}.\n`;

async function writes(conn, n, bundle) {
  const times = [];
  for (let i = 0; i < n; i++) {
    const t = performance.now();
    await conn.write(bundle, `note-${i}.md`, note(i));
    times.push(performance.now() - t);
  }
  return stats(times);
}

window.bench = async (docs) => {
  const run = `${Date.now()}`;
  const small = await open({ tenant: 'small', store: indexedDb({ name: `bench-small-${run}` }) });
  await small.write('warmup', 'w.md', note('warm-up'));
  const smallWrites = await writes(small, 50, 'notes');
  await small.close();
  const big = await open({ tenant: 'big', store: indexedDb({ name: `bench-big-${run}` }) });
  let t = performance.now();
  await big.importDocuments('/bench', docs);
  const importMs = performance.now() - t;
  const bigWrites = await writes(big, 20, 'notes');
  await big.close();
  t = performance.now();
  const reopened = await open({ tenant: 'big', store: indexedDb({ name: `bench-big-${run}` }) });
  const openMs = performance.now() - t;
  t = performance.now();
  await reopened.search('campaigns spend');
  const firstSearchMs = performance.now() - t;
  await reopened.close();
  return { smallWrites, importMs, bigWrites, openMs, firstSearchMs, documents: docs.length };
};
window.benchReady = true;
