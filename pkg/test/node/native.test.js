// The package next to the native binary: parity (the same corpus gives byte-identical
// manifest, search TSV and rendered get text), interchange (a files tenant written by one
// runtime opens and verifies in the other, both ways), the tool surface (tools() equals the
// native server's tools/list), and the package's own `langonrock mcp` over stdio.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { open, files, importFolder, exportFolder } from 'langonrock';
import { cli, mcpSession, toolText, requireNative, NATIVE, JS_BIN, SAMPLES } from '../native.js';

const TODAY = '2027-06-01';
const now = () => new Date(`${TODAY}T08:00:00.000Z`);
let root;
let nativeRoot;
const dsn = (data, tenant) => `okf://${data}?tenant=${tenant}`;

before(async () => {
  requireNative();
  root = await mkdtemp(join(tmpdir(), 'langonrock-native-'));
  nativeRoot = join(root, 'native');
  const r = await cli(['import', SAMPLES, '--data', nativeRoot, '--tenant', 'samples']);
  assert.equal(r.code, 0, r.stderr);
});
after(() => root && rm(root, { recursive: true, force: true }));

const QUERIES = [
  ['revenue recognition'],
  ['gross margin', ['--k', '3'], { k: 3 }],
  ['bitcoin inputs outputs', ['--no-expand'], { expand: false }],
  ['users', ['--bundle', 'stackoverflow', '--k', '20'], { bundle: 'stackoverflow', k: 20 }],
  ['a query matching nothing zzzz'],
];

const GETS = [
  { ids: ['revenue', 'no-such-concept', 'orders'] },
  { ids: ['transactions'], section: 'schema' },
  { ids: ['transactions'], find: 'block', limit: 300 },
  { ids: ['orders'], source: true, limit: 500, offset: 10 },
  { ids: ['gross-margin', 'revenue'], section: 'no_such_section' },
  { ids: ['stackoverflow'], limit: 1 },
];

// One folder rule (the core's folder plan) for both hosts: the same decision line, the same
// documents, the same refusals.
test('parity: ordinary folders import alike from Node and from the native binary', async () => {
  const base = join(root, 'folders');
  const make = async (name, filesOf) => {
    const dir = join(base, name);
    for (const [rel, text] of Object.entries(filesOf)) {
      await mkdir(dirname(join(dir, rel)), { recursive: true });
      await writeFile(join(dir, rel), text);
    }
    await mkdir(dir, { recursive: true });
    return dir;
  };
  const note = (type, body) => (type ? `---\ntype: ${type}\n---\n${body}\n` : `${body}\n`);
  const cases = [
    await make('flat notes', { 'a.md': note(null, '# A'), 'b.md': note('note', 'Links [[a]].') }),
    await make('kb', { 'index.md': '# KB\n', 'concepts/x.md': note('concept', 'See [y](/concepts/y.md).'), 'concepts/y.md': note('concept', 'Y.') }),
    await make('tenant', { 'README.md': '# About\n', 'sales/orders.md': note('table', 'Orders.'), 'ops/run.md': note('runbook', 'Run.') }),
    await make('empty', {}),
    await make('text only', { 'a.txt': 'x', 'b.csv': 'y' }),
  ];
  for (const [i, dir] of cases.entries()) {
    const nativeData = join(base, `native-${i}`);
    const n = await cli(['import', dir, '--data', nativeData, '--tenant', 't']);
    const conn = await open({ tenant: 't', store: files({ dataRoot: join(base, `js-${i}`) }), now });
    try {
      const r = await importFolder(conn, dir).catch((e) => e);
      if (r instanceof Error) {
        assert.equal(r.code, 'INVALID');
        assert.deepEqual([n.code, n.stderr], [1, `error: ${r.message}\n`], dir);
        assert.match(r.message, /^nothing to import in /);
        assert.equal((await conn.history()).revisions.length, 0, 'nothing committed');
      } else {
        assert.equal(n.code, 0, n.stderr);
        assert.ok(n.stderr.startsWith(`${r.line}\n`), `${dir}: ${n.stderr}`);
        const snap = await cli(['snapshot', '--data', nativeData, '--tenant', 't']);
        assert.equal(r.snapshot, snap.stdout.trim(), dir);
        assert.equal(r.diagnostics.filter((d) => d.message.startsWith('unresolved')).length, 0, dir);
      }
    } finally {
      await conn.close();
    }
  }
  const one = await open({ tenant: 't', store: files({ dataRoot: join(base, 'js-0') }), now });
  try {
    // A flat folder is one bundle named after it; a plain note is one info diagnostic.
    assert.deepEqual((await one.listSource()).map((e) => `${e.bundle}/${e.path}`), ['flat-notes/a.md', 'flat-notes/b.md']);
  } finally {
    await one.close();
  }
});

