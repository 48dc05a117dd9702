// The engine worker: a dedicated Web Worker that loads the langonrock package (its wasm
// module), opens the connection on the IndexedDB store, and answers the page's requests
// (src/engine/client.ts) by method name. Opening, every read, every commit, imports and the
// derived record's encoding all run here, off the page's main thread. Each tab has its own
// worker; the store's BroadcastChannel tells the others when one moved the head.
//
// This module is the worker's entry and loads nothing heavy itself: it takes requests at
// once, and the first (`open`) starts reading the tenant from IndexedDB (src/engine/prefetch.ts)
// while the package's module is fetched and compiled (src/engine/session.ts, imported here
// without waiting). Requests wait for the package, then run in the order they came.

import { indexedDb } from 'langonrock/indexeddb';
import { prefetch, type Prefetch } from './prefetch.js';
import type { Reply, Request, WorkerEvent } from './types.js';

const scope = self as unknown as {
  postMessage(message: Reply | WorkerEvent): void;
  onmessage: ((e: MessageEvent<Request>) => void) | null;
};

/** A time on the page's clock (its `performance.timeOrigin`), so marks compare across threads. */
const stamp = () => performance.timeOrigin + performance.now();
const marks: Record<string, number> = { workerLoaded: stamp() };

const session = import('./session.js').then((s) => {
  marks.packageLoaded = stamp();
  return s;
});
session.catch(() => undefined);

let early: Prefetch | null = null;

scope.onmessage = (e: MessageEvent<Request>) => {
  const { method, args } = e.data;
  if (method === 'open' && early === null) {
    const [database, tenant, hint] = args as [string, string, unknown];
    try {
      early = prefetch(indexedDb({ name: database }), tenant, hint, (keys) => scope.postMessage({ event: 'remember', keys }));
    } catch {
      // A name the store refuses: the open below reports it.
    }
  }
  void session.then(
    (s) => s.handle(e.data, marks, early),
    (error) => scope.postMessage({ id: e.data.id, ok: false, error: { name: 'Error', message: `The notes engine failed to load: ${error instanceof Error ? error.message : String(error)}` } }),
  );
};
