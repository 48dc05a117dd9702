// The files store's layout and protocol (engine.md §9.2 rule 2) as the native binary will see
// them on disk, and races between separate Node processes.

import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readdir, readFile, rm, stat, writeFile, mkdir, unlink } from 'node:fs/promises';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { files } from 'langonrock';
import { buildChain, buildCommit, bytes, text } from '../fixtures.js';
import { storeCommit } from '../../src/host.js';

const run = promisify(execFile);
const roots = [];
after(async () => {
  for (const r of roots) await rm(r, { recursive: true, force: true });
});
async function root() {
  const r = await mkdtemp(join(tmpdir(), 'langonrock-layout-'));
  roots.push(r);
  return r;
}
// The layout as docs/records.md states it, written out here so the test checks the disk.
const FOLDERS = { source: 'sources', revision: 'revisions', record: 'records', derived: 'derived', recovery: 'recovery' };
const tenantDir = (r) => join(r, 'tenants', 'acme');
const ls = async (dir) => (await readdir(dir)).sort();
const clock = (t) => {
  const c = { t, now: () => c.t };
  return c;
};

test('nothing is created for a tenant before its first commit', async () => {
  const r = await root();
  const t = await files({ dataRoot: r }).open('acme');
  const [c0] = await buildChain(1);
  assert.equal(await t.readHead(), null);
  assert.deepEqual(await t.getMany(c0.records.map((x) => x.key)), c0.records.map(() => null));
  assert.deepEqual(await t.keys(), []);
  assert.deepEqual(await t.remove(c0.records.map((x) => x.key), Date.now()), []);
  assert.equal(await t.swapHead(bytes('not the head'), c0.head), 'conflict');
  assert.deepEqual(await ls(r), []);
});

test('a commit writes the layout: one pack of its records, heads/<g>, heads/hint, an empty staging/', async () => {
  const r = await root();
  const c = clock(1_700_000_000_123);
  const t = await files({ dataRoot: r, now: c.now }).open('acme');
  const [c0, c1] = await buildChain(2);
  assert.equal((await storeCommit(t, c0)).outcome, 'committed');
  const dir = tenantDir(r);
  assert.deepEqual(await ls(dir), ['heads', 'packs', 'staging']);
  assert.deepEqual(await ls(join(dir, 'heads')), ['1', 'hint']);
  assert.deepEqual(new Uint8Array(await readFile(join(dir, 'heads', '1'))), c0.head);
  assert.equal(await readFile(join(dir, 'heads', 'hint'), 'utf8'), '1');
  assert.deepEqual(await ls(join(dir, 'staging')), []);
  const [first] = await ls(join(dir, 'packs'));
  const pack = new Uint8Array(await readFile(join(dir, 'packs', first)));
  // docs/records.md "Packs": LRPK, format 1, the record count, then 48-byte entries.
  assert.equal(text(pack.subarray(0, 4)), 'LRPK');
  const view = new DataView(pack.buffer, pack.byteOffset);
  assert.equal(view.getUint32(4, true), 1);
  assert.equal(view.getUint32(8, true), c0.records.length);
  const head = pack.subarray(0, 12 + 48 * c0.records.length);
  const digest = new Uint8Array(await crypto.subtle.digest('SHA-256', head));
  assert.equal(first, [...digest].map((b) => b.toString(16).padStart(2, '0')).join(''), 'the name is the SHA-256 of the head');
  for (const rec of c0.records) {
    let found = false;
    for (let i = 0; i + rec.bytes.length <= pack.length; i++) {
      if (pack[i] === rec.bytes[0] && pack.subarray(i, i + rec.bytes.length).every((b, j) => b === rec.bytes[j])) {
        found = true;
        break;
      }
    }
    assert.ok(found, `the pack holds ${rec.key.kind}/${rec.key.digest}`);
  }
  assert.equal(Math.floor((await stat(join(dir, 'packs', first))).mtimeMs), 1_700_000_000_123, 'the put time is the modification time');
  c.t += 5_000;
  assert.equal((await storeCommit(t, c1)).outcome, 'committed');
  assert.deepEqual(await ls(join(dir, 'heads')), ['1', '2', 'hint']);
  assert.equal(await readFile(join(dir, 'heads', 'hint'), 'utf8'), '2');
  assert.equal((await ls(join(dir, 'packs'))).length, 2, 'one pack per commit');
  // c1 re-puts the unchanged sales source: the put time of the pack holding it is refreshed.
  const shared = c1.records.find((x) => c0.records.some((y) => y.key.digest === x.key.digest));
  assert.equal(Math.floor((await stat(join(dir, 'packs', first))).mtimeMs), 1_700_000_005_123);
  assert.ok((await t.keys()).some((k) => k.key.digest === shared.key.digest && k.putTime === 1_700_000_005_123));
  assert.deepEqual(await ls(join(dir, 'staging')), []);
  // Derived and recovery records are files of their own.
  await t.put({ kind: 'derived', digest: 'd'.repeat(64) }, bytes('model'));
  await t.put({ kind: 'recovery', digest: c0.records[0].key.digest }, c0.records[0].bytes);
  assert.equal(await readFile(join(dir, 'derived', 'd'.repeat(64)), 'utf8'), 'model');
  assert.deepEqual(await ls(join(dir, 'recovery')), [c0.records[0].key.digest]);
  // Another handle (another process) reads every record from the packs.
  const other = await files({ dataRoot: r }).open('acme');
  assert.deepEqual(await other.getMany(c1.records.map((x) => x.key)), c1.records.map((x) => x.bytes));
});

