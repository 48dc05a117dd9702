// The public API of the `langonrock` package, shared by the Node and browser entries
// (src/node.js, src/browser.js), which load the WebAssembly module before anything here is
// called. Generated bindings live in ../gen/ (wasm-pack output, never edited by hand).
//
// A connection drives the engine (a WasmEngine in the wasm module) against a store: every
// operation that touches the store is a step machine (WasmOp) resumed with what `serveNeed`
// fetched (engine.md §8.8). The engine's calls are synchronous, so no borrow of it is held
// across an await, and reads may go on while a commit waits for its store.

import {
  version as wasmVersion,
  setErrorClass,
  WasmEngine,
  parseToolCall,
  toolList,
  manifestResource,
  advice as adviceFor,
} from '../gen/langonrock_wasm.js';
import { LangonrockError, invalidError } from './errors.js';
import { serial, serveNeed } from './host.js';
import { openDsn } from './dsn.js';

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

const READ_ONLY = 'connection is read-only';
const CLOSED = 'connection is closed';

const isoDate = (d) => d.toISOString().slice(0, 10);

/** How long commits must pause before the head's derived record is written. */
const DERIVED_DELAY_MS = 1000;

/** Runs an op to its end against a tenant store. `onCommit(step)` may answer a commit step. */
async function drive(engine, store, op, onCommit) {
  try {
    let step = op.resume(engine, undefined);
    while (!('done' in step)) {
      let answer;
      if (step.need === 'commit' && onCommit) answer = await onCommit(step);
      if (answer === undefined) answer = await serveNeed(store, step);
      step = op.resume(engine, answer);
    }
    return step.done;
  } catch (e) {
    // A commit whose outcome was lost on the way (a hook threw) is indeterminate: the engine
    // reloads before its next operation.
    if (engine.commitInFlight()) throw engine.forgetCommit() ?? e;
    throw e;
  }
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
  const { tenant, store, readOnly = false, now = () => new Date() } = options;
  if (typeof tenant !== 'string') throw invalidError('open needs a tenant id string');
  if (!store || typeof store.open !== 'function') throw invalidError('open needs a store: memory(), files({dataRoot}) or indexedDb({name})');
  if (typeof now !== 'function') throw invalidError('open: now must be a function returning a Date');
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
  const conn = new Connection(engine, tenantStore, Boolean(readOnly), now);
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
  #derivedTimer = null;

  constructor(engine, store, readOnly, now) {
    this.#engine = engine;
    this.#store = store;
    this.#readOnly = readOnly;
    this.#now = now;
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

  async #run(op, onCommit) {
    try {
      return await drive(this.#engine, this.#store, op, onCommit);
    } finally {
      op.free();
      this.keepDerived();
    }
  }

  /**
   * Runs a read of the served state after a refresh. When it met a text decoded from a
   * derived record that does not match its source, the engine compiles on the next refresh
   * and the read runs once more: a bad derived record never fails a read (§9.1 rule 4).
   */
  async #withRead(f) {
    const e = await this.#beforeRead();
    try {
      return f(e);
    } catch (err) {
      if (this.#committing || !e.derivedFailed()) throw err;
      await this.#refresh();
      return f(e);
    }
  }

  /** Refreshes to the store's head (engine.md §8.1); refreshes run one at a time. */
  #refresh() {
    const run = this.#refreshTail.then(() => this.#run(this.#engine.refresh()));
    this.#refreshTail = run.catch(() => undefined);
    return run;
  }

  /**
   * Before a read: refresh, unless a commit is in flight, whose reads see the last published
   * revision (engine.md §8.6).
   */
  async #beforeRead() {
    this.#check();
    if (!this.#committing) await this.#refresh();
    return this.#engine;
  }

  /**
   * Runs a commit (engine.md §8): queued behind earlier ones, prepared by `make(engine,
   * created)` after a refresh, retried once after a lost head swap when `retry` (no expected
   * revision, §8.7).
   */
  async #commit(retry, make, onCommit, { refresh = true } = {}) {
    this.#check();
    if (this.#readOnly) throw invalidError(READ_ONLY);
    return this.#queue(async () => {
      this.#committing = true;
      try {
        await this.#refreshTail;
        for (let attempt = retry ? 2 : 1; ; ) {
          attempt -= 1;
          if (refresh) await this.#run(this.#engine.refresh());
          const op = make(this.#engine, this.#date().toISOString());
          try {
            const result = await drive(this.#engine, this.#store, op, onCommit);
            this.keepDerived();
            return result;
          } catch (e) {
            if (attempt > 0 && op.lostSwap) continue;
            throw e;
          } finally {
            op.free();
          }
        }
      } finally {
        this.#committing = false;
      }
    });
  }

  /**
   * Schedules a put of the served state's derived record, when the engine says one is due,
   * once operations pause for `DERIVED_DELAY_MS` (a run of commits writes it once, and none
   * waits for its encoding); `close()` writes a pending one at once. Failures are ignored:
   * derived records never change what a read returns.
   */
  keepDerived() {
    if (this.#readOnly || this.#closed || this.#derivedTimer !== null) return;
    this.#derivedTimer = setTimeout(() => this.#flushDerived(), DERIVED_DELAY_MS);
    // In Node, a pending write does not keep the process alive (`close()` flushes it).
    this.#derivedTimer?.unref?.();
  }

  #flushDerived() {
    if (this.#derivedTimer === null) return;
    clearTimeout(this.#derivedTimer);
    this.#derivedTimer = null;
    this.#queue(async () => {
      // Only when one is due (after a recompiling open or a commit), once.
      const record = this.#engine.takeDerived(this.#today());
      if (record) await this.#store.put(record.key, record.bytes);
    }).catch(() => undefined);
  }

  // -------------------------------------------------------------------------------------
  // Reads (read.md)

  async manifest(bundle) {
    const e = await this.#beforeRead();
    return e.manifest(bundle ?? undefined, this.#today());
  }

  async get(ids, options) {
    if (options?.source === true) {
      // The source blobs behind what a source read returns are verified first (§9.1 rule 1).
      await this.#beforeRead();
      await this.#run(this.#engine.checkSources(ids));
    }
    return this.#withRead((e) => e.get(ids, options));
  }

  async search(query, options) {
    return this.#withRead((e) => e.search(query, options, this.#today()));
  }

  async snapshot() {
    const e = await this.#beforeRead();
    return e.snapshot();
  }

  async listSource() {
    const e = await this.#beforeRead();
    return e.listSource();
  }

  async readSource(bundle, path) {
    const e = await this.#beforeRead();
    return this.#run(e.readSource(String(bundle), String(path)));
  }

  // -------------------------------------------------------------------------------------
  // Writes (engine.md §4–§7)

  write(bundle, path, content, replaces) {
    return this.#commit(true, (e, t) => e.write(bundle, path, content, replaces ?? undefined, t));
  }

  delete(bundle, path, replaces) {
    return this.#commit(true, (e, t) => e.delete(bundle, path, replaces ?? undefined, t));
  }

  deleteBundle(bundle) {
    return this.#commit(true, (e, t) => e.deleteBundle(bundle, t));
  }

  transact(request) {
    const retry = !(request && typeof request === 'object' && request.expectedRevision != null);
    return this.#commit(retry, (e, t) => e.transact(request, t));
  }

  restore(request) {
    return this.#commit(false, (e, t) => e.restore(request, t));
  }

  async history(options) {
    this.#check();
    return this.#run(this.#engine.history(options ?? {}));
  }

  async gc(options = {}) {
    this.#check();
    const dryRun = Boolean(options && options.dryRun);
    if (dryRun) {
      // A dry run changes nothing, so a read-only connection may run it; it still queues,
      // since collection refreshes the engine.
      return this.#queue(async () => {
        this.#committing = true;
        try {
          await this.#refreshTail;
          return await this.#run(this.#engine.gc(options, this.#date().getTime()));
        } finally {
          this.#committing = false;
        }
      });
    }
    return this.#commit(false, (e) => e.gc(options, this.#date().getTime()));
  }

  async verify() {
    this.#check();
    return this.#run(this.#engine.verify());
  }

  /** Repair reads the store's head itself: it runs on a tenant that fails closed. */
  repair(request) {
    return this.#commit(false, (e) => e.repair(request), undefined, { refresh: false });
  }

  /**
   * `import` of a folder's documents (cli.md §4), for the Node folder helpers: `check()` runs
   * after the commit is prepared and before it is stored, and a message from it aborts.
   */
  importDocuments(location, documents, { strict = false, check } = {}) {
    const onCommit = check
      ? async () => {
          const m = await check();
          return m ? { outcome: { failed: { kind: 'failed', message: m } } } : undefined;
        }
      : undefined;
    return this.#commit(false, (e, t) => e.import(location, documents, strict, t), onCommit);
  }

  /** Every document as `{bundle, path, content}`, sorted by bundle then path (for export). */
  async documents() {
    const e = await this.#beforeRead();
    await this.#run(e.checkSources(undefined));
    return e.documents().map(([bundle, path, content]) => ({ bundle, path, content }));
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

  async callTool(name, args) {
    try {
      this.#check();
    } catch (e) {
      return { text: e.message, isError: true };
    }
    let call;
    try {
      call = parseToolCall(String(name), args);
    } catch (m) {
      return { text: typeof m === 'string' ? m : String(m?.message ?? m), isError: true };
    }
    try {
      return await this.#runTool(call);
    } finally {
      call.free();
    }
  }

  async #runTool(call) {
    switch (call.kind) {
      case 'read': {
        try {
          await this.#beforeRead();
          const ids = call.sourceIds;
          if (ids) await this.#run(this.#engine.checkSources(ids));
        } catch (e) {
          return { text: e.message, isError: true };
        }
        const answer = call.answer(this.#engine, this.#today());
        if (!answer.isError || this.#committing || !this.#engine.derivedFailed()) return answer;
        await this.#refresh().catch(() => undefined);
        return call.answer(this.#engine, this.#today());
      }
      case 'op':
        try {
          this.#check();
          return { text: await this.#run(call.op(this.#engine, this.#date().toISOString())), isError: false };
        } catch (e) {
          return { text: call.failure(this.#engine, e), isError: true };
        }
      default:
        try {
          return { text: await this.#commit(call.retry, (e, t) => call.op(e, t)), isError: false };
        } catch (e) {
          // The retry lines look the documents up in the current state (agent.md §6.3.2);
          // lookup errors are ignored.
          await this.#refresh().catch(() => undefined);
          return { text: call.failure(this.#engine, e), isError: true };
        }
    }
  }

  /** Waits for a commit in flight, then releases the store (js.md §1.2). */
  close() {
    if (this.#closing) return this.#closing;
    this.#flushDerived();
    this.#closed = true;
    this.#closing = (async () => {
      await this.#queue(async () => undefined);
      await this.#refreshTail;
      try {
        await this.#store.close();
      } finally {
        this.#engine.free();
      }
    })();
    return this.#closing;
  }
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
 * when this is called.
 */
export async function createMcpServer(connection, advice, options = {}) {
  ready();
  const [{ Server }, types] = await Promise.all([
    import('@modelcontextprotocol/sdk/server/index.js'),
    import('@modelcontextprotocol/sdk/types.js'),
  ]);
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
      : { text: `unknown tool "${name}"`, isError: true };
    return { content: [{ type: 'text', text }], isError };
  });
  server.setRequestHandler(types.ListResourcesRequestSchema, async () => ({ resources: [resource] }));
  server.setRequestHandler(types.ReadResourceRequestSchema, async (request) => {
    const { uri } = request.params;
    if (uri !== resource.uri) {
      throw new types.McpError(-32002, `no resource "${uri}"`, { uri });
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
