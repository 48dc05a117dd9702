// The IndexedDB store for browsers (js.md §2, engine.md §9.2 rule 3).
//
// The database `name` (version 1) has two object stores:
//   records  {tenant, key: "<kind>/<hex>", bytes: Uint8Array, putTime, size}, key [tenant, key]
//   heads    {tenant, bytes: Uint8Array}, key tenant
// Every write runs in a read-write transaction opened with {durability: "strict"}, and counts
// as done only after the transaction's `complete` event. `swapHead` reads and writes the head
// in one such transaction; one whose completion is never reported (the connection was closed
// under it) is `indeterminate`. After a swap, connections to the tenant are told over the
// BroadcastChannel `langonrock:<name>:<tenant>` (see `onHeadChange`).
//
// Failure injection (`failAt(point, detail)`, see common.js): `readHead`, `get`, `put`
// (detail {key}), `keys`, `remove`: the call throws STORE and changes nothing. `swap`: throws
// before the transaction. `swap:mid`: the head is written inside the transaction, which is then
// aborted: the swap throws STORE and the head stays. `swap:lost`: the same abort, reported as
// `indeterminate`. `swap:after`: the transaction completes (the head moved), then the swap
// answers `indeterminate`.

import { invalidError, storeError } from '../errors.js';
import {
  checkOpen,
  checkTime,
  conflictingPut,
  copyBytes,
  injected,
  injectedError,
  isContentAddressed,
  keyString,
  parseKey,
  sameBytes,
  sameHead,
  sortInfos,
  tenantName,
} from './common.js';

const VERSION = 1;
const STRICT = { durability: 'strict' };

/**
 * An IndexedDB store over the database `name`.
 * @param {{name: string, now?: () => number, failAt?: (point: string, detail?: object) => unknown, indexedDB?: IDBFactory}} options
 */
export function indexedDb(options) {
  const { name, now = Date.now, failAt, indexedDB: factory = globalThis.indexedDB } = options ?? {};
  if (typeof name !== 'string' || name === '') throw invalidError('indexedDb store needs a database name');
  if (!factory) throw invalidError('indexedDb store: IndexedDB is not available here');
  let db = null;
  let opening = null;
  const connection = () => {
    if (db) return Promise.resolve(db);
    opening ??= openDatabase(factory, name).then(
      (d) => {
        db = d;
        // A connection closed by the browser (storage cleared, another tab upgrading) is
        // reopened on the next call.
        const drop = () => {
          if (db === d) db = null;
          opening = null;
        };
        d.addEventListener('close', drop);
        d.onversionchange = () => {
          d.close();
          drop();
        };
        return d;
      },
      (e) => {
        opening = null;
        throw e;
      },
    );
    return opening;
  };
  const tenants = new Set();
  return {
    kind: 'indexeddb',
    name,
    async open(tenant) {
      const t = new IdbTenant(name, tenantName(tenant), connection, { now, failAt });
      tenants.add(t);
      await connection();
      return t;
    },
    async close() {
      for (const t of tenants) await t.close();
      tenants.clear();
      const d = db ?? (opening ? await opening.catch(() => null) : null);
      d?.close();
      db = null;
      opening = null;
    },
  };
}

function openDatabase(factory, name) {
  return new Promise((resolve, reject) => {
    let req;
    try {
      req = factory.open(name, VERSION);
    } catch (e) {
      reject(storeError(`cannot open IndexedDB database "${name}": ${e.message}`, e));
      return;
    }
    req.onupgradeneeded = () => {
      const d = req.result;
      if (!d.objectStoreNames.contains('records')) d.createObjectStore('records', { keyPath: ['tenant', 'key'] });
      if (!d.objectStoreNames.contains('heads')) d.createObjectStore('heads', { keyPath: 'tenant' });
    };
    req.onsuccess = () => resolve(req.result);
    req.onerror = () => reject(storeError(`cannot open IndexedDB database "${name}": ${req.error?.message ?? 'unknown error'}`, req.error));
  });
}

