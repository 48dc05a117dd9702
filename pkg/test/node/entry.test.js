// The Node entry: the `node` export condition loads the wasm module from disk, and the API
// shared with browsers is there.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import * as langonrock from 'langonrock';
import { LangonrockError, CODES, memory, version } from 'langonrock';
import { buildChain } from '../fixtures.js';
import { declaredValues } from '../declared.js';
import { serial, serveNeed, storeCommit } from '../../src/host.js';

const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8'));

test('the Node entry loads the wasm module and returns the package version', () => {
  assert.equal(version(), pkg.version);
  assert.match(import.meta.resolve('langonrock'), /\/src\/node\.js$/);
});

test('the Node entry exports the shared API and the files store, not IndexedDB', () => {
  assert.deepEqual(Object.keys(langonrock).sort(), ['CODES', 'LangonrockError', 'checkBundleName', 'checkDocumentPath', 'createMcpServer', 'endsWithMd', 'exportFolder', 'files', 'importFolder', 'linkTargets', 'memory', 'nfc', 'open', 'planFolder', 'version']);
});

test('the name rules of compile.md §10 are callable before any connection, with the exact messages', () => {
  assert.equal(langonrock.checkBundleName('notes'), undefined);
  assert.throws(() => langonrock.checkBundleName('My Notes'), (e) => e instanceof LangonrockError && e.code === 'INVALID' && e.message.startsWith('invalid bundle name "My Notes"'));
  assert.equal(langonrock.checkDocumentPath('Notes/Cafe\u0301.md'), 'Notes/Caf\u00e9.md', 'the path comes back in NFC');
  assert.throws(() => langonrock.checkDocumentPath('a:b.md'), (e) => e.code === 'INVALID' && /^invalid path "a:b\.md"/.test(e.message));
  assert.throws(() => langonrock.checkDocumentPath('notes.txt'), (e) => e.code === 'INVALID' && /^invalid path "notes\.txt"/.test(e.message));
  assert.equal(langonrock.endsWithMd('Read.MD'), true);
  assert.equal(langonrock.endsWithMd('read.txt'), false);
  assert.equal(langonrock.nfc('Cafe\u0301'), 'Caf\u00e9');
});

test('LangonrockError is a real Error with a code and the optional fields only when given', () => {
  assert.deepEqual(CODES, ['INVALID', 'NOT_FOUND', 'CONFLICT', 'INDETERMINATE_COMMIT', 'CORRUPT', 'STORE', 'UNAUTHORIZED', 'FORBIDDEN']);
  const e = new LangonrockError('INDETERMINATE_COMMIT', 'commit outcome is indeterminate; inspect revision abc before retrying', { revision: 'abc' });
  assert.ok(e instanceof Error);
  assert.equal(e.name, 'LangonrockError');
  assert.equal(e.code, 'INDETERMINATE_COMMIT');
  assert.equal(e.revision, 'abc');
  assert.ok(!('reason' in e) && !('changes' in e));
  const c = new LangonrockError('CONFLICT', 'concept changed since it was read: re-read the concept and retry with its new hash', {
    reason: 'changed',
    changes: [{ index: 0, reason: 'changed' }],
  });
  assert.deepEqual([c.reason, c.changes], ['changed', [{ index: 0, reason: 'changed' }]]);
  assert.ok(!('revision' in c));
});

test('serial runs tasks one at a time in call order, and a failure reaches only its caller', async () => {
  const run = serial();
  const log = [];
  const task = (name, ms, fail) => () =>
    new Promise((resolve, reject) => {
      log.push(`start ${name}`);
      setTimeout(() => {
        log.push(`end ${name}`);
        fail ? reject(new Error(name)) : resolve(name);
      }, ms);
    });
  const results = await Promise.allSettled([run(task('a', 30)), run(task('b', 5, true)), run(task('c', 1))]);
  assert.deepEqual(log, ['start a', 'end a', 'start b', 'end b', 'start c', 'end c']);
  assert.deepEqual(
    results.map((r) => r.status),
    ['fulfilled', 'rejected', 'fulfilled'],
  );
});

