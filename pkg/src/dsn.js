// `open(dsn)` (docs/remote.md, js.md §9): a DSN string names an embedded data root (okf:,
// Node only) or a server (okf+http:, okf+https:, and okf+unix: in Node). The DSN grammar is
// core's (`parseDsn`); the Node entry registers what only Node has.

import { parseDsn } from '../gen/langonrock_wasm.js';
import { invalidError } from './errors.js';
import { LIMITS, openRemote, setUnixTransport } from './remote.js';

let embedded = null;
let home = () => undefined;

/**
 * The Node entry's hooks: `unix(socketPath, token, limits)` makes the unix-socket
 * transport, `embedded(dataRoot | null)` the files store of a data root (null: the default),
 * `home()` the home directory that `~` in `okf://~/…` stands for.
 */
export function setDsnHost({ unix, embedded: files, home: homeDir }) {
  setUnixTransport(unix);
  embedded = files;
  home = homeDir;
}

/** The remote bounds: the defaults, with any of `{answerMs, stallMs, maxBody}` replaced. */
function limitsOf(given) {
  if (given === undefined) return LIMITS;
  if (given === null || typeof given !== 'object') throw invalidError('open: limits must be {answerMs?, stallMs?, maxBody?}');
  const out = { ...LIMITS };
  for (const k of Object.keys(LIMITS)) {
    if (given[k] === undefined) continue;
    if (!Number.isSafeInteger(given[k]) || given[k] <= 0) throw invalidError(`open: limits.${k} must be a positive integer`);
    out[k] = given[k];
  }
  return Object.freeze(out);
}

/** Opens a DSN; `openLocal` is the package's `open({tenant, store, readOnly, now})`. */
export async function openDsn(dsn, options, openLocal) {
  const { readOnly = false, now, limits } = options ?? {};
  const target = parseDsn(dsn, globalThis.process?.platform === 'win32', home());
  if (target.kind === 'remote') return openRemote(target, { readOnly, limits: limitsOf(limits) });
  if (!embedded) {
    throw invalidError('okf: needs Node: in a browser, open({tenant, store: indexedDb({name})})');
  }
  return openLocal({ tenant: target.tenant, store: embedded(target.data), readOnly, ...(now ? { now } : {}) });
}
