// The JS engine-level conformance cases (engine.md §8, §9.3): connections from `open()` over
// a real store, with failures injected through the store's `failAt` hook. Written once and
// run in Node (memory, files) and in a browser page (IndexedDB).
//
// A runner gives each case a context:
//   lib                     the package entry (open, …)
//   make(options?)          a store on a fresh, empty data root
//   reopen(store, options?) another store object on the same data root
// `options` are the store's own: {now, failAt}. Every case opens tenant `acme`.

import * as assert from './assert.js';

const TENANT = 'acme';
const clock = () => new Date('2026-05-01T09:30:00.000Z');

const doc = (title, body = 'Some text about it.') => `---\ntype: note\n---\n# ${title}\n\n${body}\n`;

/**
 * A failure-injection hook with controls: `failNext(point, nth)` makes the nth call at
 * `point` fail once; `hold(point)` makes the next call at `point` wait until `release()`,
 * and `reached` resolves when it waits; `points` records every call.
 */
export function control() {
  const c = {
    points: [],
    fail: null,
    gate: null,
    failNext(point, nth = 1) {
      c.fail = { point, nth, seen: 0 };
    },
    hold(point) {
      let reached;
      let release;
      const gate = { point, reached: new Promise((r) => (reached = r)), open: new Promise((r) => (release = r)) };
      gate.arrive = reached;
      c.gate = gate;
      return { reached: gate.reached, release: () => release() };
    },
    kinds: [],
    async failAt(point, detail) {
      c.points.push(point);
      if (point === 'get') for (const k of detail?.keys ?? []) c.kinds.push(k.kind);
      const g = c.gate;
      if (g && g.point === point) {
        c.gate = null;
        g.arrive();
        await g.open;
      }
      const f = c.fail;
      if (f && f.point === point && ++f.seen === f.nth) {
        c.fail = null;
        return true;
      }
      return false;
    },
  };
  c.failAt = c.failAt.bind(c);
  return c;
}

async function connect(lib, store, extra = {}) {
  return lib.open({ tenant: TENANT, store, now: clock, ...extra });
}

/** Everything a reader can see of a connection's state. */
async function view(conn) {
  const listing = await conn.listSource();
  const sources = [];
  for (const s of listing) sources.push([s.bundle, s.path, (await conn.readSource(s.bundle, s.path))?.content]);
  return {
    manifest: await conn.manifest(),
    snapshot: await conn.snapshot(),
    listing,
    sources,
    history: await conn.history({ limit: 100 }),
  };
}

const writes = (docs) => ({ changes: docs.map(([bundle, path, content]) => ({ operation: 'write', bundle, path, content })) });

