// The public API of the `langonrock` package, shared by the Node and browser entries
// (src/node.js, src/browser.js), which load the WebAssembly module before anything here is
// called. Generated bindings live in ../gen/ (wasm-pack output, never edited by hand).
//
// A connection runs every library operation as a connection op of the core (WasmConnOp):
// the core's connection policy decides when to refresh, the one retry after a lost head
// swap, the read-only refusal and how a lost outcome is reported (docs/connection.md). This
// host keeps what only it can: a queue that runs exclusive ops one at a time, one refresh at
// a time, the clock, the derived record timer, and the store (`serveNeed`). The engine's
// calls are synchronous, so no borrow of it is held across an await, and reads go on while a
// commit waits for its store.

import {
  version as wasmVersion,
  setErrorClass,
  WasmEngine,
  WasmDerivedTimer,
  parseToolCall,
  toolList,
  manifestResource,
  advice as adviceFor,
  unknownTool,
  noResource,
  planFolder as wasmPlanFolder,
  checkBundleName as wasmCheckBundleName,
  checkDocumentPath as wasmCheckDocumentPath,
  endsWithMd as wasmEndsWithMd,
  nfc as wasmNfc,
  LinkTargets as WasmLinkTargets,
} from '../gen/langonrock_wasm.js';
import { LangonrockError, invalidError } from './errors.js';
import { loadSdk } from './sdk.js';
import { serial, serveNeed } from './host.js';
import { openDsn } from './dsn.js';
import { importSources } from './internal.js';

export { CODES, LangonrockError } from './errors.js';
export { memory } from './stores/memory.js';

let registered = false;
function ready() {
  if (!registered) {
    setErrorClass(LangonrockError);
    registered = true;
  }
}

/** The package version, as compiled into the WebAssembly module. */
export function version() {
  return wasmVersion();
}

// ---------------------------------------------------------------------------------------
// Name rules (compile.md §10), for hosts that read folders themselves and list every bad
// name before committing anything (`planFolder` stops at the first, as the CLI does): the
// notes page shows all of a picked folder's at once.

/** Throws the `INVALID` error of compile.md §10.2 when `name` is not a valid bundle name. */
export function checkBundleName(name) {
  ready();
  wasmCheckBundleName(String(name));
}

/** `path` in NFC when it is a valid document path (compile.md §10.3); else throws `INVALID`. */
export function checkDocumentPath(path) {
  ready();
  return wasmCheckDocumentPath(String(path));
}

/** Whether a file name ends in `.md` (any case): the files a folder read takes. */
export function endsWithMd(name) {
  return wasmEndsWithMd(String(name));
}

/** `s` in Unicode normalization form C, as the engine normalises names. */
export function nfc(s) {
  return wasmNfc(String(s));
}

/**
 * Where links go, as the compiler resolves them (compile.md §6.2–§6.3), among `entries`
 * (`listSource()`'s answer, or any `[{bundle, path, id?}]`): `markdown(bundle, path,
 * destination)` for a Markdown link written in `bundle`/`path`, `wiki(bundle, inner)` for the
 * text between `[[` and `]]`. Each answers `{kind: 'external', href}`, `{kind: 'anchor',
 * fragment}`, `{kind: 'concept', id}`, `{kind: 'document', bundle, path}` (a navigation
 * document) or `{kind: 'unresolved', create?: {bundle, path, title}}` (the note that would
 * resolve it). `free()` releases it at once (otherwise the garbage collector does).
 */
export function linkTargets(entries) {
  ready();
  // One JSON text of the three fields crosses into wasm, not 20,000 objects read field by field.
  const json = Array.isArray(entries) ? JSON.stringify(entries, ['bundle', 'path', 'id']) : 'null';
  return new WasmLinkTargets(json);
}

const CLOSED = 'connection is closed';

// An import's `check` as a commit hook: a message from it fails the commit.
const folderCheck = (check) =>
  check
    ? async () => {
        const m = await check();
        return m ? { outcome: { failed: { kind: 'failed', message: m } } } : undefined;
      }
    : undefined;

const isoDate = (d) => d.toISOString().slice(0, 10);

/** Runs a raw engine op (the refresh) to its end against a tenant store. */
async function drive(engine, store, op) {
  let step = op.resume(engine, undefined);
  while (!('done' in step)) step = op.resume(engine, await serveNeed(store, step));
  return step.done;
}