// The folder read is the package's (one buffer of every file, checked as UTF-8 in the
// module); its refusals are the native binary's, word for word, and commit nothing.
test('parity: a folder with files that are not UTF-8 is refused alike, naming the first in the plan', async () => {
  const dir = join(root, 'bad-utf8');
  await mkdir(join(dir, 'zeta'), { recursive: true });
  await mkdir(join(dir, 'alpha'), { recursive: true });
  await writeFile(join(dir, 'alpha', 'a.md'), '# A\n');
  await writeFile(join(dir, 'alpha', 'b.md'), Buffer.from([0x23, 0x20, 0xc3, 0x28, 0x0a]));
  await writeFile(join(dir, 'zeta', 'c.md'), Buffer.from([0xff, 0xfe, 0x0a]));
  const n = await cli(['import', dir, '--data', join(root, 'bad-utf8-native'), '--tenant', 't']);
  const conn = await open({ tenant: 't', store: files({ dataRoot: join(root, 'bad-utf8-js') }), now });
  try {
    const e = await importFolder(conn, dir).catch((x) => x);
    assert.equal(e.code, 'INVALID');
    assert.equal(e.message, 'alpha/b.md: source must contain valid UTF-8');
    assert.deepEqual([n.code, n.stderr], [1, `error: ${e.message}\n`]);
    assert.equal((await conn.history()).revisions.length, 0, 'nothing committed');
    // The same when the documents after it are more than the read buffer holds, so that it is
    // handed to the module while a later file is being read.
    await writeFile(join(dir, 'alpha', 'big.md'), `# Big\n${'many words of text\n'.repeat(300_000)}`);
    const nb = await cli(['import', dir, '--data', join(root, 'bad-utf8-native'), '--tenant', 't']);
    const eb = await importFolder(conn, dir).catch((x) => x);
    assert.deepEqual([eb.code, eb.message], ['INVALID', 'alpha/b.md: source must contain valid UTF-8']);
    assert.deepEqual([nb.code, nb.stderr], [1, `error: ${eb.message}\n`]);
    await rm(join(dir, 'alpha', 'big.md'));
    // Fixed, the same folder imports; a file changed while the import runs (here, once the
    // documents are read: the connection asks for the time before it commits) fails it.
    await writeFile(join(dir, 'alpha', 'b.md'), '# B\n');
    await writeFile(join(dir, 'zeta', 'c.md'), '# C\n');
    let touch = false;
    const racing = await open({
      tenant: 'race',
      store: files({ dataRoot: join(root, 'bad-utf8-js') }),
      now: () => {
        if (touch) {
          touch = false;
          writeFileSync(join(dir, 'zeta', 'c.md'), '# C, changed meanwhile\n');
        }
        return now();
      },
    });
    try {
      touch = true;
      const raced = await importFolder(racing, dir).catch((x) => x);
      assert.equal(raced.message, `folder changed during import: ${join(dir, 'zeta', 'c.md')}; scan it again`);
      assert.equal((await racing.history()).revisions.length, 0, 'nothing committed');
      const ok = await importFolder(racing, dir);
      assert.equal(ok.committed, true);
      assert.equal(ok.concepts, 3);
    } finally {
      await racing.close();
    }
  } finally {
    await conn.close();
  }
});

