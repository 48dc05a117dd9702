// The files store for Node (js.md §2, engine.md §9.2 rules 2 and 4): the layout and protocol
// of the native binary's file store, so both runtimes can commit to one tenant at once.
//
// Layout of a tenant, `<dataRoot>/tenants/<tenant>/`:
//   sources/<hex>  revisions/<hex>  records/<hex>  derived/<hex>  recovery/<hex>
//   heads/<g>      the head record of generation g (decimal, from 1, no leading zeros);
//                  the greatest g is the head, none means no head
//   heads/floor    generations below it may have been collected (decimal)
//   heads/hint     a recent generation, where finding the head starts (decimal)
//   staging/       every file is written here first under a unique name and fsynced
//
// A record is renamed into place and its directory fsynced; its modification time is its put
// time, which a put of an existing record refreshes (set from `now()`). The head moves by
// hard-linking a staged file to heads/<g+1> (`fs.link` fails when the name exists, so the
// compare-and-swap needs no lock), then fsyncing heads/. Nothing is created for a tenant
// before its first put or swap.
//
// Failure injection (`failAt(point, detail)`, see common.js): `readHead`, `get`, `put`
// (detail {key}), `keys`, `remove`: the call throws STORE and changes nothing. `swap`: throws
// before anything. `swap:mid` (detail {generation}): the new head is staged and fsynced, then
// the swap throws STORE before the link (a hook answering false here can interleave another
// writer at this exact step). `swap:lost`: the link is not made and the swap answers
// `indeterminate`, as a link error other than "exists" would. `swap:after`: the link is made,
// then the swap answers `indeterminate`, as a failed fsync of heads/ would.

import { promises as fsp } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { LangonrockError, corruptError, invalidError, storeError } from '../errors.js';
import {
  KINDS,
  checkOpen,
  checkTime,
  copyBytes,
  injected,
  injectedError,
  isContentAddressed,
  isDigest,
  keyString,
  sameBytes,
  sameHead,
  sortInfos,
  tenantName,
} from './common.js';

/** The folder of each record kind under the tenant directory (engine.md §9.2 rule 2). */
export const FOLDERS = Object.freeze({
  source: 'sources',
  revision: 'revisions',
  record: 'records',
  derived: 'derived',
  recovery: 'recovery',
});

const GENERATION = /^[1-9][0-9]*$/;
// Errors from fsync on a directory that mean "this platform or file system cannot", not
// "the data is not durable" (Windows cannot open a directory for fsync at all).
const NO_DIRECTORY_SYNC = new Set(['EISDIR', 'EPERM', 'EINVAL', 'EBADF', 'ENOTSUP', 'EACCES']);

/**
 * A files store over `dataRoot`, shared with the native binary.
 * @param {{dataRoot: string, now?: () => number, failAt?: (point: string, detail?: object) => unknown}} options
 */
export function files(options) {
  const { dataRoot, now = Date.now, failAt } = options ?? {};
  if (typeof dataRoot !== 'string' || dataRoot === '') {
    throw invalidError('files store needs a dataRoot path');
  }
  return {
    kind: 'files',
    dataRoot,
    async open(tenant) {
      return new FilesTenant(join(dataRoot, 'tenants', tenantName(tenant)), { now, failAt });
    },
    async close() {},
  };
}

// File system errors become STORE errors naming what failed; our own errors pass through.
const fsError = (what, e) => (e instanceof LangonrockError ? e : storeError(`${what}: ${e?.message ?? e}`, e));
const unique = () => `${process.pid}-${randomBytes(8).toString('hex')}`;

async function readOrNull(path) {
  try {
    return new Uint8Array(await fsp.readFile(path));
  } catch (e) {
    if (e.code === 'ENOENT' || e.code === 'ENOTDIR') return null;
    throw e;
  }
}

async function exists(path) {
  try {
    await fsp.lstat(path);
    return true;
  } catch (e) {
    if (e.code === 'ENOENT' || e.code === 'ENOTDIR') return false;
    throw e;
  }
}