export const cases = [
  {
    name: 'reopening yields the last acknowledged revision, byte for byte',
    async run({ lib, make, reopen }) {
      const store = await make();
      const a = await connect(lib, store);
      await a.transact(writes([['ops', 'runbook.md', doc('Runbook')], ['sales', 'orders.md', doc('Orders', 'See [the runbook](../ops/runbook.md).')], ['sales', 'index.md', '# Sales\n']]));
      const w = await a.write('ops', 'alerts.md', doc('Alerts'));
      await a.write('ops', 'alerts.md', doc('Alerts', 'Changed.'), w.hash);
      const gone = await a.readSource('sales', 'index.md');
      await a.delete('sales', 'index.md', gone.hash);
      const before = await view(a);
      assert.equal(before.history.revisions.length, 4);
      await a.close();
      const b = await connect(lib, await reopen(store));
      assert.deepEqual(await view(b), before);
      await b.close();
    },
  },
  {
    name: 'an aborted multi-document commit is never observable, before or after a reopen',
    async run({ lib, make, reopen }) {
      const ctl = control();
      const store = await make({ failAt: ctl.failAt });
      const a = await connect(lib, store);
      await a.write('ops', 'base.md', doc('Base'));
      const before = await view(a);
      ctl.failNext('put', 3);
      const e = await assert.rejects(a.transact(writes([['ops', 'one.md', doc('One')], ['ops', 'two.md', doc('Two')], ['sales', 'three.md', doc('Three')]])), 'STORE');
      assert.equal(e.message, 'injected failure at put');
      assert.deepEqual(await view(a), before, 'the same connection after the abort');
      const b = await connect(lib, await reopen(store));
      assert.deepEqual(await view(b), before, 'a reopen after the abort');
      await a.close();
      await b.close();
    },
  },
  {
    name: 'a commit queued behind an aborted one is prepared against the unchanged head',
    async run({ lib, make }) {
      const ctl = control();
      const a = await connect(lib, await make({ failAt: ctl.failAt }));
      const base = await a.write('ops', 'base.md', doc('Base'));
      ctl.failNext('put', 2);
      const aborted = a.transact(writes([['ops', 'aborted-1.md', doc('A1')], ['ops', 'aborted-2.md', doc('A2')]]));
      const queued = a.write('ops', 'queued.md', doc('Queued'));
      await assert.rejects(aborted, 'STORE');
      const q = await queued;
      const page = await a.history();
      assert.equal(page.revisions[0].revision, q.revision);
      assert.equal(page.revisions[0].parent, base.revision, 'the queued commit builds on the head the aborted one left');
      const paths = (await a.listSource()).map((s) => s.path);
      assert.deepEqual(paths, ['base.md', 'queued.md']);
      await a.close();
    },
  },
  {
    name: 'an indeterminate commit is reported with its revision; the connection reloads the store',
    async run({ lib, make, reopen }) {
      const ctl = control();
      const store = await make({ failAt: ctl.failAt });
      const a = await connect(lib, store);
      const base = await a.write('ops', 'base.md', doc('Base'));
      // The head moved, but the outcome was lost.
      ctl.failNext('swap:after');
      const e = await assert.rejects(a.write('ops', 'landed.md', doc('Landed')), 'INDETERMINATE_COMMIT');
      assert.ok(/^[a-f0-9]{64}$/.test(e.revision), 'the error carries the revision');
      assert.equal(e.message, `commit outcome is indeterminate; inspect revision ${e.revision} before retrying`);
      assert.equal((await a.history()).revisions[0].revision, e.revision, 'it landed');
      assert.ok((await a.readSource('ops', 'landed.md')) !== null);
      // The outcome was lost and the head did not move.
      ctl.failNext('swap:lost');
      const lost = await assert.rejects(a.write('ops', 'lost.md', doc('Lost')), 'INDETERMINATE_COMMIT');
      assert.equal(await a.readSource('ops', 'lost.md'), null, 'it did not land');
      assert.ok((await a.history()).revisions[0].revision !== lost.revision);
      const b = await connect(lib, await reopen(store));
      assert.deepEqual(await view(b), await view(a), 'a reopen sees one whole revision');
      assert.equal((await b.history()).revisions[0].parent, base.revision);
      await a.close();
      await b.close();
    },
  },
  {
    name: 'reads during a commit see the last published revision',
    async run({ lib, make }) {
      const ctl = control();
      const a = await connect(lib, await make({ failAt: ctl.failAt }));
      await a.write('ops', 'base.md', doc('Base'));
      const before = await view(a);
      const gate = ctl.hold('put');
      const pending = a.write('ops', 'new.md', doc('New'));
      await gate.reached;
      assert.deepEqual(await view(a), before, 'while the commit waits for its store');
      assert.equal((await a.get(['new'])).size, 0);
      assert.equal((await a.callTool('manifest', {})).text, before.manifest);
      gate.release();
      const r = await pending;
      assert.equal(r.id, 'new');
      assert.equal((await a.get(['new'])).size, 1, 'published once acknowledged');
      await a.close();
    },
  },
  {
    name: 'a commit that lost its head swap to another connection is prepared once more',
    async run({ lib, make, reopen }) {
      const ctl = control();
      const store = await make({ failAt: ctl.failAt });
      const a = await connect(lib, store);
      await a.write('ops', 'base.md', doc('Base'));
      const b = await connect(lib, await reopen(store));
      const gate = ctl.hold('put');
      const slow = a.write('ops', 'slow.md', doc('Slow'));
      await gate.reached;
      await b.write('ops', 'fast.md', doc('Fast'));
      gate.release();
      await slow;
      const paths = (await a.listSource()).map((s) => s.path);
      assert.deepEqual(paths, ['base.md', 'fast.md', 'slow.md'], 'no update is lost');
      // With an expected revision nothing is retried: the caller hears of the change.
      const head = (await a.history()).revisions[0].revision;
      const gate2 = ctl.hold('put');
      const guarded = a.transact({ ...writes([['ops', 'guarded.md', doc('Guarded')]]), expectedRevision: head });
      await gate2.reached;
      await b.write('ops', 'other.md', doc('Other'));
      gate2.release();
      const e = await assert.rejects(guarded, 'CONFLICT');
      assert.equal(e.message, 'database changed: re-read the revision and document hashes');
      await a.close();
      await b.close();
    },
  },
  {
    name: 'a read-only connection refuses every change and never writes to the store',
    async run({ lib, make, reopen }) {
      const store = await make();
      const w = await connect(lib, store);
      const r0 = await w.write('ops', 'base.md', doc('Base'));
      await w.close();
      const ctl = control();
      const ro = await connect(lib, await reopen(store, { failAt: ctl.failAt }), { readOnly: true });
      const refusals = [
        ro.write('ops', 'x.md', doc('X')),
        ro.delete('ops', 'base.md', r0.hash),
        ro.deleteBundle('ops'),
        ro.transact(writes([['ops', 'x.md', doc('X')]])),
        ro.restore({ revision: r0.revision, expectedRevision: r0.revision }),
        ro.gc(),
        ro.repair({ revision: r0.revision, expectedHead: null }),
      ];
      for (const p of refusals) assert.equal((await assert.rejects(p, 'INVALID')).message, 'connection is read-only');
      const dry = await ro.gc({ dryRun: true });
      assert.equal(dry.dryRun, true);
      const t = await ro.callTool('write', { bundle: 'ops', path: 'x.md', content: doc('X') });
      assert.deepEqual(t, { text: 'connection is read-only', isError: true });
      assert.ok((await ro.verify()).ok);
      assert.ok(!ctl.points.some((p) => p === 'put' || p.startsWith('swap') || p === 'remove'), `store writes: ${ctl.points.join(' ')}`);
      await ro.close();
    },
  },
  {
    name: 'close waits for the commit in flight; every later call rejects',
    async run({ lib, make }) {
      const ctl = control();
      const a = await connect(lib, await make({ failAt: ctl.failAt }));
      const gate = ctl.hold('put');
      const pending = a.write('ops', 'last.md', doc('Last'));
      await gate.reached;
      let closed = false;
      const closing = a.close().then(() => (closed = true));
      await new Promise((r) => setTimeout(r, 20));
      assert.equal(closed, false, 'close waits for the commit');
      gate.release();
      assert.equal((await pending).id, 'last');
      await closing;
      for (const p of [a.manifest(), a.get(['last']), a.search('x'), a.write('ops', 'y.md', 'y'), a.history(), a.verify()]) {
        assert.equal((await assert.rejects(p, 'INVALID')).message, 'connection is closed');
      }
      assert.deepEqual(await a.callTool('manifest', {}), { text: 'connection is closed', isError: true });
    },
  },
  {
    name: 'tool calls answer as the MCP server does, undefined arguments left out',
    async run({ lib, make }) {
      const a = await connect(lib, await make());
      const w = await a.callTool('write', { bundle: 'ops', path: 'runbook.md', content: doc('Runbook'), replaces: undefined });
      assert.equal(w.isError, false, w.text);
      assert.ok(w.text.startsWith('wrote ops/runbook.md (hash '), w.text);
      assert.ok(w.text.endsWith(', 1 concepts\nid runbook'), w.text);
      const hash = (await a.readSource('ops', 'runbook.md')).hash;
      assert.deepEqual(await a.callTool('delete', { bundle: 'ops', path: 'runbook.md' }), {
        text: `deleting needs the hash of the version being removed\nretry with replaces: "${hash}"`,
        isError: true,
      });
      assert.deepEqual(await a.callTool('get', { ids: ['runbook'], limit: 0 }), { text: 'limit must be a positive integer', isError: true });
      assert.deepEqual(await a.callTool('nope', {}), { text: 'unknown tool "nope"', isError: true });
      const t = await a.callTool('transact', { changes: [{ operation: 'write', bundle: 'ops', path: 'runbook.md', content: 'x' }, { operation: 'write', bundle: 'ops', path: 'new.md', content: 'y' }] });
      assert.deepEqual(t, {
        text: `concept already exists: re-read the concept and retry with its new hash\nchanges[0]: ops/runbook.md\nretry with replaces: "${hash}"`,
        isError: true,
      });
      const dup = await a.callTool('transact', { changes: [{ operation: 'write', bundle: 'ops', path: 'a.md', content: 'x' }, { operation: 'write', bundle: 'OPS', path: 'A.md', content: 'y' }] });
      assert.deepEqual(dup, { text: 'transaction contains duplicate document targets\nchanges[1]: OPS/A.md', isError: true });
      const page = JSON.parse((await a.callTool('history', { limit: 1 })).text);
      assert.equal(page.revisions.length, 1);
      await a.close();
    },
  },
  {
    name: 'tool calls refuse lone surrogates by argument, and quote long values as the MCP server does',
    async run({ lib, make }) {
      const a = await connect(lib, await make());
      // Document content: the engine's refusal (docs/limits.md); any other argument, named.
      assert.deepEqual(await a.callTool('write', { bundle: 'ops', path: 's.md', content: 'x\ud83d' }), {
        text: 'source must contain well-formed Unicode',
        isError: true,
      });
      assert.deepEqual(await a.callTool('search', { query: '\ud83d' }), { text: 'query must contain well-formed Unicode', isError: true });
      assert.deepEqual(await a.callTool('get', { ids: ['a', '\udc00'] }), { text: 'ids[1] must contain well-formed Unicode', isError: true });
      const t = await a.callTool('transact', {
        changes: [
          { operation: 'write', bundle: 'ops', path: 'ok.md', content: 'x' },
          { operation: 'write', bundle: 'ops', path: 's.md', content: '\ud800' },
        ],
      });
      assert.deepEqual(t, { text: 'source must contain well-formed Unicode\nchanges[1]: ops/s.md', isError: true });
      const mega = 'a'.repeat(1 << 20);
      const cut = `${'a'.repeat(120)}…`;
      assert.deepEqual(await a.callTool('write', { bundle: 'ops', path: `${mega}.md`, content: 'x' }), {
        text: `invalid path "${cut}": longer than 200 characters`,
        isError: true,
      });
      assert.deepEqual(await a.callTool(mega, {}), { text: `unknown tool "${cut}"`, isError: true });
      assert.deepEqual(await a.callTool('write', { bundle: 'ops', path: 'a\u202eb.md', content: 'x' }), {
        text: 'invalid path "a\\u202eb.md": segment "a\\u202eb.md" holds U+202E, a bidirectional control that can make one path look like another',
        isError: true,
      });
      assert.equal((await a.listSource()).length, 0, 'nothing written');
      await a.close();
    },
  },
  {
    name: 'a writable connection keeps the head derived record; a cold open decodes it and answers the same',
    async run({ lib, make, reopen }) {
      const ctl = control();
      const store = await make({ failAt: ctl.failAt });
      const a = await connect(lib, store);
      await a.transact(writes([['ops', 'runbook.md', doc('Runbook', 'Replay the export.')], ['sales', 'orders.md', doc('Orders', 'See [the runbook](../ops/runbook.md).')]]));
      await a.write('ops', 'alerts.md', doc('Alerts'));
      const before = await view(a);
      const hits = await a.search('replay export');
      await a.close();
      const t = await (await reopen(store)).open(TENANT);
      const derived = (await t.keys()).filter((k) => k.key.kind === 'derived');
      assert.equal(derived.length, 1, 'written once for the run of commits, at close');
      // The files store hands its sources out as they are, so its records leave the texts
      // to it: opening reads them from the packs instead of from the record.
      const inPlace = t.sourcesInPlace === true;
      await t.close();
      const cold = control();
      const b = await connect(lib, await reopen(store, { failAt: cold.failAt }));
      assert.ok(cold.kinds.includes('derived'), `the open read ${cold.kinds.join(' ')}`);
      if (!inPlace) assert.ok(!cold.kinds.includes('source'), 'the open decoded the derived record instead of reading sources');
      assert.deepEqual(await view(b), before, 'decoded from the derived record');
      assert.equal(await b.search('replay export'), hits);
      await b.close();
    },
  },
  {
    name: 'get answers a Map, also for ids such as constructor and __proto__',
    async run({ lib, make }) {
      const a = await connect(lib, await make());
      await a.transact(writes([['ops', 'constructor.md', doc('Constructor')], ['ops', '__proto__.md', doc('Proto')], ['ops', 'plain.md', doc('Plain')]]));
      const m = await a.get(['__proto__', 'missing', 'constructor', '__proto__'], { find: 'Proto' });
      assert.ok(m instanceof Map);
      assert.deepEqual([...m.keys()], ['__proto__', 'constructor']);
      assert.deepEqual(m.get('__proto__').matches, [2]);
      assert.equal(m.get('constructor').matchCount, 0);
      assert.equal((await a.get(['plain'], { limit: 3.9, offset: -4 })).get('plain').text, '# P');
      await a.close();
    },
  },
  {
    name: 'manifestRows, searchRows and concept give the TSV rows and compiled fields as data',
    async run({ lib, make }) {
      const a = await connect(lib, await make());
      const long = 'Replay the export of every order line from the warehouse, one file per day, and check the totals against the ledger before anything is loaded.';
      await a.transact(writes([['ops', 'runbook.md', `---\ntype: runbook\ntitle: The runbook\ndescription: ${long}\n---\n# Runbook\n\nReplay the export.\n\n## Steps\n\nSee [[orders]].\n`], ['sales', 'orders.md', doc('Orders', 'Replay rows.')]]));
      const cells = (r) => [r.id, r.bundle, r.kind, r.status, r.grain, r.summary, r.links.length ? r.links.join(' ') : '-'].join('\t');
      const tsv = await a.manifest();
      const m = await a.manifestRows();
      assert.equal(m.tenant, 'acme');
      assert.deepEqual(m.bundles, ['ops', 'sales']);
      assert.deepEqual(m.rows.map(cells), tsv.split('\n').slice(3, -1));
      assert.deepEqual(m.rows.map((r) => [r.path, r.title]), [['runbook.md', 'The runbook'], ['orders.md', null]]);
      assert.deepEqual((await a.manifestRows('SALES')).rows.map((r) => r.id), ['orders']);
      await assert.rejects(a.manifestRows('nope'), 'NOT_FOUND', 'no bundle "nope" in this tenant: found ops, sales');
      const hitsTsv = await a.search('replay export');
      const s = await a.searchRows('replay export');
      const lines = hitsTsv.split('\n').filter((l) => l && !l.startsWith('#')).slice(1);
      assert.deepEqual(s.hits.map((h) => `${cells(h)}\t${h.pos ?? '-'}`), lines);
      assert.equal(s.query, 'replay export');
      assert.equal(s.bundle, null);
      assert.equal(s.direct + s.linked, s.hits.length);
      assert.ok(s.hits.some((h) => !h.linked && typeof h.pos === 'number'));
      const c = await a.concept('runbook');
      assert.equal(c.description, long);
      assert.ok(c.summary.length < long.length && long.startsWith(c.summary.replace(/…$/, '')), c.summary);
      assert.equal(c.title, 'The runbook');
      assert.equal(c.frontmatter, true);
      const src = (await a.readSource('ops', 'runbook.md')).content;
      assert.ok(src.slice(c.bodyStart).startsWith('# Runbook'));
      assert.deepEqual(c.sections.map((x) => x.name), ['runbook', 'steps']);
      assert.equal(await a.concept('nope'), null);
      await a.close();
    },
  },
  {
    name: 'importDocuments keeps every text exactly: multi-byte, surrogate pairs, a lone surrogate, a short text after a long one',
    async run({ lib, make, reopen }) {
      const store = await make();
      const a = await connect(lib, store);
      const long = doc('Long', 'Grüße, 東京, 🦀 and more. '.repeat(4000));
      const texts = [
        ['ops', 'a-long.md', long],
        // Shorter than the one before: nothing of the longer text may follow it.
        ['ops', 'b-short.md', doc('Short', 'é')],
        ['ops', 'c-pairs.md', doc('Pairs', '🦀🦀 𝄞')],
        ['ops', 'd-lone.md', doc('Lone', 'before \uD800 after')],
        ['ops', 'e-empty.md', ''],
      ];
      await a.importDocuments('/conformance', texts.map(([bundle, path, content]) => ({ bundle, path, content })));
      const hex = async (text) => {
        const d = new Uint8Array(await globalThis.crypto.subtle.digest('SHA-256', new TextEncoder().encode(text)));
        return Array.from(d, (b) => b.toString(16).padStart(2, '0')).join('');
      };
      for (const [bundle, path, content] of texts) {
        // A lone surrogate reads as U+FFFD, as every UTF-8 encoder writes it.
        const expected = content.replace('\uD800', '\uFFFD');
        const got = await a.readSource(bundle, path);
        assert.equal(got?.content, expected, `${path}'s text`);
        assert.equal(got?.hash, await hex(expected), `${path}'s source hash`);
      }
      const before = await view(a);
      await a.close();
      const b = await connect(lib, await reopen(store));
      assert.deepEqual(await view(b), before, 'a reopen reads the same');
      assert.ok((await b.verify()).ok, 'the imported tenant verifies');
      await b.close();
    },
  },
];

