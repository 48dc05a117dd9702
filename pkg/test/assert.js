// A tiny assert that runs unchanged in Node and in a browser page, for the shared suites.

export class AssertionError extends Error {
  constructor(message) {
    super(message);
    this.name = 'AssertionError';
  }
}

const show = (v) => {
  if (v instanceof Uint8Array) return `bytes(${v.byteLength}) ${JSON.stringify(new TextDecoder().decode(v).slice(0, 120))}`;
  try {
    return JSON.stringify(v);
  } catch {
    return String(v);
  }
};

export function ok(value, message = 'expected a truthy value') {
  if (!value) throw new AssertionError(message);
}

export function equal(actual, expected, message) {
  if (!Object.is(actual, expected)) {
    throw new AssertionError(`${message ? message + ': ' : ''}expected ${show(expected)}, got ${show(actual)}`);
  }
}

/** Structural equality for JSON-like values and Uint8Arrays. */
export function deepEqual(actual, expected, message) {
  if (!same(actual, expected)) {
    throw new AssertionError(`${message ? message + ': ' : ''}expected ${show(expected)}, got ${show(actual)}`);
  }
}

function same(a, b) {
  if (Object.is(a, b)) return true;
  if (a instanceof Uint8Array || b instanceof Uint8Array) {
    if (!(a instanceof Uint8Array && b instanceof Uint8Array) || a.byteLength !== b.byteLength) return false;
    for (let i = 0; i < a.byteLength; i++) if (a[i] !== b[i]) return false;
    return true;
  }
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  const ka = Object.keys(a);
  const kb = Object.keys(b);
  if (ka.length !== kb.length) return false;
  return ka.every((k) => Object.prototype.hasOwnProperty.call(b, k) && same(a[k], b[k]));
}

/** Awaits `promise` and checks that it rejects with `code` (and a message starting `prefix`). */
export async function rejects(promise, code, prefix) {
  let error;
  try {
    await promise;
  } catch (e) {
    error = e;
  }
  if (!error) throw new AssertionError(`expected a rejection with code ${code}, but it resolved`);
  if (!(error instanceof Error)) throw new AssertionError(`expected a real Error, got ${show(error)}`);
  if (error.code !== code) throw new AssertionError(`expected code ${code}, got ${error.code}: ${error.message}`);
  if (prefix !== undefined && !error.message.startsWith(prefix)) {
    throw new AssertionError(`expected a message starting ${show(prefix)}, got ${show(error.message)}`);
  }
  return error;
}