test('records of a data root written before packs are read, refreshed in place and collected', async () => {
  const r = await root();
  const c = clock(1_700_000_000_000);
  const [c0] = await buildChain(1);
  const dir = tenantDir(r);
  for (const rec of c0.records) {
    await mkdir(join(dir, FOLDERS[rec.key.kind]), { recursive: true });
    await writeFile(join(dir, FOLDERS[rec.key.kind], rec.key.digest), rec.bytes);
  }
  const t = await files({ dataRoot: r, now: c.now }).open('acme');
  assert.deepEqual(await t.getMany(c0.records.map((x) => x.key)), c0.records.map((x) => x.bytes));
  assert.equal((await storeCommit(t, c0)).outcome, 'committed');
  assert.deepEqual((await ls(dir)).filter((n) => n === 'packs'), [], 'nothing new to pack');
  const src = c0.records[0];
  assert.equal(Math.floor((await stat(join(dir, FOLDERS[src.key.kind], src.key.digest))).mtimeMs), 1_700_000_000_000);
  assert.deepEqual(await t.remove([src.key], 1_700_000_000_000), [], 'put at `before`: kept');
  assert.deepEqual(await t.remove([src.key], 1_700_000_000_001), [src.key]);
  assert.deepEqual(await t.getMany([src.key]), [null]);
});

test('a pack cut short or whose index disagrees with its name is corruption naming it', async () => {
  const r = await root();
  const [c0] = await buildChain(1);
  const t = await files({ dataRoot: r }).open('acme');
  assert.equal((await storeCommit(t, c0)).outcome, 'committed');
  const dir = join(tenantDir(r), 'packs');
  const [name] = await ls(dir);
  const whole = await readFile(join(dir, name));
  await writeFile(join(dir, name), whole.subarray(0, whole.length - 1));
  const keys = c0.records.map((x) => x.key);
  await assert.rejects((await files({ dataRoot: r }).open('acme')).getMany(keys), (e) => e.code === 'CORRUPT' && e.message === `database corruption: packs/${name} is truncated`);
  const flipped = Buffer.from(whole);
  flipped[12 + 20] ^= 1;
  await writeFile(join(dir, name), flipped);
  await assert.rejects((await files({ dataRoot: r }).open('acme')).getMany(keys), (e) => e.code === 'CORRUPT' && e.message === `database corruption: packs/${name} has an index that does not match its name`);
  await assert.rejects((await files({ dataRoot: r }).open('acme')).keys(), (e) => e.code === 'CORRUPT');
});

