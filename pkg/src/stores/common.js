// What the three JS stores share: keys, tenants, bytes, failure injection (engine.md §9.1).

import { corruptError, invalidError, storeError } from '../errors.js';

/**
 * Record kinds, in listing order. They mirror the engine's `Kind` (core/src/engine/store.rs):
 * `source`, `revision` and `record` are content addressed (the digest is the SHA-256 of the
 * bytes); `derived` is keyed by a snapshot id plus the compiler version and is replaced by a
 * put; `recovery` keeps a head record set aside by `repair`, which collection never removes.
 */
export const KINDS = Object.freeze(['source', 'revision', 'record', 'derived', 'recovery']);

const HEX64 = /^[0-9a-f]{64}$/;
const TENANT = /^[a-z0-9][a-z0-9_-]{0,63}$/;

/** Whether `s` is 64 lowercase hex characters. */
export function isDigest(s) {
  return typeof s === 'string' && HEX64.test(s);
}

/**
 * Checks a key `{kind, digest}` and returns its text form `<kind>/<digest>`.
 * @returns {string}
 */
export function keyString(key) {
  if (key === null || typeof key !== 'object' || !KINDS.includes(key.kind) || !isDigest(key.digest)) {
    throw invalidError(`invalid store key ${describe(key)}: expected {kind, digest} with kind one of ${KINDS.join(', ')} and a 64-hex digest`);
  }
  return `${key.kind}/${key.digest}`;
}

/** Parses `<kind>/<digest>` into a key, or returns null. */
export function parseKey(text) {
  const slash = typeof text === 'string' ? text.indexOf('/') : -1;
  if (slash < 0) return null;
  const kind = text.slice(0, slash);
  const digest = text.slice(slash + 1);
  return KINDS.includes(kind) && isDigest(digest) ? { kind, digest } : null;
}

/** Whether records of `kind` are addressed by the SHA-256 of their bytes. */
export function isContentAddressed(kind) {
  return kind !== 'derived';
}

function describe(value) {
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
}

/**
 * A tenant id as stores use it: compile.md §10.1's pattern, lower-cased. Hosts validate
 * before they get here; stores check again because the files store builds paths from it.
 */
export function tenantName(tenant) {
  const t = typeof tenant === 'string' ? tenant.toLowerCase() : '';
  if (!TENANT.test(t)) {
    throw invalidError(`invalid tenant id "${typeof tenant === 'string' ? tenant : describe(tenant)}": expected 1-64 chars of [a-z0-9_-]`);
  }
  return t;
}

/** A private copy of `bytes` (a `Uint8Array`), so callers cannot change stored data. */
export function copyBytes(bytes, what = 'record bytes') {
  return checkBytes(bytes, what).slice();
}

/** `bytes` itself, checked as `copyBytes` checks it, for a store that keeps no reference. */
export function checkBytes(bytes, what = 'record bytes') {
  if (!(bytes instanceof Uint8Array)) throw invalidError(`${what} must be a Uint8Array`);
  return bytes;
}

/** Byte equality of two `Uint8Array`s. */
export function sameBytes(a, b) {
  if (a.byteLength !== b.byteLength) return false;
  for (let i = 0; i < a.byteLength; i++) if (a[i] !== b[i]) return false;
  return true;
}

/** Equality of two heads, `null` meaning no head. */
export function sameHead(a, b) {
  if (a === null || b === null) return a === b;
  return sameBytes(a, b);
}

/** The error of a put of different bytes under an existing key (core's MemoryStore words). */
export function conflictingPut(ks) {
  return corruptError(`${ks} already holds different bytes`);
}

/**
 * Failure injection for tests. `failAt(point, detail)` is called at each named point of an
 * operation (see the store modules); a truthy answer (or a promise of one) injects a fault
 * there. The hook may also do other work before it answers, which is how tests interleave a
 * racing writer at an exact step.
 */
export async function injected(failAt, point, detail) {
  if (!failAt) return false;
  return Boolean(await failAt(point, detail));
}

/** The STORE error an injected failure raises. */
export function injectedError(point) {
  return storeError(`injected failure at ${point}`);
}

/** Rejects calls on a closed store. */
export function checkOpen(closed) {
  if (closed) throw storeError('store is closed');
}

/** The SHA-256 of `bytes` as 64 lowercase hex characters (WebCrypto: Node ≥ 20 and browsers). */
export async function sha256Hex(bytes) {
  const d = new Uint8Array(await globalThis.crypto.subtle.digest('SHA-256', bytes));
  let s = '';
  for (const b of d) s += b.toString(16).padStart(2, '0');
  return s;
}

/** Sorts `keys()` entries by kind (in KINDS order), then digest. */
export function sortInfos(infos) {
  return infos.sort((a, b) => KINDS.indexOf(a.key.kind) - KINDS.indexOf(b.key.kind) || (a.key.digest < b.key.digest ? -1 : a.key.digest > b.key.digest ? 1 : 0));
}

/** Checks `remove`'s `before`: a finite number (milliseconds since the epoch). */
export function checkTime(before) {
  if (typeof before !== 'number' || !Number.isFinite(before)) {
    throw invalidError('remove needs `before` as a finite number of milliseconds');
  }
}
