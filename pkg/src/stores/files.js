// The files store for Node (js.md §2, engine.md §9.2 rules 2 and 4): the files layout and its
// protocol as the core defines them once (core/src/layout.rs, docs/records.md, through the
// wasm bindings: names, generations, floor, hint, staging names), so the native binary and
// Node commit to one tenant at once. This module does the file system calls.
//
// A record is renamed into place and its directory fsynced; its modification time is its put
// time, which a put of an existing record refreshes (set from `now()`). The head moves by
// hard-linking a staged file to the next generation (`fs.link` fails when the name exists, so
// the compare-and-swap needs no lock), then fsyncing the heads folder. Nothing is created for a
// tenant before its first put or swap.
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
  filesLayout,
  parseGeneration,
  nextGeneration,
  lostToCollection,
  raisedFloor,
  collectableGeneration,
  stagingName,
  recordPath,
  differentBytes,
} from '../../gen/langonrock_wasm.js';
import {
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

// The core's layout, read once the wasm module is ready (it is not yet while modules load).
let names;
const layout = () => (names ??= Object.freeze(filesLayout()));


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
      return new FilesTenant(join(dataRoot, layout().tenants, tenantName(tenant)), { now, failAt });
    },
    async close() {},
  };
}

// File system errors become STORE errors naming what failed; our own errors pass through.
const fsError = (what, e) => (e instanceof LangonrockError ? e : storeError(`${what}: ${e?.message ?? e}`, e));
const unique = (tag) => stagingName(tag, `${process.pid}-${randomBytes(8).toString('hex')}`);

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


class FilesTenant {
  #closed = false;
  // The last generation this handle saw as the head: where the next search starts.
  #known = 0;

  constructor(dir, { now, failAt }) {
    this.dir = dir;
    this.heads = join(dir, layout().heads);
    this.staging = join(dir, layout().staging);
    this.now = now;
    this.failAt = failAt;
  }

  #path(key) {
    return join(this.dir, recordPath(key.kind, key.digest));
  }

  #generation(g) {
    return join(this.heads, String(g));
  }

  // Writes `bytes` under a unique name in staging/, with modification time `time`, fsynced.
  async #stage(bytes, time, tag) {
    await fsp.mkdir(this.staging, { recursive: true });
    const path = join(this.staging, unique(tag));
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
    for (const n of names) max = Math.max(max, parseGeneration(n));
    return max;
  }

  // The head's generation (0: none). Starts from what this handle last saw, else the hint,
  // and probes upward until a generation is absent; lists heads/ only when the start is
  // missing or was collected.
  async #findGeneration() {
    let g = this.#known;
    if (g === 0 || !(await exists(this.#generation(g)))) {
      g = await this.#readNumber(layout().hint);
      if (g === 0 || !(await exists(this.#generation(g)))) g = await this.#greatestListed();
    }
    if (g === 0) return 0;
    while (await exists(this.#generation(nextGeneration(g)))) g = nextGeneration(g);
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
      return head ? head.bytes : await readOrNull(join(this.dir, layout().legacyHead));
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
          throw corruptError(differentBytes(key.kind, key.digest).replace(/^database corruption: /, ''));
        }
      }
      const dir = join(this.dir, layout().folders[key.kind]);
      await fsp.mkdir(dir, { recursive: true });
      const staged = await this.#stage(data, time, 'record');
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
      staged = await this.#stage(head, this.now(), 'head');
    } catch (e) {
      throw fsError('cannot stage the new head', e);
    }
    const g = nextGeneration(current ? current.generation : 0);
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
        floor = await this.#readNumber(layout().floor);
      } catch {
        return 'indeterminate';
      }
      if (lostToCollection(g, floor)) {
        // The name was free only because collection had removed it: not a swap.
        try {
          await fsp.unlink(this.#generation(g));
        } catch {
          return 'indeterminate';
        }
        return 'conflict';
      }
      this.#known = g;
      await this.#writeNumber(layout().hint, g, false).catch(() => {});
      return 'swapped';
    } finally {
      await fsp.unlink(staged).catch(() => {});
    }
  }

  // Writes heads/<name> with the decimal `n`: staged, fsynced, renamed; heads/ fsynced when
  // `durable`.
  async #writeNumber(name, n, durable) {
    const staged = await this.#stage(new TextEncoder().encode(String(n)), this.now(), name);
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
      for (const kind of layout().kinds) {
        const dir = join(this.dir, layout().folders[kind]);
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
        const aside = join(this.staging, unique('collect'));
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
        touched.add(join(this.dir, layout().folders[key.kind]));
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
    const floor = await this.#readNumber(layout().floor);
    const raised = raisedFloor(current.generation, floor);
    if (raised !== undefined) await this.#writeNumber(layout().floor, raised, true);
    const limit = raised ?? Math.max(floor, current.generation);
    for (const name of await fsp.readdir(this.heads)) {
      const g = parseGeneration(name);
      if (g !== 0 && collectableGeneration(g, limit)) {
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