async function syncDirectory(dir) {
  let fh;
  try {
    fh = await fsp.open(dir, 'r');
  } catch (e) {
    if (NO_DIRECTORY_SYNC.has(e.code)) return;
    throw e;
  }
  try {
    await fh.sync();
  } catch (e) {
    if (!NO_DIRECTORY_SYNC.has(e.code)) throw e;
  } finally {
    await fh.close();
  }
}

// A record's put time: its modification time in whole milliseconds, as the native store
// reads it.
function putTimeOf(st) {
  return Number(st.mtimeNs / 1000000n);
}

// Sets a file's modification time to the put time `ms`. Node passes times as a float of
// seconds, off by up to a microsecond either way, so aim a quarter millisecond in: the
// whole milliseconds read back are exactly `ms`.
const fileTime = (ms) => (ms + 0.25) / 1000;

function parseGeneration(text) {
  const t = text.trim();
  return GENERATION.test(t) ? Number(t) : 0;
}

class FilesTenant {
  #closed = false;
  // The last generation this handle saw as the head: where the next search starts.
  #known = 0;

  constructor(dir, { now, failAt }) {
    this.dir = dir;
    this.heads = join(dir, 'heads');
    this.staging = join(dir, 'staging');
    this.now = now;
    this.failAt = failAt;
  }