/**
 * Opens a connection to one tenant (js.md §1), or to what a DSN names (docs/remote.md):
 * `open("okf+https://host?tenant=t&token=…", {readOnly?})`.
 * @param {string | {tenant: string, store: import('./index.js').Store, readOnly?: boolean, now?: () => Date}} options
 */
export async function open(options, dsnOptions) {
  ready();
  if (typeof options === 'string') return openDsn(options, dsnOptions, open);
  if (options === null || typeof options !== 'object') throw invalidError('open needs {tenant, store}');
  const { tenant, store, readOnly = false, now = () => new Date(), derivedDelayMs } = options;
  if (typeof tenant !== 'string') throw invalidError('open needs a tenant id string');
  if (!store || typeof store.open !== 'function') throw invalidError('open needs a store: memory(), files({dataRoot}) or indexedDb({name})');
  if (typeof now !== 'function') throw invalidError('open: now must be a function returning a Date');
  if (derivedDelayMs !== undefined && (typeof derivedDelayMs !== 'number' || !(derivedDelayMs >= 0) || derivedDelayMs > 2 ** 31 - 1)) {
    throw invalidError('open: derivedDelayMs must be a number of milliseconds from 0 to 2147483647');
  }
  const engine = new WasmEngine(tenant);
  let tenantStore;
  try {
    tenantStore = await store.open(engine.tenant);
    const op = engine.refresh();
    try {
      await drive(engine, tenantStore, op);
    } catch (e) {
      // A tenant that fails closed still opens: every read rejects with its CORRUPT error
      // (engine.md §9.1), while verify() and repair() work on it.
      if (e?.code !== 'CORRUPT') throw e;
    } finally {
      op.free();
    }
  } catch (e) {
    await tenantStore?.close().catch(() => {});
    engine.free();
    throw e;
  }
  const conn = new Connection(engine, tenantStore, Boolean(readOnly), now, derivedDelayMs);
  // A writable connection keeps the head's derived record current (engine.md §9.1 rule 4),
  // so that the next cold open decodes it instead of compiling.
  conn.keepDerived();
  return conn;
}

class Connection {
  #engine;
  #store;
  #readOnly;
  #now;
  #queue = serial();
  #refreshTail = Promise.resolve();
  #committing = false;
  #closed = false;
  #closing = null;
  #timer;
  #timeout = null;

  constructor(engine, store, readOnly, now, derivedDelayMs) {
    this.#engine = engine;
    this.#store = store;
    this.#readOnly = readOnly;
    this.#now = now;
    this.#timer = new WasmDerivedTimer(readOnly, derivedDelayMs);
  }

  /** The tenant id, lower-cased. */
  get tenant() {
    return this.#engine.tenant;
  }

  /** Whether the connection never writes. */
  get readOnly() {
    return this.#readOnly;
  }

  #check() {
    if (this.#closed) throw invalidError(CLOSED);
  }

