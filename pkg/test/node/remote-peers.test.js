// The package's remote connection against peers that misbehave (docs/remote.md): real
// sockets (a unix socket and a loopback port) answering fixed bytes. Every case ends with
// one clear STORE error within the connection's limits: no hang, no crash. And calls with
// bad arguments fail with the local connection's errors before anything is sent.

import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { open, memory } from 'langonrock';

const MANIFEST = '# tenant: t\n# bundles: \nid\tbundle\tkind\tstatus\tgrain\tsummary\tlinks\n';
const dirs = [];
after(async () => {
  for (const d of dirs) await rm(d, { recursive: true, force: true });
});

/**
 * A peer that answers the first request (the manifest `open` sends) properly and hands each
 * later request's head to `script(socket, head)`. Resolves `{dsn, heads, close}`.
 */
async function peer(kind, script) {
  const heads = [];
  const sockets = new Set();
  const server = net.createServer((s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
    let buf = '';
    s.on('error', () => undefined);
    s.on('data', (d) => {
      buf += d.toString('latin1');
      for (let end; (end = buf.indexOf('\r\n\r\n')) >= 0; ) {
        const head = buf.slice(0, end);
        const len = Number(/content-length: (\d+)/i.exec(head)?.[1] ?? 0);
        if (buf.length < end + 4 + len) return;
        buf = buf.slice(end + 4 + len);
        heads.push(head);
        if (head.startsWith('GET /v1/t/manifest ')) {
          s.write(`HTTP/1.1 200 OK\r\nETag: "m1"\r\nContent-Length: ${Buffer.byteLength(MANIFEST)}\r\n\r\n${MANIFEST}`);
        } else {
          script(s, head);
        }
      }
    });
  });
  let dsn;
  if (kind === 'unix') {
    const dir = await mkdtemp(join(tmpdir(), 'lr-peer-'));
    dirs.push(dir);
    const sock = join(dir, 'p.sock');
    await new Promise((r) => server.listen(sock, r));
    dsn = `okf+unix://${sock}?tenant=t&token=s3cret`;
  } else {
    await new Promise((r) => server.listen(0, '127.0.0.1', r));
    dsn = `okf+http://127.0.0.1:${server.address().port}?tenant=t&token=s3cret`;
  }
  return {
    dsn,
    heads,
    close: () =>
      new Promise((r) => {
        server.close(() => r());
        for (const s of sockets) s.destroy();
      }),
  };
}

const limits = { answerMs: 300, stallMs: 300, maxBody: 1024 };

async function storeError(p, pattern) {
  await assert.rejects(p, (e) => {
    assert.equal(e.code, 'STORE', e.message);
    assert.match(e.message, pattern);
    assert.doesNotMatch(e.message, /s3cret/);
    return true;
  });
}

for (const kind of ['unix', 'http']) {
  test(`${kind}: open sends the token and reads the manifest; 304 reuses it`, async () => {
    const p = await peer(kind, (s) => s.write('HTTP/1.1 304 Not Modified\r\nETag: "m1"\r\n\r\n'));
    const c = await open(p.dsn, { limits });
    assert.equal(c.tenant, 't');
    assert.equal(await c.manifest(), MANIFEST);
    assert.match(p.heads[0], /^GET \/v1\/t\/manifest HTTP\/1.1\r\n/);
    assert.match(p.heads[0], /\r\nauthorization: Bearer s3cret/i);
    assert.match(p.heads[1], /\r\nif-none-match: "m1"/i);
    await c.close();
    await assert.rejects(c.snapshot(), { code: 'INVALID', message: 'connection is closed' });
    await p.close();
  });

  test(`${kind}: garbage, a cut body, silence, a stall and an oversized answer`, async () => {
    const p = await peer(kind, (s, head) => {
      if (head.includes('/snapshot')) s.end('SSH-2.0-OpenSSH_9.2\r\n\r\n');
      else if (head.includes('/search')) s.end('HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nshort');
      else if (head.includes('/source ')) s.write('HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n[');
      else if (head.includes('/history')) s.write(`HTTP/1.1 200 OK\r\nContent-Length: 4096\r\n\r\n${'x'.repeat(4096)}`);
      // everything else: never answer
    });
    const c = await open(p.dsn, { limits });
    await storeError(c.snapshot(), / (sent an answer that is not HTTP|broke)/);
    await storeError(c.search('x'), /broke off mid-answer/);
    await storeError(c.get(['a']), /did not answer within 0.3 s$/);
    await storeError(c.listSource(), /stalled mid-answer for 0.3 s$/);
    await storeError(c.history(), /answered more than 1024 bytes$/);
    await storeError(
      c.write('b', 'x.md', 'hi'),
      /did not answer within 0.3 s$/,
    );
    await c.close();
    await p.close();
  });
}