/**
 * Persistence across a reload (a page reload in the browser): `write(make)` commits through a
 * connection, then aborts two commits mid-way (a failed put, a swap that fails inside its
 * transaction) and returns what a reader saw; `check(make, expected)` reopens and compares.
 * `make(options?)` opens the store on the fixed data root.
 */
export const reload = {
  async write(lib, make) {
    const ctl = control();
    const a = await connect(lib, await make({ failAt: ctl.failAt }));
    await a.transact(writes([['ops', 'runbook.md', doc('Runbook')], ['sales', 'orders.md', doc('Orders')]]));
    await a.write('ops', 'alerts.md', doc('Alerts'));
    const expected = await view(a);
    ctl.failNext('put', 2);
    await assert.rejects(a.transact(writes([['ops', 'p.md', doc('P')], ['ops', 'q.md', doc('Q')]])), 'STORE');
    ctl.failNext('swap:mid');
    await assert.rejects(a.write('ops', 's.md', doc('S')), 'STORE');
    assert.deepEqual(await view(a), expected, 'after the aborted commits');
    await a.close();
    return expected;
  },
  async check(lib, make, expected) {
    const b = await connect(lib, await make());
    assert.deepEqual(await view(b), expected, 'after the reload');
    assert.ok((await b.verify()).ok, 'the reloaded tenant verifies');
    await b.close();
  },
};