test('parity: the package and the native binary give byte-identical manifest, search TSV and get text', async () => {
  const conn = await open({ tenant: 'samples', store: files({ dataRoot: nativeRoot }), readOnly: true, now });
  try {
    const m = await cli(['manifest', '--data', nativeRoot, '--tenant', 'samples'], { today: TODAY });
    assert.equal(m.code, 0, m.stderr);
    assert.equal(await conn.manifest(), m.stdout);
    assert.match(m.stdout, /\tdeprecated\t/);
    const b = await cli(['manifest', '--bundle', 'ACME_retail', '--data', nativeRoot, '--tenant', 'samples'], { today: TODAY });
    assert.equal(await conn.manifest('ACME_retail'), b.stdout);
    for (const [q, flags = [], opts = {}] of QUERIES) {
      const s = await cli(['search', ...q.split(' '), ...flags, '--data', nativeRoot, '--tenant', 'samples'], { today: TODAY });
      assert.equal(s.code, 0, s.stderr);
      assert.equal(await conn.search(q, opts), s.stdout, `search ${q}`);
    }
    const snap = await cli(['snapshot', '--data', nativeRoot, '--tenant', 'samples']);
    assert.equal((await conn.snapshot()).snapshot, snap.stdout.trim());
    // Rendered get text, and the other read tools, through the native MCP server.
    const calls = [
      ...GETS.map((a) => ['get', a]),
      ...QUERIES.map(([q, , o = {}]) => ['search', { query: q, ...(o.k ? { k: o.k } : {}), ...(o.bundle ? { bundle: o.bundle } : {}) }]),
      ['manifest', {}],
      ['manifest', { bundle: 'ga4' }],
      ['snapshot', {}],
      ['get', { ids: ['x'], limit: 0 }],
      ['search', { query: '' }],
    ];
    const session = await mcpSession([NATIVE, 'mcp', dsn(nativeRoot, 'samples'), '--read-only'], calls.map(([name, args]) => ({ method: 'tools/call', params: { name, arguments: args } })), { today: TODAY });
    for (const [i, [name, args]] of calls.entries()) {
      const native = toolText(session.byId.get(i + 1));
      assert.deepEqual(await conn.callTool(name, args), native, `${name} ${JSON.stringify(args)}`);
    }
    assert.ok(toolText(session.byId.get(1)).text.includes('@@ not found\nno-such-concept'));
  } finally {
    await conn.close();
  }
});

test('parity: importing the samples folder from Node gives the native snapshot and manifest', async () => {
  const dataRoot = join(root, 'js-import');
  const conn = await open({ tenant: 'samples', store: files({ dataRoot }), now });
  try {
    const r = await importFolder(conn, SAMPLES);
    assert.equal(r.committed, true);
    // The same decision line the native import prints.
    assert.equal(r.line, `reading ${SAMPLES} as 4 bundles, one per subfolder; left out at its root: LICENSE.md`);
    const native = await cli(['snapshot', '--data', nativeRoot, '--tenant', 'samples']);
    assert.equal(r.snapshot, native.stdout.trim());
    const m = await cli(['manifest', '--data', dataRoot, '--tenant', 'samples'], { today: TODAY });
    assert.equal(m.stdout, await conn.manifest());
    // The same location key as the native import: the native binary sees no change.
    const again = await cli(['import', SAMPLES, '--data', dataRoot, '--tenant', 'samples']);
    assert.equal(again.code, 0, again.stderr);
    assert.match(again.stderr, /\(reused\)/);
    assert.ok(again.stderr.startsWith(`${r.line}\n`), again.stderr);
    assert.equal((await conn.history()).revisions.length, 1, 'no new revision');
    const out = join(root, 'exported');
    assert.equal((await exportFolder(conn, out)).files, (await conn.listSource()).length);
    await assert.rejects(exportFolder(conn, out), { code: 'INVALID', message: `export destination already exists: ${out}` });
    const reimport = await open({ tenant: 'copy', store: files({ dataRoot }), now });
    assert.equal((await importFolder(reimport, out)).snapshot, r.snapshot, 'an export imports to the same snapshot');
    await reimport.close();
  } finally {
    await conn.close();
  }
});

test('interchange: a tenant written by the Node files store opens and verifies in the native binary', async () => {
  const dataRoot = join(root, 'from-node');
  const conn = await open({ tenant: 'Notes', store: files({ dataRoot }), now });
  try {
    await conn.transact({
      changes: [
        { operation: 'write', bundle: 'ops', path: 'runbook.md', content: '---\ntype: runbook\n---\n# Runbook\n\nReplay the export.\n' },
        { operation: 'write', bundle: 'ops', path: 'index.md', content: '# Ops\n' },
        { operation: 'write', bundle: 'sales', path: 'orders.md', content: '\uFEFF---\r\ntype: table\r\n---\r\nOrders, see [runbook](../ops/runbook.md).\r\n' },
      ],
    });
    const w = await conn.write('sales', 'refunds.md', '---\ntype: table\n---\nRefunds.\n');
    await conn.delete('sales', 'refunds.md', w.hash);
    const v = await cli(['verify', '--data', dataRoot, '--tenant', 'notes']);
    assert.equal(v.code, 0, v.stderr + v.stdout);
    const result = JSON.parse(v.stdout);
    assert.equal(result.ok, true);
    assert.deepEqual(result, await conn.verify());
    const m = await cli(['manifest', '--data', dataRoot, '--tenant', 'notes'], { today: TODAY });
    assert.equal(m.stdout, await conn.manifest());
    const src = await cli(['read', 'sales', 'orders.md', '--data', dataRoot, '--tenant', 'notes']);
    assert.equal(src.stdout, (await conn.readSource('sales', 'orders.md')).content);
    const h = await cli(['history', '--data', dataRoot, '--tenant', 'notes']);
    assert.deepEqual(JSON.parse(h.stdout), await conn.history());
  } finally {
    await conn.close();
  }
});

