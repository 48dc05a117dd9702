// The package's one error type (js.md §4). Every failure is a real `Error` whose `message` is
// the exact text the docs give and whose `code` is one of docs/README.md §4.4.

/** The error codes of docs/README.md §4.4; the last two come only from a remote connection. */
export const CODES = Object.freeze([
  'INVALID',
  'NOT_FOUND',
  'CONFLICT',
  'INDETERMINATE_COMMIT',
  'CORRUPT',
  'STORE',
  'UNAUTHORIZED',
  'FORBIDDEN',
]);

/**
 * A langonrock failure: `code` is one of {@link CODES}. `INDETERMINATE_COMMIT` errors carry
 * `revision`; a failed precondition carries `reason`; a refused `transact` carries `changes`.
 */
export class LangonrockError extends Error {
  /**
   * @param {string} code
   * @param {string} message
   * @param {{revision?: string, reason?: string, changes?: Array<{index: number, reason: string}>, cause?: unknown}} [extra]
   */
  constructor(code, message, extra = {}) {
    super(message, extra.cause === undefined ? undefined : { cause: extra.cause });
    this.name = 'LangonrockError';
    this.code = code;
    if (extra.revision !== undefined) this.revision = extra.revision;
    if (extra.reason !== undefined) this.reason = extra.reason;
    if (extra.changes !== undefined) this.changes = extra.changes;
  }
}

/** A store failure that changed nothing (engine.md §9.1): code `STORE`. */
export function storeError(message, cause) {
  return new LangonrockError('STORE', message, { cause });
}

/** Stored data found inconsistent: code `CORRUPT`, message `database corruption: …`. */
export function corruptError(detail) {
  return new LangonrockError('CORRUPT', `database corruption: ${detail}`);
}

/** A malformed request: code `INVALID`. */
export function invalidError(message) {
  return new LangonrockError('INVALID', message);
}
