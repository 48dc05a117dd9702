// The page's side of the engine worker (src/engine/worker.ts): starts it, sends requests by
// method name and resolves their answers, turns failures back into errors with the package's
// fields (`code`, `reason`, …), and passes the worker's events on (`data` after any commit,
// here or in another tab; `progress` of an import; `remember`, the records worth reading early
// at the next open, kept in localStorage).

import type { EngineApi, Method, Reply, WireError, WorkerEvent, Summary, ImportProgress } from './types.js';

/** A failure from the worker, with the package's error fields. */
export class EngineError extends Error {
  code?: string;
  reason?: string;
  revision?: string;
  changes?: Array<{ index: number; reason: string }>;
  /** The browser's storage is full. */
  quota?: boolean;
  constructor(w: WireError) {
    super(w.message);
    this.name = w.name;
    Object.assign(this, { code: w.code, reason: w.reason, revision: w.revision, changes: w.changes, quota: w.quota });
  }
}

type Answer<M extends Method> = Awaited<ReturnType<EngineApi[M]>>;

/** Where the page keeps the records the tenant's last open read (src/engine/prefetch.ts). */
const hintKey = (database: string, tenant: string) => `langonrock-notes:open:${database}:${tenant}`;

export class Engine extends EventTarget {
  private readonly worker: Worker;
  private next = 1;
  private readonly pending = new Map<number, { resolve: (v: unknown) => void; reject: (e: unknown) => void }>();
  /** Times from the worker (ms since the page's navigation start). */
  marks: Record<string, number> = {};
  /** How many records the open's early reads were to fetch, and how many of its reads they answered. */
  early: { hinted: number; served: number } | null = null;

  /**
   * Starts the worker, and at once asks it to open `tenant` of the IndexedDB database
   * `database` (the answer is `opened`): the worker reads while its wasm module compiles.
   */
  constructor(readonly database: string, readonly tenant: string) {
    super();
    this.worker = new Worker(new URL('./worker.ts', import.meta.url), { type: 'module', name: 'langonrock engine' });
    this.worker.onmessage = (e: MessageEvent<Reply | WorkerEvent>) => {
      const m = e.data;
      if ('event' in m) {
        if (m.event === 'ready') {
          for (const [k, v] of Object.entries(m.marks)) this.marks[k] = v - performance.timeOrigin;
          if (m.early) this.early = m.early;
          this.dispatchEvent(new CustomEvent('ready'));
        } else if (m.event === 'data') this.dispatchEvent(new CustomEvent<{ summary: Summary; cause: string }>('data', { detail: { summary: m.summary, cause: m.cause } }));
        else if (m.event === 'progress') this.dispatchEvent(new CustomEvent<{ job: number; progress: ImportProgress }>('progress', { detail: { job: m.job, progress: m.progress } }));
        else if (m.event === 'remember') {
          try {
            localStorage.setItem(hintKey(database, tenant), JSON.stringify(m.keys));
          } catch {
            // Storage full or off: the next open reads in turn.
          }
        }
        return;
      }
      const p = this.pending.get(m.id);
      if (!p) return;
      this.pending.delete(m.id);
      if (m.ok) p.resolve(m.value);
      else p.reject(new EngineError(m.error));
    };
    this.worker.onerror = (e) => {
      const error = new EngineError({ name: 'Error', message: `The notes engine stopped: ${e.message || 'it failed to load'}` });
      for (const p of this.pending.values()) p.reject(error);
      this.pending.clear();
      this.dispatchEvent(new CustomEvent('failed', { detail: error }));
    };
    let hint: unknown = null;
    try {
      hint = JSON.parse(localStorage.getItem(hintKey(database, tenant)) ?? 'null');
    } catch {
      // Unreadable: read in turn.
    }
    this.opened = this.call('open', database, tenant, hint);
    this.opened.catch(() => undefined);
  }

  /** The answer to the open the constructor sent. */
  readonly opened: Promise<Summary>;

  /** Calls one method of the worker's API (a worker still loading queues the message). */
  call<M extends Method>(method: M, ...args: Parameters<EngineApi[M]>): Promise<Answer<M>> {
    const id = this.next++;
    return new Promise<Answer<M>>((resolve, reject) => {
      this.pending.set(id, { resolve: resolve as (v: unknown) => void, reject });
      this.worker.postMessage({ id, method, args });
    });
  }
}
