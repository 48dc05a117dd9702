// The JS store API cases (js.md §2): what only the JS store contract has — batched puts, key
// and byte validation, private copies, tenant names, concurrent swaps within one runtime,
// failure injection through `failAt`, the strict memory store's refusals — run against every
// JS store, in Node (memory, files) and in a browser page (IndexedDB). The conformance cases
// of engine.md §9.3 are the shared file tests/data/conformance.json (conformance-file.js),
// which the Rust stores run too.
//
// A runner gives each case a context:
//   make(options?)          a store on a fresh, empty data root
//   reopen(store, options?) another store object on the same data root, as a new process,
//                           page or connection would open it
//   strict                  true for the memory store's extra checks
// `options` are the store's own: {now, failAt}. Every case opens tenant `acme`.

import * as assert from './assert.js';
import { buildChain, buildCommit, bytes, text } from './fixtures.js';
import { storeCommit } from '../src/host.js';
import { WasmHeadCheck } from '../gen/langonrock_wasm.js';
import { keyString, sha256Hex } from '../src/stores/common.js';

const TENANT = 'acme';

/** A settable clock for put times. */
export function clock(t = 1_000_000) {
  const c = { t, now: () => c.t };
  return c;
}

/** A failAt hook that fires on the `nth` call at `point` (1 = the first). */
export function failOn(point, nth = 1) {
  let n = 0;
  return (p) => p === point && ++n === nth;
}

async function open(store, tenant = TENANT) {
  return store.open(tenant);
}

async function commitAll(t, commits) {
  for (const c of commits) {
    const r = await storeCommit(t, c);
    assert.equal(r.outcome, 'committed', `commit ${c.revision.slice(0, 8)}`);
  }
}

// Every record the head reaches is present: the state is one revision, not a mix.
async function assertWhole(t, what) {
  const head = await t.readHead();
  if (head === null) return;
  const records = new Map();
  for (const info of await t.keys()) {
    records.set(keyString(info.key), (await t.get(info.key)) ?? undefined);
  }
  const check = new WasmHeadCheck();
  try {
    assert.equal(check.check(head, (k) => records.get(k)), undefined, `${what}: a record the head reaches is missing`);
  } finally {
    check.free();
  }
}

const derivedKey = async (s) => ({ kind: 'derived', digest: await sha256Hex(bytes(`derived ${s}`)) });
const sourceRecord = async (s) => {
  const b = bytes(s);
  return { key: { kind: 'source', digest: await sha256Hex(b) }, bytes: b };
};

