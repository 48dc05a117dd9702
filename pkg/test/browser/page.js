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
};
window.harnessReady = true;
