// The page's side of the engine worker (src/engine/worker.ts): starts it, sends requests by
// method name and resolves their answers, turns failures back into errors with the package's
// fields (`code`, `reason`, …), and passes the worker's events on (`data` after any commit,
// here or in another tab; `progress` of an import).

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

export class Engine extends EventTarget {
  private readonly worker: Worker;
  private next = 1;
  private readonly pending = new Map<number, { resolve: (v: unknown) => void; reject: (e: unknown) => void }>();
  private readonly started: Promise<void>;
  /** Times from the worker (ms since the page's navigation start). */
  marks: Record<string, number> = {};

  constructor() {
    super();
    this.worker = new Worker(new URL('./worker.ts', import.meta.url), { type: 'module', name: 'langonrock engine' });
    let ready!: () => void;
    this.started = new Promise<void>((r) => (ready = r));
    this.worker.onmessage = (e: MessageEvent<Reply | WorkerEvent>) => {
      const m = e.data;
      if ('event' in m) {
        if (m.event === 'ready') {
          for (const [k, v] of Object.entries(m.marks)) this.marks[k] = v - performance.timeOrigin;
          ready();
          this.dispatchEvent(new CustomEvent('ready'));
        } else if (m.event === 'data') this.dispatchEvent(new CustomEvent<{ summary: Summary; cause: string }>('data', { detail: { summary: m.summary, cause: m.cause } }));
        else if (m.event === 'progress') this.dispatchEvent(new CustomEvent<{ job: number; progress: ImportProgress }>('progress', { detail: { job: m.job, progress: m.progress } }));
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
  }

  /** Calls one method of the worker's API. */
  async call<M extends Method>(method: M, ...args: Parameters<EngineApi[M]>): Promise<Answer<M>> {
    await this.started;
    const id = this.next++;
    return new Promise<Answer<M>>((resolve, reject) => {
      this.pending.set(id, { resolve: resolve as (v: unknown) => void, reject });
      this.worker.postMessage({ id, method, args });
    });
  }
}
