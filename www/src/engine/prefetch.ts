// The first reads of an open, started before the package's WebAssembly module is compiled.
// The engine decides what an open reads (the head, the revision record it names, then the
// derived record of that revision's snapshot), and it can ask only once its module runs. The
// worker remembers which revision and derived record this tenant's connection last read or
// wrote (the page keeps that between visits, src/engine/client.ts), and asks the store for
// the head and those two records at once, while the module compiles; the connection's first
// reads are answered from what came back.
//
// Nothing here knows a record's format. A record the engine does not ask for (the head moved
// since) is dropped unread, and the engine reads what it needs from the store as it would
// have. Records are keyed by their content (a derived record by its snapshot and compiler
// version, and checked against its digest when decoded), so bytes read a moment early are the
// bytes read now; the head read early is the head as it was when the open began.

import type { IndexedDbStore, IndexedDbTenantStore, StoreKey } from 'langonrock';

/** The kinds of record an open reads by key, the ones worth remembering. */
const REMEMBERED = ['revision', 'derived'];

const keyText = (k: StoreKey) => `${k.kind}/${k.digest}`;

function parseKey(text: unknown): StoreKey | null {
  if (typeof text !== 'string') return null;
  const at = text.indexOf('/');
  const kind = text.slice(0, at);
  const digest = text.slice(at + 1);
  return at > 0 && REMEMBERED.includes(kind) && /^[0-9a-f]{64}$/.test(digest) ? ({ kind, digest } as StoreKey) : null;
}

export interface Prefetch {
  /** The store to open the connection on: its first tenant answers from the early reads. */
  store: IndexedDbStore;
  /** The open is over: what was read early and not asked for is dropped. */
  opened(): void;
  /** How many records the hint named, and how many of the open's reads they answered. */
  readonly stats: { hinted: number; served: number };
}

/**
 * Starts reading `tenant`'s head and the records `hint` names from `store`, and returns the
 * store to open the connection on. `remember(keys)` is called with the keys worth reading
 * early next time, whenever they change (the revision and derived record the connection read
 * first, then the ones it wrote). A failed early read is forgotten: the engine's own read then
 * goes to the store and meets the failure there.
 */
export function prefetch(store: IndexedDbStore, tenant: string, hint: unknown, remember: (keys: string[]) => void): Prefetch {
  const keys = (Array.isArray(hint) ? hint : []).map(parseKey).filter((k): k is StoreKey => k !== null).slice(0, REMEMBERED.length);
  const hinted = new Set(keys.map(keyText));
  const early = store.open(tenant.toLowerCase()).then(async (t) => {
    const [head, records] = await Promise.all([t.readHead(), keys.length ? t.getMany(keys) : Promise.resolve([])]);
    const byKey = new Map<string, Uint8Array>();
    keys.forEach((k, i) => {
      const r = records[i];
      if (r) byKey.set(keyText(k), r);
    });
    return { head, byKey };
  });
  early.catch(() => undefined);
  let head: Promise<Uint8Array | null> | null = early.then((e) => e.head);
  let byKey: Promise<Map<string, Uint8Array>> | null = early.then((e) => e.byKey);
  let opening = true;
  let first = true;
  const stats = { hinted: keys.length, served: 0 };

  // The revision and derived record last read at open or written since, by kind.
  const latest = new Map<string, string>();
  const note = (written: readonly StoreKey[]) => {
    let changed = false;
    for (const k of written) {
      if (!REMEMBERED.includes(k.kind)) continue;
      const t = keyText(k);
      // At open, the first of each kind is the head's (an open from an ancestor's derived
      // record reads older revisions after it); later, the newest written.
      if (opening && latest.has(k.kind)) continue;
      if (latest.get(k.kind) !== t) {
        latest.set(k.kind, t);
        changed = true;
      }
    }
    if (changed) remember([...latest.values()]);
  };

  const wrap = (t: IndexedDbTenantStore): IndexedDbTenantStore => ({
    async readHead() {
      const h = head;
      head = null;
      if (h) {
        const early = await h.then(
          (v) => ({ v }),
          () => null,
        );
        if (early) return early.v;
      }
      return t.readHead();
    },
    async get(key) {
      return (await this.getMany([key]))[0];
    },
    async getMany(asked) {
      if (opening) note(asked);
      // Only a read of records asked for early waits for the early reads.
      if (byKey && asked.length > 0 && asked.every((k) => hinted.has(keyText(k)))) {
        const have = await byKey.catch(() => null);
        if (have && asked.every((k) => have.has(keyText(k)))) {
          const out = asked.map((k) => have.get(keyText(k))!);
          for (const k of asked) have.delete(keyText(k));
          stats.served += out.length;
          return out;
        }
      }
      return t.getMany(asked);
    },
    async put(key, bytes) {
      await t.put(key, bytes);
      note([key]);
    },
    async putMany(records) {
      await t.putMany!(records);
      note(records.map((r) => r.key));
    },
    swapHead: (expected, next) => t.swapHead(expected, next),
    keys: () => t.keys(),
    remove: (k, before) => t.remove(k, before),
    onHeadChange: (listener) => t.onHeadChange(listener),
    close: () => t.close(),
  });

  const wrapped: IndexedDbStore = {
    kind: store.kind,
    name: store.name,
    async open(name: string) {
      const t = await store.open(name);
      if (!first) return t;
      first = false;
      return wrap(t);
    },
    close: () => store.close(),
  };
  return {
    store: wrapped,
    stats,
    opened() {
      opening = false;
      head = null;
      byKey = null;
    },
  };
}
