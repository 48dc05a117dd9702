// Realistic commits for the store suites: records in the engine's canonical JSON encodings
// (core/src/engine/records.rs), keyed by their SHA-256, as a prepared commit would carry them.
// Runs in Node and in a browser page (WebCrypto).

import { sha256Hex } from '../src/stores/common.js';

const enc = new TextEncoder();
export const bytes = (s) => enc.encode(s);
export const text = (b) => new TextDecoder().decode(b);
const str = (s) => JSON.stringify(s);
const header = (format) => `{"format":"${format}","version":1`;

async function record(kind, body) {
  const b = bytes(body);
  return { key: { kind, digest: await sha256Hex(b) }, bytes: b };
}

/**
 * A prepared commit: `docs` is `[bundle, path, text][]`. Returns `{expected, head, records,
 * revision}`; `records` are every record the new revision reaches (sources, bundle records,
 * the revision record), in put order.
 */
export async function buildCommit({ docs, parent = null, expected = null, created = '2026-05-01T09:30:00.000Z', retainedFrom = null }) {
  const records = [];
  const bundles = new Map();
  for (const [bundle, path, body] of docs) {
    const src = await record('source', body);
    records.push(src);
    if (!bundles.has(bundle)) bundles.set(bundle, []);
    bundles.get(bundle).push([path, src.key.digest]);
  }
  const refs = [];
  for (const name of [...bundles.keys()].sort()) {
    const documents = bundles.get(name).sort((a, b) => (a[0] < b[0] ? -1 : 1));
    const rec = await record('record', `${header('langonrock/bundle')},"documents":[${documents.map(([p, h]) => `[${str(p)},"${h}"]`).join(',')}]}`);
    records.push(rec);
    refs.push({ name, record: rec.key.digest, concepts: documents.length });
  }
  const snapshot = await sha256Hex(bytes(`snapshot of ${JSON.stringify(docs)}`));
  const rev = await record(
    'revision',
    `${header('langonrock/revision')},"parent":${parent ? `"${parent}"` : 'null'},"snapshot":"${snapshot}","created":${str(created)},"bundles":[${refs
      .map((r) => `{"name":${str(r.name)},"record":"${r.record}","concepts":${r.concepts}}`)
      .join(',')}]}`,
  );
  records.push(rev);
  const head = bytes(
    `${header('langonrock/head')},"revision":"${rev.key.digest}","retainedFrom":${retainedFrom ? `"${retainedFrom}"` : 'null'},"baselines":[]}`,
  );
  return { expected, head, records, revision: rev.key.digest };
}

/** A chain of `n` commits, each one editing one document of the previous state. */
export async function buildChain(n, tag = 'c') {
  const out = [];
  let parent = null;
  let expected = null;
  for (let i = 0; i < n; i++) {
    const docs = [
      ['ops', 'runbook.md', `---\ntype: runbook\n---\n# Runbook ${tag}${i}\n`],
      ['sales', 'orders.md', `---\ntype: table\n---\n# Orders\nstable\n`],
    ];
    const c = await buildCommit({ docs, parent, expected, created: `2026-05-01T09:30:${String(i % 60).padStart(2, '0')}.000Z` });
    out.push(c);
    parent = c.revision;
    expected = c.head;
  }
  return out;
}