test('interchange: a tenant written by the native binary opens and verifies in the package, which commits on top', async () => {
  const dataRoot = join(root, 'from-native');
  const file = join(root, 'doc.md');
  await writeFile(file, '---\ntype: note\n---\n# Native\n\nWritten by the binary.\n');
  const w = await cli(['write', 'inbox', 'native.md', '--create', '--from', file, '--data', dataRoot, '--tenant', 'mixed']);
  assert.equal(w.code, 0, w.stderr);
  const imp = await cli(['import', join(SAMPLES, 'ga4'), '--bundle', 'ga4', '--data', dataRoot, '--tenant', 'mixed']);
  assert.equal(imp.code, 0, imp.stderr);
  const conn = await open({ tenant: 'mixed', store: files({ dataRoot }), now });
  try {
    assert.equal((await conn.verify()).ok, true);
    const m = await cli(['manifest', '--data', dataRoot, '--tenant', 'mixed'], { today: TODAY });
    assert.equal(await conn.manifest(), m.stdout);
    // The baseline the native import left is honoured: the same folder and key change nothing.
    const again = await importFolder(conn, join(SAMPLES, 'ga4'), { bundle: 'ga4' });
    assert.equal(again.committed, false);
    const src = await conn.readSource('inbox', 'native.md');
    await conn.write('inbox', 'native.md', src.content.replace('binary', 'binary, then Node'), src.hash);
    const v = await cli(['verify', '--data', dataRoot, '--tenant', 'mixed']);
    assert.equal(JSON.parse(v.stdout).ok, true, v.stdout);
    assert.equal(JSON.parse(v.stdout).verifiedRevisions.length, 3);
    const read = await cli(['read', 'inbox', 'native.md', '--data', dataRoot, '--tenant', 'mixed']);
    assert.match(read.stdout, /then Node/);
  } finally {
    await conn.close();
  }
});

test('tools: tools() equals the native server tools/list in every mode, and the resource too', async () => {
  const conn = await open({ tenant: 'samples', store: files({ dataRoot: nativeRoot }), readOnly: true, now });
  try {
    for (const databaseTools of [false, true]) {
      for (const readOnly of [false, true]) {
        const flags = [...(databaseTools ? ['--database-tools'] : []), ...(readOnly ? ['--read-only'] : [])];
        const session = await mcpSession([NATIVE, 'mcp', dsn(nativeRoot, 'samples'), ...flags], [{ method: 'tools/list' }, { method: 'resources/list' }], { today: TODAY });
        const native = session.byId.get(1).result.tools;
        assert.deepEqual(conn.tools({ databaseTools, readOnly }), native, flags.join(' '));
        assert.ok(native[0].description.endsWith('reading it whole is cheaper than searching.') || native[0].description.includes('prefer "search"'));
        const js = await mcpSession([process.execPath, JS_BIN, 'mcp', dsn(nativeRoot, 'samples'), ...flags], [{ method: 'tools/list' }, { method: 'resources/list' }], { today: TODAY });
        assert.deepEqual(js.byId.get(1).result.tools, native, `the package's bin: ${flags.join(' ')}`);
        assert.deepEqual(js.byId.get(2).result, session.byId.get(2).result, 'resources/list');
        assert.equal(js.byId.get(0).result.serverInfo.name, 'langonrock');
      }
    }
  } finally {
    await conn.close();
  }
});

