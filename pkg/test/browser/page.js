// The browser side of the tests: loads the package's browser entry, and exposes
// `window.harness` to run the store conformance suite against a real IndexedDB.

import * as langonrock from '../../src/browser.js';
import { cases, reload } from '../store-conformance.js';
import { cases as engineCases, reload as engineReload } from '../engine-conformance.js';
import { runFileCase } from '../conformance-file.js';

let serial = 0;
const stores = [];
// Every case gets its own database, named for this page load and counter.
const run = `${Date.now()}-${Math.random().toString(16).slice(2)}`;

const ctx = {
  strict: false,
  async make(options = {}) {
    const s = langonrock.indexedDb({ name: `lr-test-${run}-${serial++}`, ...options });
    stores.push(s);
    return s;
  },
  async reopen(store, options = {}) {
    const s = langonrock.indexedDb({ name: store.name, ...options });
    stores.push(s);
    return s;
  },
};

function deleteDatabase(name) {
  return new Promise((resolve, reject) => {
    const req = indexedDB.deleteDatabase(name);
    req.onsuccess = () => resolve();
    req.onerror = () => reject(req.error);
    req.onblocked = () => resolve();
  });
}

async function closeAll() {
  while (stores.length) await stores.pop().close();
}

const outcome = async (f) => {
  try {
    return { ok: true, value: await f() };
  } catch (e) {
    return { ok: false, error: `${e?.name}: ${e?.message}\n${e?.stack ?? ''}` };
  } finally {
    await closeAll();
  }
};

const engineCtx = {
  lib: langonrock,
  async make(options = {}) {
    return ctx.make(options);
  },
  async reopen(store, options = {}) {
    return ctx.reopen(store, options);
  },
};

const fixed = (name) => async (options = {}) => {
  const s = langonrock.indexedDb({ name, ...options });
  stores.push(s);
  return s;
};

window.harness = {
  // One case of the conformance file (its JSON text, sent by the Node side of the test).
  runFileCase: (caseJson) => outcome(() => runFileCase(caseJson, ctx)),
  engineCaseNames: () => engineCases.map((c) => c.name),
  runEngineCase: (name) =>
    outcome(async () => {
      const c = engineCases.find((x) => x.name === name);
      if (!c) throw new Error(`no engine case ${name}`);
      await c.run(engineCtx);
    }),
  engineReloadWrite: (name) =>
    outcome(async () => {
      await deleteDatabase(name);
      return engineReload.write(langonrock, fixed(name));
    }),
  engineReloadCheck: (name, expected) => outcome(() => engineReload.check(langonrock, fixed(name), expected)),
  version: () => langonrock.version(),
  exports: () => Object.keys(langonrock).sort(),
  caseNames: () => cases.filter((c) => !c.strictOnly).map((c) => c.name),
  runCase: (name) =>
    outcome(async () => {
      const c = cases.find((x) => x.name === name);
      if (!c) throw new Error(`no case ${name}`);
      await c.run(ctx);
    }),
  // Persistence across a page reload, on the fixed database `name`.
  reloadWrite: (name) =>
    outcome(async () => {
      await deleteDatabase(name);
      return reload.write(async (options = {}) => {
        const s = langonrock.indexedDb({ name, ...options });
        stores.push(s);
        return s;
      });
    }),
  reloadCheck: (name, expected) =>
    outcome(async () => {
      await reload.check(async (options = {}) => {
        const s = langonrock.indexedDb({ name, ...options });
        stores.push(s);
        return s;
      }, expected);
    }),
  // Two connections to one tenant: a swap on one is announced to the other.
  headChangeNotice: (name) =>
    outcome(async () => {
      const sa = langonrock.indexedDb({ name });
      const sb = langonrock.indexedDb({ name });
      stores.push(sa, sb);
      const a = await sa.open('acme');
      const b = await sb.open('acme');
      const heard = new Promise((resolve, reject) => {
        const stop = b.onHeadChange(() => {
          stop();
          resolve('heard');
        });
        setTimeout(() => reject(new Error('no notice within 5 s')), 5000);
      });
      const head = new TextEncoder().encode('{"format":"opaque head"}');
      const swapped = await a.swapHead(null, head);
      return [swapped, await heard];
    }),
  // A remote connection through fetch to a `langonrock serve` of another origin: what a
  // page sees of each call, errors as `{code, message}`.
  remote: (dsn, readerDsn) =>
    outcome(async () => {
      const seen = async (p) => {
        try {
          const v = await p;
          return v instanceof Map ? { map: [...v] } : { value: v };
        } catch (e) {
          return { code: e.code, message: e.message, name: e.name };
        }
      };
      const out = {};
      out.unix = await seen(langonrock.open('okf+unix:///run/langonrock.sock?tenant=t'));
      out.embedded = await seen(langonrock.open('okf:///srv/data?tenant=t'));
      out.noToken = await seen(langonrock.open(readerDsn.replace(/token=[^&]+/, 'token=')));
      const c = await langonrock.open(dsn);
      out.snapshot = await seen(c.snapshot());
      out.get = await seen(c.get(['orders', 'nope']));
      out.write = await seen(c.write('inbox', 'page.md', '---\ntype: note\n---\nFrom a page.\n'));
      out.read = await seen(c.readSource('inbox', 'page.md'));
      out.again = await seen(c.callTool('write', { bundle: 'inbox', path: 'page.md', content: 'x' }));
      out.gc = await seen(c.gc());
      const r = await langonrock.open(readerDsn);
      out.readerWrite = await seen(r.write('inbox', 'page2.md', 'x'));
      await c.close();
      await r.close();
      return out;
    }),
};
window.harnessReady = true;