// Runs `body(tx, finish)` in one transaction and resolves with what `finish` was given once
// the transaction completes. `body` issues requests; `fail(error)` aborts with that error.
// An abort rejects with a STORE error (or the given one); a connection closed before
// completion rejects with `lost: true`.
function transact(db, stores, mode, body) {
  return new Promise((resolve, reject) => {
    let tx;
    try {
      tx = mode === 'readwrite' ? db.transaction(stores, mode, STRICT) : db.transaction(stores, mode);
    } catch (e) {
      reject(storeError(`IndexedDB transaction failed to start: ${e.message}`, e));
      return;
    }
    let result;
    let failure = null;
    let settled = false;
    const onClose = () => {
      if (settled) return;
      settled = true;
      const e = storeError('IndexedDB connection closed before the transaction completed');
      e.lost = true;
      reject(e);
    };
    db.addEventListener('close', onClose);
    const done = (f) => {
      db.removeEventListener('close', onClose);
      if (settled) return;
      settled = true;
      f();
    };
    tx.oncomplete = () => done(() => resolve(result));
    tx.onabort = () =>
      done(() => reject(failure ?? storeError(`IndexedDB transaction aborted: ${abortReason(tx.error)}`, tx.error)));
    const api = {
      finish(v) {
        result = v;
      },
      fail(e) {
        failure = e;
        try {
          tx.abort();
        } catch {
          // already finishing; onabort or oncomplete reports it
        }
      },
    };
    try {
      body(tx, api);
    } catch (e) {
      api.fail(e);
    }
  });
}

/**
 * Why a transaction aborted, in words: the browser's message, or its error's name when the
 * message is empty (Chromium reports a full quota as a QuotaExceededError with no message).
 */
function abortReason(error) {
  if (!error) return 'aborted';
  if (error.name === 'QuotaExceededError') return `the browser's storage quota is exceeded (QuotaExceededError)${error.message ? `: ${error.message}` : ''}`;
  return error.message || error.name || 'aborted';
}

/**
 * A stored value's bytes. Each read gets its own copy from IndexedDB (a structured clone), so
 * a Uint8Array is handed out as it came: copying it again would cost a derived record's tens
 * of megabytes once more.
 */
const bytesOf = (v) => (v.bytes instanceof Uint8Array ? v.bytes : new Uint8Array(v.bytes));

const request = (req, onSuccess, api) => {
  req.onsuccess = () => {
    try {
      onSuccess(req.result);
    } catch (e) {
      api.fail(e);
    }
  };
};

class IdbTenant {
  #closed = false;
  #channel = null;
  #listeners = new Set();

  constructor(dbName, tenant, connection, { now, failAt }) {
    this.dbName = dbName;
    this.tenant = tenant;
    this.connection = connection;
    this.now = now;
    this.failAt = failAt;
  }

  async #db() {
    checkOpen(this.#closed);
    return this.connection();
  }

