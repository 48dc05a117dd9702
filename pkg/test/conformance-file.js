// The store conformance file (tests/data/conformance.json) on a JS store: the core plays each
// case (WasmConformance, core/src/conformance.rs) and this runner performs its store calls on
// the store under test, with failures injected through the store's `failAt` hook. The same
// file runs on the Rust stores (tests/it/conformance.rs). Runs in Node and in a browser page.
//
// A runner gives `runFileCase` a context:
//   make(options?)          a store on a fresh, empty data root
//   reopen(store, options?) another store object on the same data root
// `options` are the store's own: {failAt}.

import { WasmConformance, conformanceCases } from '../gen/langonrock_wasm.js';
import { serveNeed, storeCommit, storeFailure } from '../src/host.js';

const TENANT = 'conf';

/** The cases of the file's text, `[{name, case}]`, for a store that is `strict` or not. */
export function fileCases(text, strict) {
  return conformanceCases(text, strict);
}

/** Plays one case (`caseJson`, as `fileCases` gives it) on stores of `ctx`. */
export async function runFileCase(caseJson, ctx) {
  // Faults armed per store handle: point → [countdown].
  const faults = [];
  const failAt = (handle) => (point) => {
    const armed = faults[handle]?.get(point);
    if (!armed?.length) return false;
    armed[0] -= 1;
    if (armed[0] > 0) return false;
    armed.shift();
    return true;
  };
  const first = await ctx.make({ failAt: failAt(0) });
  const handles = [await first.open(TENANT)];
  faults.push(new Map());
  const runner = new WasmConformance(caseJson, TENANT);
  try {
    let step = runner.resume(undefined);
    while (!step.done) {
      const t = handles[step.store];
      let reply;
      switch (step.call) {
        case 'reopen': {
          faults.push(new Map());
          const s = await ctx.reopen(first, { failAt: failAt(handles.length) });
          handles.push(await s.open(TENANT));
          reply = {};
          break;
        }
        case 'fault': {
          const m = faults[step.store];
          if (!m.has(step.point)) m.set(step.point, []);
          m.get(step.point).push(step.nth);
          reply = {};
          break;
        }
        case 'pause':
          await new Promise((r) => setTimeout(r, step.ms));
          reply = {};
          break;
        case 'put':
          try {
            await t.put(step.key, step.bytes);
            reply = {};
          } catch (error) {
            reply = { failed: storeFailure(error) };
          }
          break;
        case 'swap':
          try {
            reply = { swap: await t.swapHead(step.expected, step.head) };
          } catch (error) {
            reply = { failed: storeFailure(error) };
          }
          break;
        case 'commit': {
          const r = await storeCommit(t, step);
          reply = { outcome: r.outcome === 'failed' ? { failed: storeFailure(r.error) } : r.outcome };
          break;
        }
        default:
          reply = await serveNeed(t, step);
      }
      step = runner.resume(reply);
    }
  } finally {
    runner.free();
  }
}
