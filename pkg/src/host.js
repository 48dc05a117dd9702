// Host-side steps of the commit lifecycle that need no engine (engine.md §8.3, §8.5): storing
// a prepared commit, and running commits one at a time. The connection (src/index.js) drives
// the engine's step machines with these once the engine is wired in.

import { handOver } from './internal.js';

/**
 * Stores a prepared commit (engine.md §8.3): puts every record in order, then, only if all
 * puts succeeded, swaps the head from `expected` to `head`. Never throws: the outcome is
 * `committed`, `conflict`, `indeterminate`, or `failed` with the store's error (a failed put
 * or a swap that certainly left the head as it was).
 *
 * @param {import('./index.js').TenantStore} store
 * @param {{expected: Uint8Array | null, head: Uint8Array, records: Array<{key: {kind: string, digest: string}, bytes: Uint8Array}>}} prepared
 * @returns {Promise<{outcome: 'committed' | 'conflict' | 'indeterminate'} | {outcome: 'failed', error: Error}>}
 */
export async function storeCommit(store, prepared) {
  if (typeof store.putMany === 'function') {
    // A store that batches puts (IndexedDB: one transaction) takes them all at once.
    try {
      await store.putMany(prepared.records);
    } catch (error) {
      return { outcome: 'failed', error };
    }
  } else {
    // The records are fresh arrays from the module: a store that can keep them as they are
    // (`handOver`, the memory store) is spared a copy of every one.
    const owned = typeof store[handOver] === 'function';
    for (const { key, bytes } of prepared.records) {
      try {
        await (owned ? store[handOver](key, bytes) : store.put(key, bytes));
      } catch (error) {
        return { outcome: 'failed', error };
      }
    }
  }
  let swap;
  try {
    swap = await store.swapHead(prepared.expected, prepared.head);
  } catch (error) {
    return { outcome: 'failed', error };
  }
  return { outcome: swap === 'swapped' ? 'committed' : swap };
}

/**
 * A queue that runs async tasks one at a time, in call order (engine.md §8.5: at most one
 * commit in flight; later ones are prepared only after the previous outcome is known). A
 * task's failure reaches its own caller only; the queue goes on.
 */
export function serial() {
  let tail = Promise.resolve();
  return function run(task) {
    const result = tail.then(() => task());
    tail = result.then(
      () => undefined,
      () => undefined,
    );
    return result;
  };
}

/** A store error as the engine's `StoreError` sees it: `corrupt` for CORRUPT, else `failed`. */
export function storeFailure(error) {
  return { kind: error?.code === 'CORRUPT' ? 'corrupt' : 'failed', message: String(error?.message ?? error) };
}

/**
 * Serves one step of an engine operation against a store (engine.md §8.8), as the engine's
 * `serve` does for Rust hosts. `need` is one of
 *   {need: 'head'}                      → {head: Uint8Array | null}
 *   {need: 'records', keys}             → {records: Array<Uint8Array | null>}
 *   {need: 'commit', expected, head, records, revision}
 *                                       → {outcome: 'committed' | 'conflict' | 'indeterminate' | {failed}}
 *   {need: 'keys'}                      → {keys: KeyInfo[]}
 *   {need: 'remove', keys, before}      → {removed: StoreKey[]}
 * and a failed read answers {failed: {kind, message}}. It never rejects for a store failure.
 */
export async function serveNeed(store, need) {
  try {
    switch (need?.need) {
      case 'head':
        return { head: await store.readHead() };
      case 'records':
        return { records: await store.getMany(need.keys) };
      case 'commit': {
        const r = await storeCommit(store, need);
        return { outcome: r.outcome === 'failed' ? { failed: storeFailure(r.error) } : r.outcome };
      }
      case 'keys':
        return { keys: await store.keys() };
      case 'remove':
        return { removed: await store.remove(need.keys, need.before) };
    }
  } catch (error) {
    return { failed: storeFailure(error) };
  }
  throw new TypeError(`unknown store step ${JSON.stringify(need?.need)}`);
}