test('the head is found from a stale hint by probing upward, and by listing when the hint is missing, wrong or collected', async () => {
  const r = await root();
  const chain = await buildChain(5);
  const t = await files({ dataRoot: r }).open('acme');
  for (const c of chain) assert.equal((await storeCommit(t, c)).outcome, 'committed');
  const heads = join(tenantDir(r), 'heads');
  const fresh = async () => (await files({ dataRoot: r }).open('acme')).readHead();
  for (const hint of ['2', '1', 'garbage', '05', '999']) {
    await writeFile(join(heads, 'hint'), hint);
    assert.deepEqual(await fresh(), chain[4].head, `hint ${hint}`);
  }
  await unlink(join(heads, 'hint'));
  assert.deepEqual(await fresh(), chain[4].head, 'no hint');
  // A hint naming a collected generation.
  await writeFile(join(heads, 'hint'), '1');
  await unlink(join(heads, '1'));
  await unlink(join(heads, '2'));
  assert.deepEqual(await fresh(), chain[4].head, 'collected hint');
});

test('collection raises heads/floor to the current generation and removes older generations and old staging files', async () => {
  const r = await root();
  const chain = await buildChain(4);
  const t = await files({ dataRoot: r }).open('acme');
  for (const c of chain.slice(0, 3)) assert.equal((await storeCommit(t, c)).outcome, 'committed');
  const dir = tenantDir(r);
  await writeFile(join(dir, 'staging', 'crashed-writer.tmp'), 'left over');
  const cutoff = Date.now() + 60_000;
  const fresh = files({ dataRoot: r, now: () => cutoff + 1 });
  const u = await fresh.open('acme');
  // A staged file written after the cutoff (by a writer in flight) stays.
  const inFlight = join(dir, 'staging', 'in-flight.tmp');
  await writeFile(inFlight, 'x');
  const { utimes } = await import('node:fs/promises');
  await utimes(inFlight, new Date(cutoff + 1), new Date(cutoff + 1));
  assert.deepEqual(await u.remove([], cutoff), []);
  assert.deepEqual(await ls(join(dir, 'heads')), ['3', 'floor', 'hint']);
  assert.equal(await readFile(join(dir, 'heads', 'floor'), 'utf8'), '3');
  assert.deepEqual(await ls(join(dir, 'staging')), ['in-flight.tmp']);
  assert.deepEqual(await u.readHead(), chain[2].head);
  assert.deepEqual(await (await files({ dataRoot: r }).open('acme')).readHead(), chain[2].head);
  // The next commit goes on from the current generation.
  assert.equal((await storeCommit(u, chain[3])).outcome, 'committed');
  assert.deepEqual(await ls(join(dir, 'heads')), ['3', '4', 'floor', 'hint']);
  // The floor never decreases.
  await writeFile(join(dir, 'heads', 'floor'), '9');
  await u.remove([], cutoff);
  assert.equal(await readFile(join(dir, 'heads', 'floor'), 'utf8'), '9');
  assert.deepEqual(await ls(join(dir, 'heads')), ['floor', 'hint']);
});

test('a writer whose link lands on a collected generation reports conflict and unlinks it', async () => {
  const r = await root();
  const [c0, c1, c2] = await buildChain(3);
  const b = await files({ dataRoot: r }).open('acme');
  assert.equal((await storeCommit(b, c0)).outcome, 'committed');
  const late = await buildCommit({ docs: [['ops', 'late.md', 'late']], parent: c0.revision, expected: c0.head });
  // Writer A has read generation 1 and staged its head; before it links heads/2, writer B
  // commits twice and collection removes generations 1 and 2.
  const a = await files({
    dataRoot: r,
    failAt: async (point) => {
      if (point !== 'swap:mid') return false;
      assert.equal((await storeCommit(b, c1)).outcome, 'committed');
      assert.equal((await storeCommit(b, c2)).outcome, 'committed');
      await b.remove([], 0);
      return false;
    },
  }).open('acme');
  assert.deepEqual(await storeCommit(a, late), { outcome: 'conflict' });
  const heads = join(tenantDir(r), 'heads');
  assert.deepEqual(await ls(heads), ['3', 'floor', 'hint']);
  assert.deepEqual(await (await files({ dataRoot: r }).open('acme')).readHead(), c2.head);
});

