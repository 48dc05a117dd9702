// A connection to one tenant of a `langonrock serve` (docs/remote.md, js.md §9): the
// operations of a local connection, each one HTTP request. What a request holds and what an
// answer means (the result, or the server's error rebuilt with its code and extras) come from
// the wasm module (`remoteRequest`, `remoteAnswer`, over core's http_api), so this file only
// moves bytes: with `fetch` for okf+http: and okf+https: (Node and browsers), and with
// node:http over a unix socket for okf+unix: (Node only; the Node entry registers it).

import { remoteRequest, remoteAnswer, advice as adviceFor, toolList, WasmRemoteTool } from '../gen/langonrock_wasm.js';
import { invalidError, storeError } from './errors.js';
import { serial } from './host.js';

/** Bounds on every exchange, as the native client's (docs/remote.md). */
export const LIMITS = Object.freeze({
  /** From sending a request to the answer's headers (connecting included). */
  answerMs: 120_000,
  /** The longest pause between two parts of an answer's body. */
  stallMs: 30_000,
  /** The largest answer body read. */
  maxBody: 256 << 20,
});

const READ_ONLY = 'connection is read-only';
const CLOSED = 'connection is closed';
/** The most manifests (one per bundle key) kept for revalidation. */
const MAX_CACHED_MANIFESTS = 64;

let unixTransport = null;

/** The Node entry registers the unix-socket transport (browsers have none). */
export function setUnixTransport(make) {
  unixTransport = make;
}

function secs(ms) {
  return `${ms / 1000} s`;
}

function size(n) {
  return n >= 1 << 20 && n % (1 << 20) === 0 ? `${n / (1 << 20)} MiB` : `${n} bytes`;
}

/** The failure texts of the native client, for one server (`shown`: socket path or origin). */
export function failures(shown) {
  const at = `the langonrock server at ${shown}`;
  return {
    unreachable: (cause) => storeError(`cannot reach the langonrock server at ${shown}: ${cause}`),
    late: (ms) => storeError(`${at} did not answer within ${secs(ms)}`),
    stalled: (ms) => storeError(`${at} stalled mid-answer for ${secs(ms)}`),
    tooBig: (n) => storeError(`${at} answered more than ${size(n)}`),
    broken: (what, read) =>
      storeError(`${at} ${what}${read ? '' : '; the change may or may not have been made: read before retrying'}`),
  };
}

function concat(chunks, n) {
  const out = new Uint8Array(n);
  let at = 0;
  for (const c of chunks) {
    out.set(c, at);
    at += c.length;
  }
  return out;
}

