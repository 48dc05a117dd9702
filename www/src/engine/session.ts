// The engine worker's session (loaded by src/engine/worker.ts): the langonrock package and
// its wasm module, the connection on the IndexedDB store, and the answers to the page's
// requests by method name. Each tab has its own worker; the store's BroadcastChannel tells
// the others when one moved the head.

import { open, indexedDb } from 'langonrock';
import { Notes } from './notes.js';
import { Importer } from './importer.js';
import type { Prefetch } from './prefetch.js';
import type { Request, Reply, WireError, WorkerEvent, Summary } from './types.js';

const scope = self as unknown as {
  postMessage(message: Reply | WorkerEvent, transfer?: Transferable[]): void;
};

/** A time on the page's clock (its `performance.timeOrigin`), so marks compare across threads. */
const stamp = () => performance.timeOrigin + performance.now();
let marks: Record<string, number> = {};

let notes: Notes | null = null;
let importer: Importer | null = null;
let opening: Promise<Summary> | null = null;

function emit(event: WorkerEvent): void {
  scope.postMessage(event);
}

async function openNotes(database: string, tenant: string, early: Prefetch | null): Promise<Summary> {
  // The derived record (52 MB at 20,000 notes: a second or two of encoding here) is written
  // 5 s after an operation rather than 1 s, so that a person's next save seldom waits for it;
  // an import writes it at once, and the page asks for it when it is hidden.
  const store = early?.store ?? indexedDb({ name: database });
  let conn;
  try {
    conn = await open({ tenant, store, derivedDelayMs: 5_000 });
  } finally {
    early?.opened();
  }
  marks.open = stamp();
  const tenantStore = await store.open(conn.tenant);
  notes = new Notes(conn, tenantStore, database, (summary, cause) => emit({ event: 'data', summary, cause }));
  importer = new Importer(notes, (job, progress) => emit({ event: 'progress', job, progress }));
  await notes.openQuick();
  marks.data = stamp();
  emit({ event: 'ready', marks, ...(early ? { early: { ...early.stats } } : {}) });
  return notes.summary();
}

let warming: Promise<void> | null = null;

/**
 * The engine builds its search index on the first search, and readies its first commit when
 * asked: the page asks for both once it has drawn its first screen (the reads that screen
 * needs would otherwise wait behind them), so that neither the first keystroke nor the first
 * save waits.
 */
function warmUp(): Promise<void> {
  return (warming ??= (async () => {
    await notes!.conn.search('warm');
    marks.searchReady = stamp();
    await notes!.conn.warm();
    marks.warm = stamp();
    emit({ event: 'ready', marks });
  })().catch((e) => console.warn('warm', e)));
}

/** What crosses back of a failure: the package's error fields, and whether storage is full. */
async function wire(error: unknown): Promise<WireError> {
  const e = (error ?? {}) as Record<string, unknown>;
  const out: WireError = { name: String(e.name ?? 'Error'), message: String(e.message ?? error) };
  for (const k of ['code', 'reason', 'revision'] as const) if (typeof e[k] === 'string') out[k] = e[k] as string;
  if (Array.isArray(e.changes)) out.changes = e.changes as WireError['changes'];
  if (out.code === 'STORE' || out.name === 'QuotaExceededError') {
    let full = /quota/i.test(out.message);
    if (!full && navigator.storage?.estimate) {
      const { usage = 0, quota = Infinity } = await navigator.storage.estimate().catch(() => ({ usage: 0, quota: Infinity }));
      full = quota - usage < 1024 * 1024;
    }
    if (full) out.quota = true;
  }
  return out;
}

let early: Prefetch | null = null;

const methods: Record<string, (...args: never[]) => unknown> = {
  open: (database: string, tenant: string) => (opening ??= openNotes(database, tenant, early)),
  warmUp: () => warmUp(),
  importFiles: (...args: Parameters<Importer['add']>) => importer!.add(...args),
  importPlan: (...args: Parameters<Importer['plan']>) => importer!.plan(...args),
  importCommit: (...args: Parameters<Importer['commit']>) => importer!.commit(...args),
  importCancel: (job: number) => importer!.cancel(job),
  importDiscard: (job: number) => importer!.discard(job),
};

/** Answers one request; `start` are the worker's marks so far, `pre` the open's early reads. */
export async function handle(request: Request, start: Record<string, number>, pre: Prefetch | null): Promise<void> {
  marks = start;
  early ??= pre;
  const { id, method, args } = request;
  try {
    let value: unknown;
    const own = methods[method];
    if (own) value = await (own as (...a: unknown[]) => unknown)(...args);
    else {
      if (!notes) throw new Error('the notes are not open yet');
      const f = (notes as unknown as Record<string, unknown>)[method];
      if (typeof f !== 'function' || method.startsWith('_')) throw new Error(`no such request: ${method}`);
      value = await (f as (...a: unknown[]) => unknown).apply(notes, args);
    }
    const transfer: Transferable[] = [];
    if (value && typeof value === 'object' && 'bytes' in value && (value as { bytes: unknown }).bytes instanceof Uint8Array) {
      transfer.push((value as { bytes: Uint8Array }).bytes.buffer);
    }
    scope.postMessage({ id, ok: true, value }, transfer);
  } catch (error) {
    if (!(error instanceof Error && error.name === 'CancelledError')) console.warn(method, error);
    scope.postMessage({ id, ok: false, error: await wire(error) });
  }
}