test('a record changed on disk under its key is detected by a put', async () => {
  const r = await root();
  const t = await files({ dataRoot: r }).open('acme');
  const [c0] = await buildChain(1);
  const src = c0.records[0];
  // A record of a data root before packs, changed on disk.
  await mkdir(join(tenantDir(r), 'sources'), { recursive: true });
  await writeFile(join(tenantDir(r), 'sources', src.key.digest), 'tampered');
  await assert.rejects(t.put(src.key, src.bytes), (e) => e.code === 'CORRUPT' && e.message === `database corruption: sources/${src.key.digest} holds different bytes than its key`);
});

test("a tenant of the reference implementation hands its HEAD file's bytes to the engine, which refuses them", async () => {
  const r = await root();
  await mkdir(tenantDir(r), { recursive: true });
  await writeFile(join(tenantDir(r), 'HEAD'), 'ref: 0123\n');
  const t = await files({ dataRoot: r }).open('acme');
  assert.equal(text(await t.readHead()), 'ref: 0123\n');
  assert.deepEqual(await ls(tenantDir(r)), ['HEAD']);
});

test('put times are whole milliseconds, exactly as put, for any clock value', async () => {
  const r = await root();
  const c = clock(0);
  const t = await files({ dataRoot: r, now: c.now }).open('acme');
  const [c0] = await buildChain(1);
  const rec = c0.records[0];
  for (const ms of [1, 999, 1_700_000_000_001, 1_700_000_000_999, 1_764_441_234_567, 4_102_444_799_999]) {
    c.t = ms;
    await t.put(rec.key, rec.bytes);
    assert.equal((await t.keys())[0].putTime, ms);
  }
});

const child = fileURLToPath(new URL('./child.js', import.meta.url));

test('racing writers in separate processes: exactly one wins, and its head is the head', async () => {
  const r = await root();
  const ROUNDS = 6;
  const [c0] = await buildChain(1);
  for (let round = 0; round < ROUNDS; round++) {
    assert.equal((await storeCommit(await files({ dataRoot: r }).open(`race${round}`), c0)).outcome, 'committed');
  }
  const startAt = Date.now() + 1500;
  const outs = await Promise.all([0, 1, 2, 3].map((i) => run(process.execPath, [child, 'race', r, String(i), String(startAt)])));
  const writers = outs.map((o) => JSON.parse(o.stdout));
  for (let round = 0; round < ROUNDS; round++) {
    const outcomes = writers.map((w) => w.outcomes[round]);
    const winners = writers.filter((w) => w.outcomes[round] === 'swapped');
    assert.equal(winners.length, 1, `round ${round}: ${JSON.stringify(outcomes)}`);
    for (const o of outcomes) assert.ok(['swapped', 'conflict'].includes(o), o);
    const t = await files({ dataRoot: r }).open(`race${round}`);
    assert.equal(text(await t.readHead()), winners[0].head);
    assert.deepEqual(await ls(join(r, 'tenants', `race${round}`, 'heads')), ['1', '2', 'hint']);
  }
});

test('a commit survives the process: a new process reopens the last acknowledged head', async () => {
  const r = await root();
  const written = await run(process.execPath, [child, 'reload-write', r]);
  const checked = await run(process.execPath, [child, 'reload-check', r, written.stdout]);
  assert.equal(checked.stdout, 'checked');
});
