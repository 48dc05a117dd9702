// The memory store (js.md §2, engine.md §9.2 rule 1): no persistence, and the strictest
// store, so that the conformance suite catches a host that relies on leniency.
//
// Strict checks: a content-addressed put whose bytes do not hash to its key, and different
// bytes under an existing content-addressed key, are CORRUPT errors; a head that is not a
// head record, or reaches a record never put (or removed), is refused with a STORE error and
// the head stays. The messages are those of core's MemoryStore.
//
// Failure injection (`failAt(point, detail)`, see common.js): `readHead`, `get` (getMany
// too), `put` (detail {key}): the call throws STORE and changes nothing. `swap`: throws
// before anything. `swap:mid`: throws after the head was compared and found equal, head
// unchanged. `swap:lost`: answers `indeterminate`, head unchanged. `swap:after`: the head
// moves, then answers `indeterminate`. `keys`, `remove`: throw STORE.

import {
  checkBytes,
  checkOpen,
  conflictingPut,
  copyBytes,
  injected,
  injectedError,
  isContentAddressed,
  keyString,
  parseKey,
  sameBytes,
  sameHead,
  sha256Hex,
  sortInfos,
  tenantName,
  checkTime,
} from './common.js';
import { corruptError, invalidError, storeError } from '../errors.js';
import { WasmHeadCheck } from '../../gen/langonrock_wasm.js';
import { handOver } from '../internal.js';

const DATA = Symbol('langonrock memory data');

/**
 * A memory store. Every `open(tenant)` of one store object sees the same data, as
 * connections to one data root would; `sharing: otherMemoryStore` makes a second store object
 * (with its own options) over the first one's data, as a second process would open it.
 * @param {{now?: () => number, failAt?: (point: string, detail?: object) => unknown, strict?: boolean, sharing?: object}} [options]
 */
export function memory(options = {}) {
  const { now = Date.now, failAt, strict = true, sharing } = options;
  if (sharing !== undefined && !sharing?.[DATA]) throw invalidError('memory store: `sharing` must be another memory store');
  const tenants = sharing ? sharing[DATA] : new Map();
  const data = (t) => {
    let d = tenants.get(t);
    if (!d) {
      // `reach` is the core's head check (what earlier checks found complete), made lazily:
      // the wasm module is ready only once the package's entry has loaded.
      d = { head: null, records: new Map(), reach: null };
      tenants.set(t, d);
    }
    return d;
  };
  return {
    kind: 'memory',
    [DATA]: tenants,
    async open(tenant) {
      const t = tenantName(tenant);
      return new MemoryTenant(t, data(t), { now, failAt, strict });
    },
    async close() {},
  };
}

class MemoryTenant {
  #closed = false;
  constructor(tenant, data, { now, failAt, strict }) {
    this.tenant = tenant;
    this.data = data;
    this.now = now;
    this.failAt = failAt;
    this.strict = strict;
  }

  async readHead() {
    checkOpen(this.#closed);
    if (await injected(this.failAt, 'readHead')) throw injectedError('readHead');
    return this.data.head === null ? null : this.data.head.slice();
  }

  async get(key) {
    return (await this.getMany([key]))[0];
  }

  async getMany(keys) {
    checkOpen(this.#closed);
    const names = keys.map(keyString);
    if (await injected(this.failAt, 'get', { keys })) throw injectedError('get');
    return names.map((k) => {
      const r = this.data.records.get(k);
      return r ? r.bytes.slice() : null;
    });
  }

  async put(key, bytes) {
    return this.#put(key, copyBytes(bytes));
  }

  /**
   * `put` of bytes no one else holds (a commit's records, fresh from the module: src/host.js
   * `storeCommit`), kept as they are instead of copied.
   */
  async [handOver](key, bytes) {
    return this.#put(key, checkBytes(bytes));
  }

  async #put(key, copy) {
    checkOpen(this.#closed);
    const k = keyString(key);
    if (await injected(this.failAt, 'put', { key })) throw injectedError('put');
    if (this.strict && isContentAddressed(key.kind) && (await sha256Hex(copy)) !== key.digest) {
      throw corruptError(`${k} put with bytes of another digest`);
    }
    const old = this.data.records.get(k);
    if (old && !sameBytes(old.bytes, copy) && isContentAddressed(key.kind)) throw conflictingPut(k);
    this.data.records.set(k, { bytes: old && sameBytes(old.bytes, copy) ? old.bytes : copy, putTime: this.now() });
  }

  async swapHead(expected, next) {
    checkOpen(this.#closed);
    const exp = expected === null ? null : copyBytes(expected, 'expected head');
    const head = copyBytes(next, 'new head');
    if (await injected(this.failAt, 'swap')) throw injectedError('swap');
    const mid = await injected(this.failAt, 'swap:mid');
    const lost = await injected(this.failAt, 'swap:lost');
    const after = await injected(this.failAt, 'swap:after');
    // From here on nothing awaits: the compare and the set are one step.
    if (!sameHead(this.data.head, exp)) return 'conflict';
    if (this.strict) {
      this.data.reach ??= new WasmHeadCheck();
      const refused = this.data.reach.check(head, (k) => this.data.records.get(k)?.bytes);
      if (refused) throw storeError(refused);
    }
    if (mid) throw injectedError('swap:mid');
    if (lost) return 'indeterminate';
    this.data.head = head;
    return after ? 'indeterminate' : 'swapped';
  }

  async keys() {
    checkOpen(this.#closed);
    if (await injected(this.failAt, 'keys')) throw injectedError('keys');
    const out = [];
    for (const [k, r] of this.data.records) out.push({ key: parseKey(k), putTime: r.putTime, size: r.bytes.byteLength });
    return sortInfos(out);
  }

  async remove(keys, before) {
    checkOpen(this.#closed);
    const names = keys.map(keyString);
    checkTime(before);
    if (await injected(this.failAt, 'remove', { keys })) throw injectedError('remove');
    const removed = [];
    for (let i = 0; i < names.length; i++) {
      const r = this.data.records.get(names[i]);
      if (!r || keys[i].kind === 'recovery' || r.putTime >= before) continue;
      this.data.records.delete(names[i]);
      removed.push({ kind: keys[i].kind, digest: keys[i].digest });
    }
    if (removed.length) this.data.reach?.forget();
    return removed;
  }

  async close() {
    this.#closed = true;
  }
}