test('a server error body comes back as the same error; other answers are named', async () => {
  const conflict = JSON.stringify({ code: 'CONFLICT', message: 'concept already exists: re-read the concept and retry with its new hash', reason: 'exists' });
  const p = await peer('http', (s, head) => {
    if (head.startsWith('PUT ')) s.write(`HTTP/1.1 412 Precondition Failed\r\nContent-Length: ${conflict.length}\r\n\r\n${conflict}`);
    else s.write('HTTP/1.1 502 Bad Gateway\r\nContent-Length: 11\r\n\r\nbad gateway');
  });
  const c = await open(p.dsn, { limits });
  await assert.rejects(c.write('b', 'x.md', 'hi'), (e) => {
    assert.equal(e.name, 'LangonrockError');
    assert.equal(e.code, 'CONFLICT');
    assert.equal(e.reason, 'exists');
    assert.equal(e.message, 'concept already exists: re-read the concept and retry with its new hash');
    return true;
  });
  assert.match(p.heads.at(-1), /^PUT \/v1\/t\/source\/b\/x\.md HTTP/);
  assert.match(p.heads.at(-1), /\r\nif-none-match: \*/i);
  await assert.rejects(c.snapshot(), { code: 'STORE', message: 'langonrock server returned 502: bad gateway' });
  await c.close();
  await p.close();
});

test('bad arguments fail as on a local connection, before anything is sent', async () => {
  const p = await peer('http', (s) => s.write('HTTP/1.1 500 Internal Server Error\r\nContent-Length: 0\r\n\r\n'));
  const remote = await open(p.dsn, { limits });
  const local = await open({ tenant: 't', store: memory() });
  const calls = [
    (c) => c.get('not-an-array'),
    (c) => c.search(42),
    (c) => c.write('b', 'x.md', 42),
    (c) => c.write('b', 'x.md', 'a\uD800b'),
    (c) => c.write('B/x', 'x.md', 'hi'),
    (c) => c.write('b', '../x.md', 'hi'),
    (c) => c.write('b', 'x.md', 'hi', 'nothex'),
    (c) => c.delete('b', 'x.md'),
    (c) => c.transact({ changes: [] }),
    (c) => c.transact({ changes: [{ operation: 'write', bundle: 'b', path: 'x.md', content: 'a' }, { operation: 'delete', bundle: 'b', path: 'x.md', replaces: 'a'.repeat(64) }] }),
    (c) => c.history({ limit: 0 }),
    (c) => c.restore({ revision: 'x' }),
  ];
  const before = p.heads.length;
  for (const call of calls) {
    const want = await call(local).then(() => null, (e) => ({ code: e.code, message: e.message }));
    assert.ok(want, `the local call fails: ${call}`);
    const got = await call(remote).then(() => null, (e) => ({ code: e.code, message: e.message }));
    assert.deepEqual(got, want, String(call));
  }
  assert.equal(p.heads.length, before, 'nothing was sent');
  for (const op of ['gc', 'verify', 'repair']) {
    await assert.rejects(remote[op]({}), { code: 'INVALID', message: `${op} is not available over a remote connection` });
  }
  const names = { importDocuments: 'import', documents: 'export' };
  for (const op of ['importDocuments', 'documents', 'manifestRows', 'searchRows', 'concept']) {
    const shown = names[op] ?? op;
    await assert.rejects(remote[op]({}), { code: 'INVALID', message: `${shown} is not available over a remote connection` });
  }
  // A remote connection has every method of a local one, so a host need not ask which.
  const methods = (o) => Object.getOwnPropertyNames(Object.getPrototypeOf(o)).filter((n) => n !== 'constructor').sort();
  assert.deepEqual(methods(local).filter((n) => !methods(remote).includes(n)), []);
  assert.equal(await remote.warm(), false);
  assert.equal(await remote.flushDerived(), undefined);
  assert.equal(p.heads.length, before, 'nothing was sent');
  await local.close();
  await remote.close();
  await p.close();
});

test('a read-only remote connection refuses writes without sending them', async () => {
  const p = await peer('unix', () => undefined);
  const c = await open(p.dsn, { readOnly: true, limits });
  await assert.rejects(c.write('b', 'x.md', 'hi'), { code: 'INVALID', message: 'connection is read-only' });
  await assert.rejects(c.deleteBundle('b'), { code: 'INVALID', message: 'connection is read-only' });
  assert.equal(p.heads.length, 1);
  await c.close();
  await p.close();
});

test('nothing listening, and DSNs that do not parse', async () => {
  await assert.rejects(open('okf+unix:///nonexistent/lr.sock?tenant=t'), {
    code: 'STORE',
    message: /^cannot reach the langonrock server at \/nonexistent\/lr.sock: /,
  });
  const s = net.createServer();
  await new Promise((r) => s.listen(0, '127.0.0.1', r));
  const port = s.address().port;
  await new Promise((r) => s.close(r));
  await assert.rejects(open(`okf+http://127.0.0.1:${port}?tenant=t`), {
    code: 'STORE',
    message: new RegExp(`^cannot reach the langonrock server at http://127.0.0.1:${port}: `),
  });
  await assert.rejects(open('okf+http://user@h?tenant=t'), { code: 'INVALID', message: 'invalid dsn "okf+http://user@h?tenant=t": expected okf+http://<host>[:<port>]?tenant=<name>&token=<token>' });
  await assert.rejects(open('okf+https://h?tenant=a/b'), { code: 'INVALID', message: 'invalid tenant id "a/b": expected 1-64 chars of [a-z0-9_-]' });
  await assert.rejects(open('okf+http://h', { limits: { answerMs: -1 } }), { code: 'INVALID', message: 'open: limits.answerMs must be a positive integer' });
});