  #date() {
    const d = this.#now();
    if (!(d instanceof Date) || Number.isNaN(d.getTime())) throw invalidError('open: now() must return a valid Date');
    return d;
  }

  #today() {
    return isoDate(this.#date());
  }

  /** One refresh at a time (engine.md §8.1). */
  #refresh() {
    const run = this.#refreshTail.then(async () => {
      const op = this.#engine.refresh();
      try {
        await drive(this.#engine, this.#store, op);
      } finally {
        op.free();
      }
    });
    this.#refreshTail = run.catch(() => undefined);
    return run;
  }

  /**
   * Runs a connection op of the core: exclusive ones queued one at a time (reads meanwhile
   * see the published state), the others at once. `read(engine)` answers a read step;
   * `onCommit(step)` may answer a commit step. Frees the op.
   */
  #run(op, { read, onCommit } = {}) {
    try {
      this.#check();
    } catch (e) {
      op.free();
      return Promise.reject(e);
    }
    if (!op.exclusive) return this.#drive(op, this.#committing, read, onCommit);
    return this.#queue(async () => {
      this.#committing = true;
      try {
        return await this.#drive(op, false, read, onCommit);
      } finally {
        this.#committing = false;
      }
    });
  }

  async #drive(op, busy, read, onCommit, keep = false) {
    const engine = this.#engine;
    const exclusive = op.exclusive;
    try {
      let step = op.begin(engine, busy, this.#readOnly);
      while (!('done' in step)) {
        let answer;
        try {
          if ('refresh' in step) {
            if (step.refresh.unlessBusy && (busy || (this.#committing && !exclusive))) answer = { refreshed: false };
            else {
              try {
                await this.#refresh();
                answer = { refreshed: true };
              } catch (error) {
                answer = { refreshError: error };
              }
            }
          } else if ('now' in step) {
            const d = this.#date();
            answer = { now: { commitTime: d.toISOString(), millis: d.getTime() } };
          } else if ('read' in step) {
            try {
              answer = { read: { value: read(engine) } };
            } catch (error) {
              answer = { read: { error } };
            }
          } else {
            if (step.need === 'commit' && onCommit) answer = await onCommit(step);
            if (answer === undefined) answer = await serveNeed(this.#store, step);
          }
        } catch (e) {
          // The host lost the step (a hook threw): a commit in flight is indeterminate.
          throw op.abandon(engine, e);
        }
        step = op.resume(engine, answer);
      }
      return step.done;
    } finally {
      if (!keep) op.free();
      this.keepDerived(exclusive);
    }
  }

  /** A read of the served state under the core's policy; `check` as `readOp` takes it. */
  #read(read, check) {
    let op;
    try {
      this.#check();
      op = this.#engine.readOp(check);
    } catch (e) {
      return Promise.reject(e);
    }
    return this.#run(op, { read });
  }

  /** Runs `make(engine)`'s connection op; a refusal while making it rejects. */
  #op(make, hooks) {
    let op;
    try {
      this.#check();
      op = make(this.#engine);
    } catch (e) {
      return Promise.reject(e);
    }
    return this.#run(op, hooks);
  }

  /**
   * Tells the core's derived record timer that an operation ended (engine.md §9.1 rule 4):
   * when a record is due, it is written once the commits pause for the core's delay (a run
   * of commits writes it once, and none waits for its encoding); `close()` writes a pending
   * one at once. Failures are ignored: derived records never change what a read returns.
   */
  keepDerived(exclusive = false) {
    if (this.#readOnly || this.#closed) return;
    const at = this.#timer.afterOp(Date.now(), this.#engine.derivedDue(), exclusive);
    if (at !== undefined) this.#arm(at);
  }

  #arm(at) {
    if (this.#timeout !== null) clearTimeout(this.#timeout);
    this.#timeout = setTimeout(() => this.#fire(), Math.max(0, at - Date.now()));
    // In Node, a pending write does not keep the process alive (`close()` flushes it).
    this.#timeout?.unref?.();
  }

  #fire() {
    this.#timeout = null;
    if (this.#closed) return;
    if (this.#timer.fire(Date.now())) this.#writeDerived();
    else if (this.#timer.deadline !== undefined) this.#arm(this.#timer.deadline);
  }

  /**
   * Writes a pending derived record now (a page about to be hidden, which may not come
   * back); resolves once it is stored, or at once when none is pending. Never rejects.
   */
  flushDerived() {
    if (this.#closed || !this.#timer.fire(Number.MAX_SAFE_INTEGER)) return Promise.resolve();
    if (this.#timeout !== null) clearTimeout(this.#timeout);
    this.#timeout = null;
    return this.#writeDerived();
  }

  #writeDerived() {
    return this.#queue(async () => {
      // Only when one is due (after a recompiling open or a commit), once.
      // The files store hands its source records out in place, so its records leave the
      // texts out (docs/records.md "Derived record").
      const record = this.#engine.takeDerived(this.#today(), this.#store.sourcesInPlace !== true);
      if (record) await this.#store.put(record.key, record.bytes);
    }).catch(() => undefined);
  }

  // -------------------------------------------------------------------------------------
  // Reads (read.md)

  manifest(bundle) {
    return this.#read((e) => e.manifest(bundle ?? undefined, this.#today()));
  }

  get(ids, options) {
    // With `source`, the source blobs behind what it returns are verified first (§9.1 rule 1).
    return this.#read((e) => e.get(ids, options), options?.source === true ? ids : undefined);
  }

  search(query, options) {
    return this.#read((e) => e.search(query, options, this.#today()));
  }

  snapshot() {
    return this.#read((e) => e.snapshot());
  }

  /** The manifest as data: the TSV's rows as objects, in its order. */
  manifestRows(bundle) {
    return this.#read((e) => e.manifestRows(bundle ?? undefined, this.#today()));
  }

  /** A search as data: the search TSV's rows as objects, in its order. */
  searchRows(query, options) {
    return this.#read((e) => e.searchRows(query, options, this.#today()));
  }

  /** One concept's compiled fields, or null for an unknown id. */
  concept(id) {
    return this.#read((e) => e.conceptInfo(String(id), this.#today()));
  }

  listSource() {
    return this.#read((e) => e.listSource());
  }

  readSource(bundle, path) {
    return this.#op((e) => e.readSource(String(bundle), String(path)));
  }

  // -------------------------------------------------------------------------------------
  // Writes (engine.md §4–§7)

  write(bundle, path, content, replaces) {
    return this.#op((e) => e.write(bundle, path, content, replaces ?? undefined));
  }

  delete(bundle, path, replaces) {
    return this.#op((e) => e.delete(bundle, path, replaces ?? undefined));
  }

  deleteBundle(bundle) {
    return this.#op((e) => e.deleteBundle(bundle));
  }

  transact(request) {
    return this.#op((e) => e.transact(request));
  }

  restore(request) {
    return this.#op((e) => e.restore(request));
  }

  history(options) {
    return this.#op((e) => e.history(options ?? {}));
  }

  gc(options = {}) {
    return this.#op((e) => e.gc(options ?? {}));
  }

  verify() {
    return this.#op((e) => e.verify());
  }

  /**
   * Readies a connection that opened from a derived record for commits: the texts' check
   * and the incremental linker that its first commit would build otherwise ("the first edit
   * after opening", docs/benchmarks.md). Exclusive, like a commit; resolves whether there was
   * anything to do. A host calls it when idle after opening.
   */
  warm() {
    return this.#op((e) => e.warm());
  }

  /** Repair reads the store's head itself: it runs on a tenant that fails closed. */
  repair(request) {
    return this.#op((e) => e.repair(request));
  }

  /**
   * `import` of a folder's documents (cli.md §4), for the Node folder helpers: `check()` runs
   * after the commit is prepared and before it is stored, and a message from it aborts.
   */
  importDocuments(location, documents, { strict = false, check } = {}) {
    return this.#op((e) => e.import(location, documents, strict), { onCommit: folderCheck(check) });
  }

  /** `importDocuments` of a folder read into a `WasmSources` (src/folder.js), which it empties. */
  [importSources](location, sources, { strict = false, check } = {}) {
    return this.#op((e) => e.importSources(location, sources, strict), { onCommit: folderCheck(check) });
  }

  /** Every document as `{bundle, path, content}`, sorted by bundle then path (for export). */
  documents() {
    return this.#read((e) => e.documents().map(([bundle, path, content]) => ({ bundle, path, content })), true);
  }

  // -------------------------------------------------------------------------------------
  // Tool surface (js.md §5)

  /** The advice sentence of agent.md §7.2 for the current manifest, or null if that fails. */
  adviceNow() {
    try {
      return adviceFor(this.#engine.manifest(undefined, this.#today()));
    } catch {
      return null;
    }
  }

  tools(options = {}) {
    this.#check();
    const { databaseTools = false, readOnly = false } = options ?? {};
    return toolList(Boolean(databaseTools), Boolean(readOnly), this.adviceNow() ?? undefined);
  }

  /** A tool call, run by the core's tool op: each operation it needs is one connection op. */
  async callTool(name, args) {
    let call;
    try {
      this.#check();
      call = parseToolCall(String(name), args);
    } catch (m) {
      return { text: typeof m === 'string' ? m : String(m?.message ?? m), isError: true };
    }
    try {
      let step = call.start(this.#engine, this.#readOnly, this.#today());
      while (!('done' in step)) {
        const op = step.op;
        let error;
        try {
          this.#check();
          await (op.exclusive
            ? this.#queue(async () => {
                this.#committing = true;
                try {
                  await this.#drive(op, false, undefined, undefined, true);
                } finally {
                  this.#committing = false;
                }
              })
            : this.#drive(op, this.#committing, undefined, undefined, true));
        } catch (e) {
          error = e;
        }
        try {
          step = call.answer(op, error);
        } finally {
          op.free();
        }
      }
      return step.done;
    } catch (e) {
      return { text: String(e?.message ?? e), isError: true };
    } finally {
      call.free();
    }
  }

  /** Waits for a commit in flight, then releases the store (js.md §1.2). */
  close() {
    if (this.#closing) return this.#closing;
    if (this.#timeout !== null) clearTimeout(this.#timeout);
    this.#timeout = null;
    // A record that would not pay (a few commits past the one opening started from) is left to
    // a connection that stays open (the core's derivedPays).
    const pending = !this.#readOnly && (this.#timer.close() || this.#engine.derivedDue()) && this.#engine.derivedPays();
    if (pending) this.#writeDerived();
    this.#closed = true;
    this.#closing = (async () => {
      await this.#queue(async () => undefined);
      await this.#refreshTail;
      try {
        await this.#store.close();
      } finally {
        this.#timer.free();
        release(this.#engine);
      }
    })();
    return this.#closing;
  }
}

// A closed connection's engine is freed a second later, by a timer that in Node does not
// keep the process alive: freeing a large served state allocation by allocation takes a
// while (0.1-0.3 s at 20,000 concepts), and a process that exits right after `close()`
// need not pay for it (the native binary leaves it to the exit too). At most one engine
// waits: the next close frees the previous one first (docs/js.md §1.2).
const RELEASE_MS = 1000;
let releasing = null;
function release(engine) {
  releasing?.free();
  releasing = engine;
  setTimeout(() => {
    if (releasing === engine) {
      releasing = null;
      engine.free();
    }
  }, RELEASE_MS)?.unref?.();
}

/**
 * The tools/list entries of a mode with a given advice sentence (null: none).
 * @returns {Array<{name: string, title: string, description: string, inputSchema: object}>}
 */
function toolDefinitions({ databaseTools = false, readOnly = false } = {}, advice = null) {
  ready();
  return toolList(Boolean(databaseTools), Boolean(readOnly), advice ?? undefined);
}

/**
 * An MCP server of the official TypeScript SDK over a connection (js.md §6), loaded only
 * when this is called. The SDK is an optional peer dependency of the package.
 */
export async function createMcpServer(connection, advice, options = {}) {
  ready();
  const [{ Server }, types] = await loadSdk(['server/index.js', 'types.js']);
  const mode = { databaseTools: Boolean(options?.databaseTools), readOnly: Boolean(options?.readOnly) };
  const fixed = advice === undefined ? connection.adviceNow() : advice;
  const tools = toolDefinitions(mode, fixed);
  const names = new Set(tools.map((t) => t.name));
  const resource = manifestResource(fixed ?? undefined);
  const server = new Server({ name: 'langonrock', version: version() }, { capabilities: { tools: {}, resources: {} } });
  server.setRequestHandler(types.ListToolsRequestSchema, async () => ({ tools }));
  server.setRequestHandler(types.CallToolRequestSchema, async (request) => {
    const { name, arguments: args } = request.params;
    const { text, isError } = names.has(name)
      ? await connection.callTool(name, args)
      : { text: unknownTool(name), isError: true };
    return { content: [{ type: 'text', text }], isError };
  });
  server.setRequestHandler(types.ListResourcesRequestSchema, async () => ({ resources: [resource] }));
  server.setRequestHandler(types.ReadResourceRequestSchema, async (request) => {
    const { uri } = request.params;
    if (uri !== resource.uri) {
      throw new types.McpError(-32002, noResource(uri), { uri });
    }
    let text;
    try {
      text = await connection.manifest();
    } catch (e) {
      throw new types.McpError(types.ErrorCode.InternalError, e.message);
    }
    return { contents: [{ uri: resource.uri, mimeType: resource.mimeType, text }] };
  });
  return server;
}

/**
 * The folder rule (docs/import.md), for hosts that walk a folder themselves (the notes page
 * reads a picked or dropped folder in the browser): `entries` are the `{path, kind}` the walk
 * found (`kind` one of `file`, `link`, `dir`, `other`; relative paths with `/`; names starting
 * with `.` reported but not entered), `options` `{bundle?, name?, shown}`. Returns `{layout,
 * bundle?, chosen?, bundles, documents: [{entry, bundle, path}], line}`, the same plan the
 * native `import` and `importFolder` follow; throws `INVALID` for a folder with nothing to
 * import, naming why.
 */
export function planFolder(entries, options = {}) {
  ready();
  return wasmPlanFolder(entries, options ?? {});
}