test('storeCommit stops at the first failed put and never swaps after it', async () => {
  const points = [];
  const failAt = (point) => {
    points.push(point);
    return point === 'put' && points.length === 2;
  };
  const t = await memory({ failAt }).open('acme');
  const [c0] = await buildChain(1);
  const r = await storeCommit(t, c0);
  assert.equal(r.outcome, 'failed');
  assert.equal(r.error.message, 'injected failure at put');
  assert.deepEqual(points, ['put', 'put']);
  assert.equal(await t.readHead(), null);
});

test('the Node types declare exactly the values the Node entry exports', () => {
  assert.deepEqual(declaredValues('index.d.ts', 'node.d.ts'), Object.keys(langonrock).sort());
});

test('serveNeed answers each store step from a real store, and store failures as data', async () => {
  const points = [];
  let failNext = null;
  const t = await memory({ failAt: (p) => (points.push(p), p === failNext) }).open('acme');
  const [c0, c1] = await buildChain(2);
  assert.deepEqual(await serveNeed(t, { need: 'head' }), { head: null });
  assert.deepEqual(await serveNeed(t, { need: 'commit', ...c0 }), { outcome: 'committed' });
  assert.deepEqual(await serveNeed(t, { need: 'head' }), { head: c0.head });
  assert.deepEqual(await serveNeed(t, { need: 'records', keys: [c0.records[0].key, c1.records[0].key] }), { records: [c0.records[0].bytes, null] });
  assert.deepEqual(await serveNeed(t, { need: 'commit', ...c1, expected: null }), { outcome: 'conflict' });
  failNext = 'swap:after';
  assert.deepEqual(await serveNeed(t, { need: 'commit', ...c1 }), { outcome: 'indeterminate' });
  failNext = 'put';
  assert.deepEqual(await serveNeed(t, { need: 'commit', ...c1, expected: c1.head }), { outcome: { failed: { kind: 'failed', message: 'injected failure at put' } } });
  failNext = 'get';
  assert.deepEqual(await serveNeed(t, { need: 'records', keys: [c0.records[0].key] }), { failed: { kind: 'failed', message: 'injected failure at get' } });
  failNext = null;
  const { keys } = await serveNeed(t, { need: 'keys' });
  assert.equal(keys.length, new Set([...c0.records, ...c1.records].map((r) => r.key.digest)).size);
  assert.deepEqual(await serveNeed(t, { need: 'remove', keys: [c0.records[0].key], before: 0 }), { removed: [] });
  const wrong = { kind: 'source', digest: c0.records[1].key.digest };
  assert.deepEqual(await serveNeed(t, { need: 'commit', expected: c1.head, head: c1.head, records: [{ key: wrong, bytes: c0.records[0].bytes }] }), {
    outcome: { failed: { kind: 'corrupt', message: `database corruption: source/${wrong.digest} put with bytes of another digest` } },
  });
  await assert.rejects(serveNeed(t, { need: 'nap' }), TypeError);
});

test('planFolder is the core folder rule: a flat folder is one bundle, nothing to import is INVALID', () => {
  const plan = langonrock.planFolder(
    [
      { path: 'b.md', kind: 'file' },
      { path: 'a.md', kind: 'file' },
      { path: '.obsidian', kind: 'other' },
    ],
    { name: 'My Notes', shown: './My Notes' },
  );
  assert.deepEqual(
    [plan.layout, plan.bundle, plan.chosen, plan.bundles, plan.documents],
    ['one', 'My-Notes', false, ['My-Notes'], [{ entry: 1, bundle: 'My-Notes', path: 'a.md' }, { entry: 0, bundle: 'My-Notes', path: 'b.md' }]],
  );
  assert.match(plan.line, /^reading \.\/My Notes as one bundle "My-Notes" \(named after "My Notes"\): /);
  assert.throws(() => langonrock.planFolder([{ path: 'x.txt', kind: 'file' }], { shown: 'd' }), (e) => {
    assert.ok(e instanceof LangonrockError);
    assert.deepEqual([e.code, e.message], ['INVALID', 'nothing to import in d: 1 file and none ends in .md (x.txt)']);
    return true;
  });
});