export const cases = [
  {
    name: 'putMany, where a store has it, writes every record or, after a conflicting put, none',
    async run({ make }) {
      const t = await open(await make());
      if (typeof t.putMany !== 'function') return;
      const a = await sourceRecord('batch a');
      const b = await sourceRecord('batch b');
      await t.putMany([a, b]);
      assert.deepEqual(await t.getMany([a.key, b.key]), [a.bytes, b.bytes]);
      const c = await sourceRecord('batch c');
      const clash = { key: a.key, bytes: bytes('other bytes') };
      await assert.rejects(t.putMany([c, clash]), 'CORRUPT', 'database corruption: ');
      assert.equal(await t.get(c.key), null, 'nothing of the refused batch is written');
      assert.deepEqual(await t.get(a.key), a.bytes);
    },
  },
  {
    name: 'the first swap expects no head, each later one the current head',
    async run({ make }) {
      const t = await open(await make());
      const [c0, c1, c2] = await buildChain(3);
      assert.equal((await storeCommit(t, c0)).outcome, 'committed');
      assert.deepEqual(await t.readHead(), c0.head);
      assert.equal(await t.swapHead(null, c1.head), 'conflict', 'no-head expectation against a head');
      assert.deepEqual(await t.readHead(), c0.head);
      await commitAll(t, [c1, c2]);
      assert.deepEqual(await t.readHead(), c2.head);
    },
  },
  {
    name: 'a stale expected head gives conflict and leaves the head',
    async run({ make }) {
      const t = await open(await make());
      const [c0, c1] = await buildChain(2);
      await commitAll(t, [c0, c1]);
      const late = await buildCommit({ docs: [['ops', 'late.md', 'late']], parent: c0.revision, expected: c0.head });
      assert.deepEqual(await storeCommit(t, late), { outcome: 'conflict' });
      assert.deepEqual(await t.readHead(), c1.head);
      const other = await t.swapHead(bytes('{"not":"the head"}'), late.head);
      assert.equal(other, 'conflict');
      assert.deepEqual(await t.readHead(), c1.head);
    },
  },
  {
    name: 'racing writers on one head: exactly one wins, every other gets conflict',
    async run({ make, reopen }) {
      const first = await make();
      const t = await open(first);
      const [c0] = await buildChain(1);
      await commitAll(t, [c0]);
      const writers = [];
      for (let i = 0; i < 6; i++) {
        const s = await reopen(first);
        const commit = await buildCommit({ docs: [['ops', `w${i}.md`, `writer ${i}`]], parent: c0.revision, expected: c0.head });
        writers.push({ t: await open(s), commit });
      }
      const results = await Promise.all(writers.map((w) => storeCommit(w.t, w.commit)));
      const won = results.map((r, i) => (r.outcome === 'committed' ? i : -1)).filter((i) => i >= 0);
      assert.equal(won.length, 1, `winners ${JSON.stringify(results)}`);
      for (const r of results) assert.ok(r.outcome === 'committed' || r.outcome === 'conflict', `unexpected ${JSON.stringify(r)}`);
      const winner = writers[won[0]].commit;
      assert.deepEqual(await t.readHead(), winner.head);
      assert.deepEqual(await open(await reopen(first)).then((x) => x.readHead()), winner.head);
      // Racing the next round from a stale view: the losers' retries all conflict.
      const again = await Promise.all(writers.filter((_, i) => i !== won[0]).map((w) => storeCommit(w.t, w.commit)));
      for (const r of again) assert.equal(r.outcome, 'conflict');
    },
  },
  {
    name: 'keys gives put times and sizes; remove drops only records put before `before`',
    async run({ make }) {
      const c = clock(1_000);
      const t = await open(await make({ now: c.now }));
      const a = await sourceRecord('a');
      const b = await sourceRecord('bb');
      const d = await sourceRecord('ddd');
      const missing = await sourceRecord('never put');
      await t.put(a.key, a.bytes);
      c.t = 2_000;
      await t.put(b.key, b.bytes);
      c.t = 5_000;
      await t.put(d.key, d.bytes);
      c.t = 4_000;
      await t.put(a.key, a.bytes); // refreshed
      const sorted = (xs) => [...xs].sort((x, y) => (x.key.digest < y.key.digest ? -1 : 1));
      assert.deepEqual(
        sorted(await t.keys()),
        sorted([
          { key: a.key, putTime: 4_000, size: 1 },
          { key: b.key, putTime: 2_000, size: 2 },
          { key: d.key, putTime: 5_000, size: 3 },
        ]),
      );
      const removed = await t.remove([a.key, b.key, d.key, missing.key, b.key], 3_000);
      assert.deepEqual(removed, [b.key]);
      assert.equal(await t.get(b.key), null);
      assert.deepEqual(await t.get(a.key), a.bytes);
      assert.deepEqual(
        sorted(await t.keys()),
        sorted([
          { key: a.key, putTime: 4_000, size: 1 },
          { key: d.key, putTime: 5_000, size: 3 },
        ]),
      );
      // Exactly at `before` stays: only put times strictly before it go.
      assert.deepEqual(await t.remove([a.key], 4_000), []);
      assert.deepEqual(await t.remove([a.key, d.key], 4_001), [a.key]);
      // A removed record can be put again.
      await t.put(b.key, b.bytes);
      assert.deepEqual(await t.get(b.key), b.bytes);
    },
  },
  {
    name: 'tenants are separate',
    async run({ make }) {
      const s = await make();
      const [c0] = await buildChain(1);
      await commitAll(await open(s, 'acme'), [c0]);
      const other = await open(s, 'globex');
      assert.equal(await other.readHead(), null);
      assert.equal(await other.get(c0.records[0].key), null);
      assert.deepEqual(await other.keys(), []);
      const c = await buildCommit({ docs: [['hr', 'x.md', 'globex']] });
      assert.equal((await storeCommit(other, c)).outcome, 'committed');
      assert.deepEqual(await (await open(s, 'acme')).readHead(), c0.head);
    },
  },
  {
    name: 'tenant ids are checked and lower-cased',
    async run({ make }) {
      const s = await make();
      const [c0] = await buildChain(1);
      await commitAll(await open(s, 'Acme'), [c0]);
      assert.deepEqual(await (await open(s, 'acme')).readHead(), c0.head);
      for (const bad of ['../etc', '', 'a/b', '.x', 'x'.repeat(65), 42]) {
        await assert.rejects(Promise.resolve().then(() => s.open(bad)), 'INVALID', 'invalid tenant id ');
      }
    },
  },
  {
    name: 'stored bytes are private copies',
    async run({ make }) {
      const t = await open(await make());
      const r = await sourceRecord('original');
      const mine = r.bytes.slice();
      await t.put(r.key, mine);
      mine[0] = 0x21;
      const got = await t.get(r.key);
      assert.deepEqual(got, r.bytes);
      got[0] = 0x21;
      assert.deepEqual(await t.get(r.key), r.bytes);
    },
  },
  {
    name: 'malformed keys and bytes are refused with INVALID',
    async run({ make }) {
      const t = await open(await make());
      const r = await sourceRecord('x');
      await assert.rejects(t.put({ kind: 'blob', digest: r.key.digest }, r.bytes), 'INVALID', 'invalid store key ');
      await assert.rejects(t.get({ kind: 'source', digest: r.key.digest.toUpperCase() }), 'INVALID', 'invalid store key ');
      await assert.rejects(t.getMany([r.key, { kind: 'source', digest: '../../x' }]), 'INVALID', 'invalid store key ');
      await assert.rejects(t.put(r.key, 'x'), 'INVALID');
      await assert.rejects(t.swapHead(null, 'head'), 'INVALID');
      await assert.rejects(t.remove([r.key], '1000'), 'INVALID');
      assert.deepEqual(await t.keys(), []);
    },
  },
  {
    name: 'an injected read failure is a STORE error',
    async run({ make, reopen }) {
      const first = await make();
      const [c0] = await buildChain(1);
      await commitAll(await open(first), [c0]);
      for (const [point, call] of [
        ['readHead', (t) => t.readHead()],
        ['get', (t) => t.getMany([c0.records[0].key])],
        ['keys', (t) => t.keys()],
        ['remove', (t) => t.remove([c0.records[0].key], Number.MAX_SAFE_INTEGER)],
      ]) {
        const t = await open(await reopen(first, { failAt: failOn(point) }));
        await assert.rejects(call(t), 'STORE', 'injected failure at ');
      }
      const t = await open(await reopen(first));
      assert.deepEqual(await t.readHead(), c0.head);
      assert.deepEqual(await t.get(c0.records[0].key), c0.records[0].bytes);
    },
  },
  {
    name: 'memory is strict: a head reaching a record never put, or a key not matching its bytes, is refused',
    strictOnly: true,
    async run({ make }) {
      const t = await open(await make());
      const [c0] = await buildChain(1);
      await assert.rejects(t.swapHead(null, bytes('{"format":"something else"}')), 'STORE', 'new head is not a head record');
      await assert.rejects(t.swapHead(null, c0.head), 'STORE', `head references revision/${c0.revision}, which was never put`);
      assert.equal(await t.readHead(), null);
      for (const r of c0.records.slice(1)) await t.put(r.key, r.bytes);
      await assert.rejects(t.swapHead(null, c0.head), 'STORE', `head references ${keyString(c0.records[0].key)}, which was never put`);
      await t.put(c0.records[0].key, c0.records[0].bytes);
      assert.equal(await t.swapHead(null, c0.head), 'swapped');
      const r = await sourceRecord('x');
      await assert.rejects(t.put(r.key, bytes('y')), 'CORRUPT', `database corruption: ${keyString(r.key)} put with bytes of another digest`);
      // A removed record makes the head unreachable for the next swap.
      const [, c1] = await buildChain(2);
      await assert.rejects(
        (async () => {
          await t.remove([c0.records[0].key], Number.MAX_SAFE_INTEGER);
          for (const x of c1.records) await t.put(x.key, x.bytes);
          return t.swapHead(c0.head, c1.head);
        })(),
        'STORE',
        `head references ${keyString(c0.records[0].key)}, which was never put`,
      );
    },
  },
];