/** Codes of a failed fetch that mean nothing answered at that address. */
const UNREACHABLE = new Set(['ECONNREFUSED', 'ENOENT', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH', 'UND_ERR_CONNECT_TIMEOUT']);

/** A failed `fetch` as the native client words it. */
function fetchFailure(fail, e, read) {
  const cause = e?.cause ?? e;
  const code = String(cause?.code ?? '');
  const text = cause?.message ?? String(cause);
  if (code.startsWith('HPE_') || /does not match the HTTP/.test(text)) {
    return fail.broken(`sent an answer that is not HTTP (${text})`, read);
  }
  if (code === 'UND_ERR_SOCKET' || code === 'ECONNRESET') return fail.broken('closed the connection before answering', read);
  // Anything else (refused, no such host, a TLS failure, a browser's bare "Failed to
  // fetch") means no answer came from that address.
  return fail.unreachable(text);
}

/** The transport over `fetch` to an origin: `send(request)` → `{status, etag, body}`. */
export function fetchTransport(origin, token, limits = LIMITS) {
  const fail = failures(origin);
  return async function send(req) {
    const headers = new Headers(req.headers);
    if (token) headers.set('authorization', `Bearer ${token}`);
    const controller = new AbortController();
    let why = null;
    let timer = null;
    const arm = (ms, error) => {
      clearTimeout(timer);
      timer = setTimeout(() => {
        why = error(ms);
        controller.abort(why);
      }, ms);
    };
    arm(limits.answerMs, fail.late);
    try {
      let res;
      try {
        res = await fetch(origin + req.path, {
          method: req.method,
          headers,
          body: req.body.length ? req.body : undefined,
          cache: 'no-store',
          redirect: 'error',
          signal: controller.signal,
        });
      } catch (e) {
        if (why) throw why;
        throw fetchFailure(fail, e, req.read);
      }
      const chunks = [];
      let n = 0;
      const reader = res.body?.getReader();
      try {
        for (; reader; ) {
          arm(limits.stallMs, fail.stalled);
          const { done, value } = await reader.read();
          if (done) break;
          n += value.length;
          if (n > limits.maxBody) {
            why = fail.tooBig(limits.maxBody);
            controller.abort(why);
            throw why;
          }
          chunks.push(value);
        }
      } catch (e) {
        if (why) throw why;
        throw fail.broken(`broke off mid-answer (${e?.cause?.message ?? e?.message ?? e})`, req.read);
      }
      return { status: res.status, etag: res.headers.get('etag') ?? undefined, body: concat(chunks, n) };
    } finally {
      clearTimeout(timer);
    }
  };
}

/**
 * Opens a connection to the server a parsed remote DSN names (`target` from `parseDsn`).
 * One request (the tenant manifest) checks that the server answers and that the token is
 * good, and gives the advice sentence its first manifest.
 */
export async function openRemote(target, { readOnly = false, limits = LIMITS } = {}) {
  let transport;
  if (target.socket !== undefined) {
    if (!unixTransport) throw invalidError('okf+unix: needs Node');
    transport = unixTransport(target.socket, target.token, limits);
  } else {
    transport = fetchTransport(target.origin, target.token, limits);
  }
  const conn = new RemoteConnection(target, transport, Boolean(readOnly));
  try {
    await conn.manifest();
  } catch (e) {
    await conn.close();
    throw e;
  }
  return conn;
}

/** The operations that no route of the HTTP API serves, by method and the name they go by. */
const LOCAL_ONLY = {
  gc: 'gc',
  verify: 'verify',
  repair: 'repair',
  importDocuments: 'import',
  documents: 'export',
  manifestRows: 'manifestRows',
  searchRows: 'searchRows',
  concept: 'concept',
};

export class RemoteConnection {
  #target;
  #send;
  #readOnly;
  #closed = false;
  #closing = null;
  #inFlight = new Set();
  /** Changes go out one at a time, in call order, as a local connection queues them. */
  #queue = serial();
  /** Bundle key ('' for the tenant) → {etag, text}. */
  #manifests = new Map();

  constructor(target, send, readOnly) {
    this.#target = target;
    this.#send = send;
    this.#readOnly = readOnly;
  }

  /** The DSN's tenant, lower-cased; empty when the server takes it from the token. */
  get tenant() {
    return this.#target.tenant ?? '';
  }

  /** Whether the connection refuses writes. */
  get readOnly() {
    return this.#readOnly;
  }

  /** Always true: this connection talks to a server. */
  get remote() {
    return true;
  }

  /** Derived records are the server's business: nothing to schedule here. */
  keepDerived() {}

  /** Nothing to write: derived records are the server's (never rejects, as locally). */
  flushDerived() {
    return Promise.resolve();
  }

  /** The server readies its own tenants: resolves `false` (there was nothing to do here). */
  async warm() {
    if (this.#closed) throw invalidError(CLOSED);
    return false;
  }

  async #call(op, args, { write = false, cached } = {}) {
    if (this.#closed) throw invalidError(CLOSED);
    if (write && this.#readOnly) throw invalidError(READ_ONLY);
    const req = remoteRequest(op, this.#target.prefix, args);
    const exchange = () => this.#send(req).then((a) => remoteAnswer(op, a.status, a.etag, a.body, cached));
    const p = write ? this.#queue(exchange) : exchange();
    this.#inFlight.add(p);
    try {
      return await p;
    } finally {
      this.#inFlight.delete(p);
    }
  }

  // Reads -------------------------------------------------------------------------------

  async manifest(bundle) {
    const key = bundle ?? '';
    const hit = this.#manifests.get(key);
    const b = bundle ?? undefined;
    const answer = await this.#call('manifest', [b, hit?.etag], { cached: hit?.text });
    if (answer.etag !== undefined) {
      if (this.#manifests.size >= MAX_CACHED_MANIFESTS && !this.#manifests.has(key)) this.#manifests.clear();
      this.#manifests.set(key, { etag: answer.etag, text: answer.text });
    }
    return answer.text;
  }

  get(ids, options) {
    return this.#call('get', [ids, options]);
  }

  search(query, options) {
    return this.#call('search', [query, options]);
  }

  snapshot() {
    return this.#call('snapshot', []);
  }

  listSource() {
    return this.#call('listSource', []);
  }

  readSource(bundle, path) {
    return this.#call('readSource', [String(bundle), String(path)]);
  }

  history(options) {
    return this.#call('history', [options ?? {}]);
  }

  // Writes ------------------------------------------------------------------------------

  write(bundle, path, content, replaces) {
    return this.#call('write', [bundle, path, content, replaces ?? undefined], { write: true });
  }

  delete(bundle, path, replaces) {
    return this.#call('delete', [bundle, path, replaces ?? undefined], { write: true });
  }

  deleteBundle(bundle) {
    return this.#call('deleteBundle', [String(bundle)], { write: true });
  }

  transact(request) {
    return this.#call('transact', [request], { write: true });
  }

  restore(request) {
    return this.#call('restore', [request], { write: true });
  }

  // Tool surface ------------------------------------------------------------------------

  /** The advice sentence of agent.md §7.2 from the last tenant manifest read, or null. */
  adviceNow() {
    const m = this.#manifests.get('');
    if (!m) return null;
    try {
      return adviceFor(m.text);
    } catch {
      return null;
    }
  }

  tools(options = {}) {
    if (this.#closed) throw invalidError(CLOSED);
    const { databaseTools = false, readOnly = false } = options ?? {};
    return toolList(Boolean(databaseTools), Boolean(readOnly), this.adviceNow() ?? undefined);
  }

  /**
   * A tool call (js.md §5.2): the core's tool op, its needs answered by the server's routes
   * (the requests come from the wasm module), so the reply is the local connection's text.
   * It never rejects.
   */
  async callTool(name, args) {
    if (this.#closed) return { text: CLOSED, isError: true };
    const call = new WasmRemoteTool(String(name), args, this.#readOnly, this.#target.prefix);
    const steps = async () => {
      let step = call.step(undefined);
      while (!('done' in step)) {
        let response;
        try {
          response = await this.#send(step.request);
        } catch (e) {
          response = { error: e };
        }
        step = call.step(response);
      }
      return step.done;
    };
    const run = call.commits ? this.#queue(steps) : steps();
    this.#inFlight.add(run);
    try {
      return await run;
    } catch (e) {
      return { text: String(e?.message ?? e), isError: true };
    } finally {
      this.#inFlight.delete(run);
      call.free();
    }
  }

  /** Waits for the requests in flight, then refuses every later call (js.md §1.2). */
  close() {
    if (this.#closing) return this.#closing;
    this.#closed = true;
    this.#closing = (async () => {
      while (this.#inFlight.size) await Promise.allSettled([...this.#inFlight]);
      await this.#send.close?.();
    })();
    return this.#closing;
  }
}

for (const [method, op] of Object.entries(LOCAL_ONLY)) {
  Object.defineProperty(RemoteConnection.prototype, method, {
    value: async function () {
      throw invalidError(`${op} is not available over a remote connection`);
    },
    writable: true,
    configurable: true,
  });
}