  async readHead() {
    checkOpen(this.#closed);
    if (await injected(this.failAt, 'readHead')) throw injectedError('readHead');
    const db = await this.#db();
    return transact(db, ['heads'], 'readonly', (tx, api) => {
      request(tx.objectStore('heads').get(this.tenant), (v) => api.finish(v ? bytesOf(v) : null), api);
    });
  }

  async get(key) {
    return (await this.getMany([key]))[0];
  }

  async getMany(keys) {
    checkOpen(this.#closed);
    const names = keys.map(keyString);
    if (await injected(this.failAt, 'get', { keys })) throw injectedError('get');
    const db = await this.#db();
    return transact(db, ['records'], 'readonly', (tx, api) => {
      const out = new Array(names.length).fill(null);
      const os = tx.objectStore('records');
      names.forEach((k, i) => request(os.get([this.tenant, k]), (v) => (out[i] = v ? bytesOf(v) : null), api));
      api.finish(out);
    });
  }

  async put(key, bytes) {
    checkOpen(this.#closed);
    const k = keyString(key);
    const data = copyBytes(bytes);
    if (await injected(this.failAt, 'put', { key })) throw injectedError('put');
    const db = await this.#db();
    const putTime = this.now();
    await transact(db, ['records'], 'readwrite', (tx, api) => {
      const os = tx.objectStore('records');
      request(
        os.get([this.tenant, k]),
        (old) => {
          if (old && !sameBytes(new Uint8Array(old.bytes), data) && isContentAddressed(key.kind)) {
            api.fail(conflictingPut(k));
            return;
          }
          os.put({ tenant: this.tenant, key: k, bytes: data, putTime, size: data.byteLength });
        },
        api,
      );
    });
  }

  /**
   * Puts several records in one read-write transaction (`{durability: "strict"}`), with the
   * contract of `put` for each: all are durable when it resolves, and a conflicting put
   * aborts the whole transaction, so none of them is written. Failure injection is asked at
   * `put` for each key first, as the puts one by one would ask it.
   */
  async putMany(records) {
    checkOpen(this.#closed);
    const items = records.map(({ key, bytes }) => ({ key, k: keyString(key), data: copyBytes(bytes) }));
    for (const { key } of items) {
      if (await injected(this.failAt, 'put', { key })) throw injectedError('put');
    }
    if (items.length === 0) return;
    const db = await this.#db();
    const putTime = this.now();
    await transact(db, ['records'], 'readwrite', (tx, api) => {
      const os = tx.objectStore('records');
      let failed = false;
      for (const { key, k, data } of items) {
        request(
          os.get([this.tenant, k]),
          (old) => {
            if (failed) return;
            if (old && !sameBytes(new Uint8Array(old.bytes), data) && isContentAddressed(key.kind)) {
              failed = true;
              api.fail(conflictingPut(k));
              return;
            }
            os.put({ tenant: this.tenant, key: k, bytes: data, putTime, size: data.byteLength });
          },
          api,
        );
      }
    });
  }

  async swapHead(expected, next) {
    checkOpen(this.#closed);
    const exp = expected === null ? null : copyBytes(expected, 'expected head');
    const head = copyBytes(next, 'new head');
    if (await injected(this.failAt, 'swap')) throw injectedError('swap');
    const mid = await injected(this.failAt, 'swap:mid');
    const lost = await injected(this.failAt, 'swap:lost');
    const after = await injected(this.failAt, 'swap:after');
    const db = await this.#db();
    let outcome;
    try {
      outcome = await transact(db, ['heads'], 'readwrite', (tx, api) => {
        const os = tx.objectStore('heads');
        request(
          os.get(this.tenant),
          (cur) => {
            if (!sameHead(cur ? new Uint8Array(cur.bytes) : null, exp)) {
              api.finish('conflict');
              return;
            }
            request(
              os.put({ tenant: this.tenant, bytes: head }),
              () => {
                if (mid || lost) {
                  const e = injectedError(mid ? 'swap:mid' : 'swap:lost');
                  e.lost = lost;
                  api.fail(e);
                  return;
                }
                api.finish('swapped');
              },
              api,
            );
          },
          api,
        );
      });
    } catch (e) {
      if (e.lost) {
        this.#announce();
        return 'indeterminate';
      }
      throw e;
    }
    if (outcome === 'swapped') this.#announce();
    return outcome === 'swapped' && after ? 'indeterminate' : outcome;
  }

  async keys() {
    checkOpen(this.#closed);
    if (await injected(this.failAt, 'keys')) throw injectedError('keys');
    const db = await this.#db();
    const out = await transact(db, ['records'], 'readonly', (tx, api) => {
      const found = [];
      const range = IDBKeyRange.bound([this.tenant, ''], [this.tenant, '\uffff']);
      const req = tx.objectStore('records').openCursor(range);
      request(
        req,
        (cursor) => {
          if (!cursor) {
            api.finish(found);
            return;
          }
          const v = cursor.value;
          const key = parseKey(v.key);
          if (key) found.push({ key, putTime: v.putTime, size: v.size });
          cursor.continue();
        },
        api,
      );
    });
    return sortInfos(out);
  }

  async remove(keys, before) {
    checkOpen(this.#closed);
    const names = keys.map(keyString);
    checkTime(before);
    if (await injected(this.failAt, 'remove', { keys })) throw injectedError('remove');
    const db = await this.#db();
    // One transaction: a concurrent put of a key lands before it (and refreshes the put time
    // this reads) or after it (and writes the record anew).
    return transact(db, ['records'], 'readwrite', (tx, api) => {
      const os = tx.objectStore('records');
      const removed = [];
      const seen = new Set();
      names.forEach((k, i) => {
        if (keys[i].kind === 'recovery' || seen.has(k)) return;
        seen.add(k);
        request(
          os.get([this.tenant, k]),
          (v) => {
            if (!v || v.putTime >= before) return;
            os.delete([this.tenant, k]);
            removed.push({ kind: keys[i].kind, digest: keys[i].digest });
          },
          api,
        );
      });
      api.finish(removed);
    });
  }

  #channelName() {
    return `langonrock:${this.dbName}:${this.tenant}`;
  }

  #announce() {
    if (typeof BroadcastChannel === 'undefined') return;
    this.#channel ??= this.#openChannel();
    this.#channel.postMessage({ type: 'head' });
  }

  #openChannel() {
    const ch = new BroadcastChannel(this.#channelName());
    ch.onmessage = (ev) => {
      if (ev.data?.type === 'head') for (const f of this.#listeners) f();
    };
    return ch;
  }

  /**
   * Calls `listener()` when another connection to this tenant moved the head. Returns a
   * function that stops the calls.
   */
  onHeadChange(listener) {
    if (typeof BroadcastChannel === 'undefined') return () => {};
    this.#channel ??= this.#openChannel();
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  async close() {
    this.#closed = true;
    this.#listeners.clear();
    this.#channel?.close();
    this.#channel = null;
  }
}