/**
 * Persistence across a process exit or a page reload: `write` commits two revisions, then
 * aborts one commit at a put and one in the middle of its swap, and answers what `check`
 * must find after the reload (plain JSON, so it can cross to the next page or process).
 * `open(options)` opens a store on the fixed data root.
 */
export const reload = {
  async write(open) {
    const chain = await buildChain(2, 'reload');
    const t = await (await open()).open(TENANT);
    await commitAll(t, chain);
    const abortedPut = await buildCommit({ docs: [['ops', 'p.md', 'aborted at a put'], ['ops', 'q.md', 'x']], parent: chain[1].revision, expected: chain[1].head });
    const failingPut = await (await open({ failAt: failOn('put', 2) })).open(TENANT);
    assert.equal((await storeCommit(failingPut, abortedPut)).outcome, 'failed');
    const abortedSwap = await buildCommit({ docs: [['ops', 's.md', 'aborted in the swap']], parent: chain[1].revision, expected: chain[1].head });
    const failingSwap = await (await open({ failAt: failOn('swap:mid') })).open(TENANT);
    assert.equal((await storeCommit(failingSwap, abortedSwap)).outcome, 'failed');
    return {
      head: text(chain[1].head),
      records: chain.flatMap((c) => c.records).map((r) => [keyString(r.key), text(r.bytes)]),
      abortedHeads: [text(abortedPut.head), text(abortedSwap.head)],
    };
  },
  async check(open, expected) {
    const t = await (await open()).open(TENANT);
    const head = await t.readHead();
    assert.ok(head !== null, 'a head after the reload');
    assert.equal(text(head), expected.head);
    for (const aborted of expected.abortedHeads) assert.ok(text(head) !== aborted, 'an aborted commit is not the head');
    for (const [k, body] of expected.records) {
      const [kind, digest] = k.split('/');
      const got = await t.get({ kind, digest });
      assert.ok(got !== null, `${k} after the reload`);
      assert.equal(text(got), body, k);
    }
    await assertWhole(t, 'after the reload');
  },
};