  #path(key) {
    return join(this.dir, FOLDERS[key.kind], key.digest);
  }

  #generation(g) {
    return join(this.heads, String(g));
  }

  // Writes `bytes` under a unique name in staging/, with modification time `time`, fsynced.
  async #stage(bytes, time) {
    await fsp.mkdir(this.staging, { recursive: true });
    const path = join(this.staging, `${unique()}.tmp`);
    const fh = await fsp.open(path, 'wx');
    try {
      await fh.writeFile(bytes);
      await fh.utimes(fileTime(time), fileTime(time));
      await fh.sync();
    } catch (e) {
      await fh.close().catch(() => {});
      await fsp.unlink(path).catch(() => {});
      throw e;
    }
    await fh.close();
    return path;
  }

  async #readNumber(name) {
    const bytes = await readOrNull(join(this.heads, name));
    return bytes ? parseGeneration(new TextDecoder().decode(bytes)) : 0;
  }

  async #greatestListed() {
    let names;
    try {
      names = await fsp.readdir(this.heads);
    } catch (e) {
      if (e.code === 'ENOENT' || e.code === 'ENOTDIR') return 0;
      throw e;
    }
    let max = 0;
    for (const n of names) if (GENERATION.test(n)) max = Math.max(max, Number(n));
    return max;
  }

  // The head's generation (0: none). Starts from what this handle last saw, else the hint,
  // and probes upward until a generation is absent; lists heads/ only when the start is
  // missing or was collected.
  async #findGeneration() {
    let g = this.#known;
    if (g === 0 || !(await exists(this.#generation(g)))) {
      g = await this.#readNumber('hint');
      if (g === 0 || !(await exists(this.#generation(g)))) g = await this.#greatestListed();
    }
    if (g === 0) return 0;
    while (await exists(this.#generation(g + 1))) g++;
    return g;
  }

  // The head as {generation, bytes}, or null. A generation collected between finding it and
  // reading it means a newer one exists: find again.
  async #current() {
    for (let attempt = 0; attempt < 16; attempt++) {
      const g = await this.#findGeneration();
      if (g === 0) {
        this.#known = 0;
        return null;
      }
      const bytes = await readOrNull(this.#generation(g));
      if (bytes) {
        this.#known = g;
        return { generation: g, bytes };
      }
      this.#known = 0;
    }
    throw storeError(`the head of ${this.dir} kept moving while it was read`);
  }

  async readHead() {
    checkOpen(this.#closed);
    if (await injected(this.failAt, 'readHead')) throw injectedError('readHead');
    try {
      const head = await this.#current();
      // A tenant of the reference implementation keeps its head in HEAD: hand its bytes over,
      // and the engine refuses them as another format (engine.md §9.1 rule 1), as the native
      // store does.
      return head ? head.bytes : await readOrNull(join(this.dir, 'HEAD'));
    } catch (e) {
      throw fsError('cannot read the head', e);
    }
  }

  async get(key) {
    return (await this.getMany([key]))[0];
  }

  async getMany(keys) {
    checkOpen(this.#closed);
    keys.forEach(keyString);
    if (await injected(this.failAt, 'get', { keys })) throw injectedError('get');
    try {
      return await Promise.all(keys.map((k) => readOrNull(this.#path(k))));
    } catch (e) {
      throw fsError('cannot read a record', e);
    }
  }

  async put(key, bytes) {
    checkOpen(this.#closed);
    const ks = keyString(key);
    const data = copyBytes(bytes);
    if (await injected(this.failAt, 'put', { key })) throw injectedError('put');
    const path = this.#path(key);
    const time = this.now();
    try {
      const old = await readOrNull(path);
      if (old) {
        if (sameBytes(old, data)) {
          // Refresh the put time. A record collected meanwhile is written anew below.
          try {
            await fsp.utimes(path, fileTime(time), fileTime(time));
            return;
          } catch (e) {
            if (e.code !== 'ENOENT') throw e;
          }
        } else if (isContentAddressed(key.kind)) {
          // The native store's words, so both runtimes report it alike.
          throw corruptError(`${FOLDERS[key.kind]}/${key.digest} holds different bytes than its key`);
        }
      }
      const dir = join(this.dir, FOLDERS[key.kind]);
      await fsp.mkdir(dir, { recursive: true });
      const staged = await this.#stage(data, time);
      try {
        await fsp.rename(staged, path);
      } catch (e) {
        await fsp.unlink(staged).catch(() => {});
        throw e;
      }
      await syncDirectory(dir);
    } catch (e) {
      throw fsError(`cannot put ${ks}`, e);
    }
  }

  async swapHead(expected, next) {
    checkOpen(this.#closed);
    const exp = expected === null ? null : copyBytes(expected, 'expected head');
    const head = copyBytes(next, 'new head');
    if (await injected(this.failAt, 'swap')) throw injectedError('swap');
    // Before the link every failure is plain: the head did not move.
    let current, staged;
    try {
      current = await this.#current();
      if (!sameHead(current ? current.bytes : null, exp)) return 'conflict';
      await fsp.mkdir(this.heads, { recursive: true });
      staged = await this.#stage(head, this.now());
    } catch (e) {
      throw fsError('cannot stage the new head', e);
    }
    const g = (current ? current.generation : 0) + 1;
    try {
      if (await injected(this.failAt, 'swap:mid', { generation: g })) throw injectedError('swap:mid');
      if (await injected(this.failAt, 'swap:lost', { generation: g })) return 'indeterminate';
      try {
        await fsp.link(staged, this.#generation(g));
      } catch (e) {
        return e.code === 'EEXIST' ? 'conflict' : 'indeterminate';
      }
      // The head may have moved from here on.
      try {
        await syncDirectory(this.heads);
      } catch {
        return 'indeterminate';
      }
      if (await injected(this.failAt, 'swap:after', { generation: g })) return 'indeterminate';
      let floor;
      try {
        floor = await this.#readNumber('floor');
      } catch {
        return 'indeterminate';
      }
      if (g < floor) {
        // The name was free only because collection had removed it: not a swap.
        try {
          await fsp.unlink(this.#generation(g));
        } catch {
          return 'indeterminate';
        }
        return 'conflict';
      }
      this.#known = g;
      await this.#writeNumber('hint', g, false).catch(() => {});
      return 'swapped';
    } finally {
      await fsp.unlink(staged).catch(() => {});
    }
  }

  // Writes heads/<name> with the decimal `n`: staged, fsynced, renamed; heads/ fsynced when
  // `durable`.
  async #writeNumber(name, n, durable) {
    const staged = await this.#stage(new TextEncoder().encode(String(n)), this.now());
    try {
      await fsp.rename(staged, join(this.heads, name));
    } catch (e) {
      await fsp.unlink(staged).catch(() => {});
      throw e;
    }
    if (durable) await syncDirectory(this.heads);
  }

  async keys() {
    checkOpen(this.#closed);
    if (await injected(this.failAt, 'keys')) throw injectedError('keys');
    const out = [];
    try {
      for (const kind of KINDS) {
        const dir = join(this.dir, FOLDERS[kind]);
        let names;
        try {
          names = await fsp.readdir(dir);
        } catch (e) {
          if (e.code === 'ENOENT' || e.code === 'ENOTDIR') continue;
          throw e;
        }
        for (const name of names) {
          if (!isDigest(name)) continue;
          let st;
          try {
            st = await fsp.stat(join(dir, name), { bigint: true });
          } catch (e) {
            if (e.code === 'ENOENT') continue;
            throw e;
          }
          if (!st.isFile()) continue;
          out.push({ key: { kind, digest: name }, putTime: putTimeOf(st), size: Number(st.size) });
        }
      }
    } catch (e) {
      throw fsError('cannot list records', e);
    }
    return sortInfos(out);
  }

  async remove(keys, before) {
    checkOpen(this.#closed);
    keys.forEach(keyString);
    checkTime(before);
    if (await injected(this.failAt, 'remove', { keys })) throw injectedError('remove');
    if (!(await exists(this.dir))) return [];
    const removed = [];
    const touched = new Set();
    try {
      await fsp.mkdir(this.staging, { recursive: true });
      const seen = new Set();
      for (const key of keys) {
        const ks = keyString(key);
        if (key.kind === 'recovery' || seen.has(ks)) continue;
        seen.add(ks);
        const path = this.#path(key);
        // Move the record aside, then decide on its put time: a put racing this either
        // refreshed it before the move (it goes back) or writes it anew after (it stays).
        const aside = join(this.staging, `${unique()}.rm`);
        try {
          await fsp.rename(path, aside);
        } catch (e) {
          if (e.code === 'ENOENT') continue;
          throw e;
        }
        const st = await fsp.stat(aside, { bigint: true });
        if (putTimeOf(st) >= before) {
          try {
            await fsp.link(aside, path);
          } catch (e) {
            if (e.code !== 'EEXIST') throw e;
          }
          await fsp.unlink(aside);
          continue;
        }
        await fsp.unlink(aside);
        touched.add(join(this.dir, FOLDERS[key.kind]));
        removed.push({ kind: key.kind, digest: key.digest });
      }
      for (const dir of touched) await syncDirectory(dir);
      await this.#collectLeftovers(before);
    } catch (e) {
      throw fsError('cannot remove records', e);
    }
    return removed;
  }

  // Drops staging files older than `before`, and head generations below the current one:
  // first heads/floor is raised to the current generation (staged, fsynced, renamed), so a
  // writer whose link lands on a collected name sees it and reports a conflict.
  async #collectLeftovers(before) {
    for (const name of await fsp.readdir(this.staging)) {
      const path = join(this.staging, name);
      try {
        const st = await fsp.stat(path, { bigint: true });
        if (putTimeOf(st) < before) await fsp.unlink(path);
      } catch (e) {
        if (e.code !== 'ENOENT') throw e;
      }
    }
    const current = await this.#current();
    if (!current || current.generation < 2) return;
    const floor = await this.#readNumber('floor');
    if (current.generation > floor) await this.#writeNumber('floor', current.generation, true);
    const limit = Math.max(floor, current.generation);
    for (const name of await fsp.readdir(this.heads)) {
      if (GENERATION.test(name) && Number(name) < limit) {
        await fsp.unlink(join(this.heads, name)).catch((e) => {
          if (e.code !== 'ENOENT') throw e;
        });
      }
    }
    await syncDirectory(this.heads);
  }

  async close() {
    this.#closed = true;
  }
}