test("the package's langonrock mcp serves a files tenant over stdio, as the native server does", async () => {
  const dataRoot = join(root, 'js-mcp');
  const content = '---\ntype: note\n---\n# Idea\n\nA thought.\n';
  const requests = [
    { method: 'tools/call', params: { name: 'write', arguments: { bundle: 'inbox', path: 'idea.md', content } } },
    { method: 'tools/call', params: { name: 'write', arguments: { bundle: 'inbox', path: 'idea.md', content } } },
    { method: 'tools/call', params: { name: 'get', arguments: { ids: ['idea'], source: true } } },
    { method: 'tools/call', params: { name: 'transact', arguments: { changes: [] } } },
    { method: 'resources/read', params: { uri: 'okf://manifest' } },
  ];
  const js = await mcpSession([process.execPath, JS_BIN, 'mcp', dsn(dataRoot, 'acme')], requests.slice(0, 1), { today: TODAY });
  assert.equal(js.code, 0, js.stderr);
  assert.equal(js.stderr, `langonrock mcp serving ${dsn(dataRoot, 'acme')} over stdio\ntenant "acme" has no revisions in ${dataRoot}; the first write creates it\n`);
  const wrote = toolText(js.byId.get(1));
  assert.equal(wrote.isError, false, wrote.text);
  assert.match(wrote.text, /^wrote inbox\/idea\.md \(hash [a-f0-9]{64}\), snapshot [a-f0-9]{64}, 1 concepts\nid idea$/);
  // The rest against both servers on copies of the same state: the same texts.
  const native = await mcpSession([NATIVE, 'mcp', dsn(dataRoot, 'acme')], requests.slice(1), { today: TODAY });
  const again = await mcpSession([process.execPath, JS_BIN, 'mcp', dsn(dataRoot, 'acme')], requests.slice(1), { today: TODAY });
  for (let i = 1; i <= 2; i++) assert.deepEqual(toolText(again.byId.get(i)), toolText(native.byId.get(i)));
  assert.match(toolText(native.byId.get(1)).text, /^concept already exists: re-read the concept and retry with its new hash\nretry with replaces: "[a-f0-9]{64}"$/);
  assert.deepEqual(again.byId.get(3).result, { content: [{ type: 'text', text: 'unknown tool "transact"' }], isError: true });
  assert.equal(again.byId.get(4).result.contents[0].text, native.byId.get(4).result.contents[0].text);
  const bad = await mcpSession([process.execPath, JS_BIN, 'mcp', 'okf://host/x?tenant=a'], []);
  assert.deepEqual([bad.code, bad.stderr], [1, 'error: invalid dsn "okf://host/x?tenant=a": expected okf:///absolute/path?tenant=<name>\n']);
});

test('okf://~/… is under the home directory, in the package\'s bin as in the native binary', async () => {
  const home = join(root, 'home');
  const write = { method: 'tools/call', params: { name: 'write', arguments: { bundle: 'inbox', path: 'a.md', content: '# A\n' } } };
  const get = { method: 'tools/call', params: { name: 'get', arguments: { ids: ['a'] } } };
  const js = await mcpSession([process.execPath, JS_BIN, 'mcp', 'okf://~/kb?tenant=acme'], [write], { env: { HOME: home } });
  assert.equal(js.code, 0, js.stderr);
  assert.equal(toolText(js.byId.get(1)).isError, false);
  const native = await mcpSession([NATIVE, 'mcp', 'okf://~/kb?tenant=acme'], [get], { env: { HOME: home } });
  assert.equal(native.code, 0, native.stderr);
  assert.match(toolText(native.byId.get(1)).text, /^@@ a\n/);
  const listed = await cli(['source', '--data', join(home, 'kb'), '--tenant', 'acme']);
  assert.match(listed.stdout, /\tinbox\/a\.md\ta\n$/);
});

test('a corrupt files tenant opens failing closed; verify reports it as the native binary does, and repair recovers it', async () => {
  const dataRoot = join(root, 'corrupt');
  const conn = await open({ tenant: 'acme', store: files({ dataRoot }), now });
  const first = await conn.write('ops', 'a.md', '---\ntype: note\n---\nKept.\n');
  const second = await conn.write('ops', 'b.md', '---\ntype: note\n---\nLost.\n');
  const before = await conn.manifest();
  await conn.close();
  // The pack of the head revision's commit: opening needs that revision record, whatever
  // derived record there is.
  const packs = join(dataRoot, 'tenants', 'acme', 'packs');
  const digest = Buffer.from(second.revision, 'hex');
  for (const name of await readdir(packs)) {
    if ((await readFile(join(packs, name))).includes(digest)) await rm(join(packs, name));
  }
  const broken = await open({ tenant: 'acme', store: files({ dataRoot }), now });
  try {
    const e = await broken.manifest().catch((x) => x);
    assert.equal(e.code, 'CORRUPT');
    assert.match(e.message, /^database corruption: /);
    assert.equal((await broken.callTool('manifest', {})).text, e.message);
    const v = await broken.verify();
    assert.equal(v.ok, false);
    const native = await cli(['verify', '--data', dataRoot, '--tenant', 'acme']);
    assert.equal(native.code, 1);
    assert.deepEqual(JSON.parse(native.stdout), v);
    const r = await broken.repair({ revision: first.revision, expectedHead: v.head });
    assert.equal(r.revision, first.revision);
    const after = await broken.manifest();
    assert.notEqual(after, before);
    assert.match(after, /^a\tops\t/m);
    assert.equal((await cli(['verify', '--data', dataRoot, '--tenant', 'acme'])).code, 0);
  } finally {
    await broken.close();
  }
});
