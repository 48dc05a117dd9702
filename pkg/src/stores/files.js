// The files store for Node (js.md §2, engine.md §9.2 rules 2 and 4): the files layout and its
// protocol as the core defines them once (core/src/layout.rs, docs/records.md, through the
// wasm bindings: names, generations, floor, hint, staging names), so the native binary and
// Node commit to one tenant at once. This module does the file system calls.
//
// A commit's sources, revisions and records are one pack (packs/<name>, core/src/pack.rs):
// staged, fsynced, renamed into place, packs/ fsynced. Derived and recovery records are files
// of their own. A file's modification time is the put time of the records it holds, which a
// put of a record it holds refreshes (set from `now()`). The one-file-per-record folders of
// data roots written before packs are read and collected, never written. The head moves by
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
import { dirname, join } from 'node:path';
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
  collectableStaging,
  isPackName,
  packable,
  packHead,
  packHeadLength,
  packIndex,
  packsToMerge,
  packPath,
} from '../../gen/langonrock_wasm.js';
import {
  checkOpen,
  checkTime,
  checkBytes,
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

// Writes every buffer of `pieces` at the file's current position (writev, then what it left).
async function writeAll(fh, pieces) {
  let { bytesWritten } = await fh.writev(pieces);
  for (const p of pieces) {
    if (bytesWritten >= p.byteLength) {
      bytesWritten -= p.byteLength;
      continue;
    }
    await fh.write(p, bytesWritten);
    bytesWritten = 0;
  }
}

// Refreshes the put time of a file holding records a put names again; false when the file is
// gone (collection moved it away meanwhile), so they must be written anew.
async function refresh(path, time) {
  try {
    await fsp.utimes(path, fileTime(time), fileTime(time));
  } catch (e) {
    if (e.code === 'ENOENT') return false;
    throw e;
  }
  return exists(path);
}

// Creates `dir` (and missing parents), each new one made durable in its parent.
async function mkdirDurable(dir) {
  if (await exists(dir)) return;
  const missing = [];
  for (let d = dir; !(await exists(d)); d = dirname(d)) {
    missing.push(d);
    if (dirname(d) === d) break;
  }
  await fsp.mkdir(dir, { recursive: true });
  for (const d of missing.reverse()) await syncDirectory(dirname(d));
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


// One pack as its index says: {name, path, len, keys: Map<"<kind>/<digest>", {offset, len}>}.
async function openPack(dir, name) {
  const path = join(dir, name);
  let fh;
  try {
    fh = await fsp.open(path, 'r');
  } catch (e) {
    if (e.code === 'ENOENT') return null;
    throw e;
  }
  try {
    const { size } = await fh.stat();
    const n = Math.min(size, layout().packHeader);
    const header = new Uint8Array(n);
    if (n > 0) await fh.read(header, 0, n, 0);
    const headLen = packHeadLength(name, header, size);
    const head = new Uint8Array(headLen);
    await fh.read(head, 0, headLen, 0);
    const ix = packIndex(name, head, size);
    const keys = new Map();
    for (let i = 0; i < ix.kinds.length; i++) {
      keys.set(`${ix.kinds[i]}/${ix.digests[i]}`, { offset: ix.offsets[i], len: ix.lens[i] });
    }
    return { name, path, len: size, keys };
  } finally {
    await fh.close();
  }
}

// Reads the records `wanted` (entries of one pack, each {offset, len}) with one read of the
// span they cover; the results are views of that buffer.
async function readFromPack(pack, wanted) {
  let lo = Infinity;
  let hi = 0;
  for (const e of wanted) {
    lo = Math.min(lo, e.offset);
    hi = Math.max(hi, e.offset + e.len);
  }
  const buf = new Uint8Array(Math.max(0, hi - lo));
  const fh = await fsp.open(pack.path, 'r');
  try {
    let done = 0;
    while (done < buf.byteLength) {
      const { bytesRead } = await fh.read(buf, done, buf.byteLength - done, lo + done);
      if (bytesRead === 0) throw corruptError(`${packPath(pack.name)} is truncated`);
      done += bytesRead;
    }
  } finally {
    await fh.close();
  }
  return wanted.map((e) => buf.subarray(e.offset - lo, e.offset - lo + e.len));
}

class FilesTenant {
  // Derived records leave the texts to this store: its source records are read from the
  // packs as they are (docs/records.md "Derived record").
  sourcesInPlace = true;
  #closed = false;
  // The last generation this handle saw as the head: where the next search starts.
  #known = 0;
  // The packs this handle knows (name → pack), which one holds each key, and the corruption
  // messages of packs that failed their checks; null until packs/ is first listed.
  #packs = null;
  #byKey = new Map();
  #bad = new Map();

  constructor(dir, { now, failAt }) {
    this.dir = dir;
    this.heads = join(dir, layout().heads);
    this.staging = join(dir, layout().staging);
    this.packsDir = join(dir, layout().packs);
    this.now = now;
    this.failAt = failAt;
  }

  #path(key) {
    return join(this.dir, recordPath(key.kind, key.digest));
  }

  // Which of `kinds` have a folder of records in files of their own (the layout before
  // packs), looked at once per call, so a tenant without them costs no lookup per record.
  async #looseKinds(kinds) {
    const found = new Set();
    for (const kind of new Set(kinds)) {
      if (await exists(join(this.dir, layout().folders[kind]))) found.add(kind);
    }
    return found;
  }

  #generation(g) {
    return join(this.heads, String(g));
  }

  // Lists packs/ again: opens the packs it does not know, forgets those that are gone.
  async #rescan() {
    let names;
    try {
      names = (await fsp.readdir(this.packsDir)).filter((n) => isPackName(n));
    } catch (e) {
      if (e.code !== 'ENOENT' && e.code !== 'ENOTDIR') throw e;
      names = [];
    }
    const packs = this.#packs ?? new Map();
    for (const n of [...packs.keys()]) if (!names.includes(n)) packs.delete(n);
    for (const n of [...this.#bad.keys()]) if (!names.includes(n)) this.#bad.delete(n);
    for (const n of names) {
      if (packs.has(n)) continue;
      try {
        const p = await openPack(this.packsDir, n);
        if (p) packs.set(n, p);
      } catch (e) {
        if (e?.code === 'CORRUPT') this.#bad.set(n, corruptError(String(e.message).replace(/^database corruption: /, '')));
        else throw e;
      }
    }
    this.#packs = packs;
    this.#reindex();
  }

  #reindex() {
    this.#byKey = new Map();
    for (const p of this.#packs.values()) for (const k of p.keys.keys()) this.#byKey.set(k, p);
  }

  async #ensurePacks() {
    if (this.#packs === null) await this.#rescan();
  }

  // Writes `bytes` under a unique name in staging/, with modification time `time`, fsynced.
  async #stage(bytes, time, tag) {
    return this.#stagePieces([bytes], time, tag);
  }

  async #stagePieces(pieces, time, tag) {
    await fsp.mkdir(this.staging, { recursive: true });
    const path = join(this.staging, unique(tag));
    const fh = await fsp.open(path, 'wx');
    try {
      // writev takes at most IOV_MAX (1024) buffers at once.
      for (let i = 0; i < pieces.length; i += 1024) await writeAll(fh, pieces.slice(i, i + 1024));
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

  // Writes `records` ({key, bytes}) as one pack, durably: staged and fsynced, renamed into
  // packs/, packs/ fsynced. Returns the pack.
  async #writePack(records, time) {
    let list = '';
    for (const r of records) list += `${r.ks ?? keyString(r.key)}\n`;
    const h = packHead(
      list,
      records.map((r) => r.bytes.byteLength),
    );
    await mkdirDurable(this.packsDir);
    const staged = await this.#stagePieces([h.head, ...Array.from(h.order, (i) => records[i].bytes)], time, 'pack');
    const target = join(this.packsDir, h.name);
    try {
      await fsp.rename(staged, target);
    } catch (e) {
      await fsp.unlink(staged).catch(() => {});
      throw e;
    }
    await syncDirectory(this.packsDir);
    // Its index as openPack would read it back, from the head the core made.
    const keys = new Map();
    h.order.forEach((i, j) => {
      const r = records[i];
      keys.set(r.ks ?? keyString(r.key), { offset: h.offsets[j], len: r.bytes.byteLength });
    });
    return { name: h.name, path: target, len: h.len, keys };
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

  // Reads from the packs this handle knows, then from files of their own; a record still
  // missing makes it list packs/ again. An absent record of a pack's kind while a pack failed
  // its checks is that pack's corruption (it may be in it).
  async getMany(keys) {
    checkOpen(this.#closed);
    keys.forEach(keyString);
    if (await injected(this.failAt, 'get', { keys })) throw injectedError('get');
    try {
      await this.#ensurePacks();
      const out = new Array(keys.length).fill(null);
      const fromPacks = async (indexes) => {
        const byPack = new Map();
        const rest = [];
        for (const i of indexes) {
          const ks = keyString(keys[i]);
          const p = this.#byKey.get(ks);
          if (!p) {
            rest.push(i);
            continue;
          }
          if (!byPack.has(p)) byPack.set(p, []);
          byPack.get(p).push(i);
        }
        for (const [p, list] of byPack) {
          const got = await readFromPack(p, list.map((i) => p.keys.get(keyString(keys[i]))));
          list.forEach((i, j) => (out[i] = got[j]));
        }
        return rest;
      };
      const rest = await fromPacks(keys.map((_, i) => i));
      const looseKinds = await this.#looseKinds(rest.map((i) => keys[i].kind));
      const loose = await Promise.all(rest.map((i) => (looseKinds.has(keys[i].kind) ? readOrNull(this.#path(keys[i])) : null)));
      const missing = [];
      rest.forEach((i, j) => {
        out[i] = loose[j];
        if (!loose[j] && packable(keys[i].kind)) missing.push(i);
      });
      if (missing.length > 0) {
        await this.#rescan();
        const still = await fromPacks(missing);
        if (still.length > 0 && this.#bad.size > 0) throw this.#bad.values().next().value;
      }
      return out;
    } catch (e) {
      throw fsError('cannot read a record', e);
    }
  }

  async put(key, bytes) {
    return this.putMany([{ key, bytes }]);
  }

  // Puts a commit's records with one pack for the new ones (engine.md §9.2 rule 2), as the
  // native store does: a record the store holds only gets its file's put time refreshed;
  // different bytes under an existing content-addressed key are corruption; derived and
  // recovery records are files of their own; a full tier of small packs is merged into the
  // new pack (core's packsToMerge).
  async putMany(records) {
    checkOpen(this.#closed);
    // The bytes are on disk before this resolves and no reference to them is kept, so they
    // are written as given, not copied (the caller must leave them as they are meanwhile).
    const items = records.map(({ key, bytes }) => ({ key, ks: keyString(key), bytes: checkBytes(bytes) }));
    for (const it of items) if (await injected(this.failAt, 'put', { key: it.key })) throw injectedError('put');
    const time = this.now();
    try {
      await this.#ensurePacks();
      const fresh = [];
      const single = [];
      const touch = new Map();
      const looseKinds = await this.#looseKinds(items.map((it) => it.key.kind));
      for (const it of items) {
        if (!packable(it.key.kind)) {
          single.push(it);
          continue;
        }
        const p = this.#byKey.get(it.ks);
        if (p) {
          const [old] = await readFromPack(p, [p.keys.get(it.ks)]);
          if (!sameBytes(old, it.bytes)) throw this.#different(it.key);
          if (!touch.has(p.path)) touch.set(p.path, []);
          touch.get(p.path).push(it);
          continue;
        }
        if (!looseKinds.has(it.key.kind)) {
          fresh.push(it);
          continue;
        }
        const path = this.#path(it.key);
        const old = await readOrNull(path);
        if (old && !sameBytes(old, it.bytes)) throw this.#different(it.key);
        if (old && (await refresh(path, time))) continue;
        fresh.push(it);
      }
      for (const [path, list] of touch) if (!(await refresh(path, time))) fresh.push(...list);
      if (fresh.length > 0) await this.#addPack(fresh, time);
      for (const it of single) await this.#putSingle(it, time);
    } catch (e) {
      throw fsError(`cannot put ${items.map((it) => it.ks).join(', ')}`, e);
    }
  }

  #different(key) {
    // The native store's words, so both runtimes report it alike.
    return corruptError(differentBytes(key.kind, key.digest).replace(/^database corruption: /, ''));
  }

  async #addPack(fresh, time) {
    const known = [...this.#packs.values()];
    const newLen = fresh.reduce((n, it) => n + it.bytes.byteLength + 48, 12);
    const merging = Array.from(packsToMerge(known.map((p) => p.len), newLen), (i) => known[i]);
    const all = [...fresh];
    const merged = [];
    for (const p of merging) {
      const entries = [...p.keys.entries()];
      let got;
      try {
        got = await readFromPack(p, entries.map(([, e]) => e));
      } catch (e) {
        if (e.code === 'ENOENT') continue; // collected meanwhile: not merged
        throw e;
      }
      entries.forEach(([ks, ], j) => {
        const slash = ks.indexOf('/');
        all.push({ key: { kind: ks.slice(0, slash), digest: ks.slice(slash + 1) }, ks, bytes: got[j] });
      });
      merged.push(p);
    }
    const seen = new Set();
    const unique = all.filter((it) => !seen.has(it.ks) && seen.add(it.ks));
    const written = await this.#writePack(unique, time);
    this.#packs.set(written.name, written);
    for (const p of merged) {
      if (p.name === written.name) continue;
      // Its records are durable in the new pack; a removal lost to a crash leaves a duplicate.
      await fsp.unlink(p.path).catch((e) => {
        if (e.code !== 'ENOENT') throw e;
      });
      this.#packs.delete(p.name);
    }
    this.#reindex();
  }

  async #putSingle({ key, bytes }, time) {
    const path = this.#path(key);
    const old = await readOrNull(path);
    if (old) {
      if (sameBytes(old, bytes)) {
        if (await refresh(path, time)) return;
      } else if (isContentAddressed(key.kind)) {
        throw this.#different(key);
      }
    }
    const dir = join(this.dir, layout().folders[key.kind]);
    await mkdirDurable(dir);
    const staged = await this.#stage(bytes, time, 'record');
    try {
      await fsp.rename(staged, path);
    } catch (e) {
      await fsp.unlink(staged).catch(() => {});
      throw e;
    }
    await syncDirectory(dir);
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

  // Every record with its put time (its file's modification time; the latest when several
  // packs hold it) and size. A pack that failed its checks fails the listing.
  async keys() {
    checkOpen(this.#closed);
    if (await injected(this.failAt, 'keys')) throw injectedError('keys');
    const found = new Map();
    const note = (ks, putTime, size) => {
      const o = found.get(ks);
      if (!o || o.putTime < putTime) found.set(ks, { putTime, size });
    };
    try {
      await this.#rescan();
      if (this.#bad.size > 0) throw this.#bad.values().next().value;
      for (const p of this.#packs.values()) {
        let st;
        try {
          st = await fsp.stat(p.path, { bigint: true });
        } catch (e) {
          if (e.code === 'ENOENT') continue;
          throw e;
        }
        for (const [ks, e] of p.keys) note(ks, putTimeOf(st), e.len);
      }
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
          note(`${kind}/${name}`, putTimeOf(st), Number(st.size));
        }
      }
    } catch (e) {
      throw fsError('cannot list records', e);
    }
    const out = [];
    for (const [ks, { putTime, size }] of found) {
      const slash = ks.indexOf('/');
      out.push({ key: { kind: ks.slice(0, slash), digest: ks.slice(slash + 1) }, putTime, size });
    }
    return sortInfos(out);
  }

  // Moves the file at `path` aside, then decides on its put time: a put racing this either
  // refreshed it before the move (it goes back) or writes it anew after (it stays removed).
  // Returns whether it was removed.
  async #removeIfOlder(path, before) {
    const aside = join(this.staging, unique('collect'));
    try {
      await fsp.rename(path, aside);
    } catch (e) {
      if (e.code === 'ENOENT') return false;
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
      return false;
    }
    await fsp.unlink(aside);
    return true;
  }

  // Removes the records `keys` put before `before`, as the native store does: a file of its
  // own is moved aside and judged; a pack holding some of them is compacted (the records it
  // keeps are first written as a new pack, then the old one is moved aside and judged). The
  // answer lists the keys no file holds any more.
  async remove(keys, before) {
    checkOpen(this.#closed);
    keys.forEach(keyString);
    checkTime(before);
    if (await injected(this.failAt, 'remove', { keys })) throw injectedError('remove');
    if (!(await exists(this.dir))) return [];
    const wanted = new Map();
    for (const key of keys) if (key.kind !== 'recovery') wanted.set(keyString(key), key);
    const present = new Set();
    try {
      await fsp.mkdir(this.staging, { recursive: true });
      await this.#rescan();
      if (this.#bad.size > 0) throw this.#bad.values().next().value;
      for (const p of [...this.#packs.values()]) {
        const going = [...p.keys.keys()].filter((ks) => wanted.has(ks));
        if (going.length === 0) continue;
        going.forEach((ks) => present.add(ks));
        let st;
        try {
          st = await fsp.stat(p.path, { bigint: true });
        } catch (e) {
          if (e.code === 'ENOENT') continue;
          throw e;
        }
        if (putTimeOf(st) >= before) continue;
        const kept = [...p.keys.entries()].filter(([ks]) => !wanted.has(ks));
        if (kept.length > 0) {
          const got = await readFromPack(p, kept.map(([, e]) => e));
          const recs = kept.map(([ks], j) => {
            const slash = ks.indexOf('/');
            return { key: { kind: ks.slice(0, slash), digest: ks.slice(slash + 1) }, bytes: got[j] };
          });
          const written = await this.#writePack(recs, this.now());
          this.#packs.set(written.name, written);
        }
        await this.#removeIfOlder(p.path, before);
        this.#packs.delete(p.name);
        this.#reindex();
      }
      if (await exists(this.packsDir)) await syncDirectory(this.packsDir);
      const touched = new Set();
      for (const [ks, key] of wanted) {
        const path = this.#path(key);
        if (!(await exists(path))) continue;
        present.add(ks);
        if (await this.#removeIfOlder(path, before)) touched.add(join(this.dir, layout().folders[key.kind]));
      }
      for (const dir of touched) await syncDirectory(dir);
      await this.#collectLeftovers(before);
      await this.#rescan();
      const removed = [];
      for (const ks of present) {
        const key = wanted.get(ks);
        if (!this.#byKey.has(ks) && !(await exists(this.#path(key)))) removed.push({ kind: key.kind, digest: key.digest });
      }
      return sortInfos(removed.map((key) => ({ key }))).map((x) => x.key);
    } catch (e) {
      throw fsError('cannot remove records', e);
    }
  }

  // Drops staging leftovers (core's collectableStaging), and head generations below the
  // current one: first heads/floor is raised to the current generation (staged, fsynced,
  // renamed), so a writer whose link lands on a collected name sees it and reports a conflict.
  async #collectLeftovers(before) {
    const now = Date.now();
    for (const name of await fsp.readdir(this.staging)) {
      const path = join(this.staging, name);
      try {
        const st = await fsp.stat(path, { bigint: true });
        if (collectableStaging(name, putTimeOf(st), before, now)) await fsp.unlink(path);
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
