// Node folder helpers: import a folder of Markdown documents into a connection and export a
// tenant to a folder, as the native binary's `import` and `export` do (docs/cli.md). This
// file only walks the folder and reads files: what the folder means (a folder of bundles or
// one bundle, which file is which document, the decision line, the refusals) is the core's
// folder plan (`planFolder`, docs/import.md), which the native binary calls too. The
// reconciliation with the tenant, the baseline and the checks are the core's import.

import { closeSync, fstatSync, openSync, readSync, statSync } from 'node:fs';
import { lstat, mkdir, readdir, realpath, stat, writeFile } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { folderWalkError, hiddenName, WasmSources } from '../gen/langonrock_wasm.js';
import { planFolder } from './index.js';
import { importSources } from './internal.js';
import { LangonrockError } from './errors.js';

/** An IO error's reason as the native binary words it: lower-case, no code. */
function reason(e) {
  const text = {
    ENOENT: 'no such file or directory',
    EACCES: 'permission denied',
    EPERM: 'operation not permitted',
    ELOOP: 'too many levels of symbolic links',
    ENOTDIR: 'not a directory',
    EISDIR: 'is a directory',
  }[e?.code];
  return text ?? String(e?.message ?? e);
}

const unreadable = (path, e) => folderWalkError('unreadable', path, reason(e));

/** Every entry under `dir`: `{path, kind, file}`, hidden names skipped, links not followed. */
async function walk(dir) {
  const found = [];
  const stack = [[dir, '']];
  while (stack.length) {
    const [d, prefix] = stack.pop();
    let entries;
    try {
      entries = await readdir(d, { withFileTypes: true });
    } catch (e) {
      throw unreadable(d, e);
    }
    for (const e of entries) {
      const path = prefix === '' ? e.name : `${prefix}/${e.name}`;
      const file = join(d, e.name);
      // Reported, never entered: the plan leaves it out, and names it when the folder
      // holds nothing else.
      if (hiddenName(e.name)) {
        found.push({ path, kind: 'other', file });
        continue;
      }
      // A Dirent describes a symbolic link itself, never its target.
      let kind = 'other';
      if (e.isDirectory()) {
        kind = 'dir';
        stack.push([file, path]);
      } else if (e.isFile()) kind = 'file';
      else if (e.isSymbolicLink()) kind = 'link';
      found.push({ path, kind, file });
    }
  }
  return found;
}

// Files are read with synchronous calls (open, fstat, read, close: a tenth of the CPU of
// one promise per file), a chunk at a time with the event loop let run between chunks.
const CHUNK = 512;
const yieldToLoop = () => new Promise((resolve) => setImmediate(resolve));

/** A file's size and modification time, to tell later whether it changed; null if gone. */
const stampOf = (st) => `${st.size}:${st.mtimeMs}`;
function stamp(file) {
  try {
    const st = statSync(file, { throwIfNoEntry: false });
    return st ? stampOf(st) : null;
  } catch {
    return null;
  }
}

/**
 * Reads `dir` as the core's folder plan decides, or as the one bundle `bundle`
 * (docs/import.md): the planned documents in the plan's order (bundle, then path) as one
 * buffer, handed to the module as a `WasmSources` (checked as UTF-8 there), each file's
 * stamp from the descriptor it was read through, the layout and the decision `line`. A
 * failure is the first in the plan's order, whether the file could not be read or is not
 * UTF-8, as the native reader reports it.
 */
async function readPlanned(dir, bundle) {
  let meta;
  try {
    meta = await stat(dir);
  } catch (e) {
    throw e?.code === 'ENOENT' ? folderWalkError('notFound', dir, '') : unreadable(dir, e);
  }
  if (!meta.isDirectory()) throw folderWalkError('notAFolder', dir, '');
  const found = await walk(dir);
  let canonical;
  try {
    canonical = await realpath(dir);
  } catch (e) {
    throw unreadable(dir, e);
  }
  const name = basename(canonical) || undefined;
  const plan = planFolder(
    found.map(({ path, kind }) => ({ path, kind })),
    { bundle: bundle == null ? undefined : String(bundle), name, shown: dir },
  );
  const n = plan.documents.length;
  const bundles = new Array(n);
  const paths = new Array(n);
  const files = new Array(n);
  const stamps = new Array(n);
  const lens = new Uint32Array(n);
  let buf = new Uint8Array(1 << 20);
  let at = 0;
  const sources = (count) => new WasmSources(bundles.slice(0, count), paths.slice(0, count), buf.subarray(0, at), lens.subarray(0, count));
  for (let i = 0; i < n; i++) {
    if (i > 0 && i % CHUNK === 0) await yieldToLoop();
    const d = plan.documents[i];
    const { file } = found[d.entry];
    bundles[i] = d.bundle;
    paths[i] = d.path;
    files[i] = file;
    const start = at;
    try {
      const fd = openSync(file, 'r');
      try {
        const st = fstatSync(fd);
        stamps[i] = stampOf(st);
        for (;;) {
          if (buf.byteLength - at < Math.max(st.size - (at - start), 0) + 1) {
            const grown = new Uint8Array(Math.max(buf.byteLength * 2, at + st.size + 1));
            grown.set(buf.subarray(0, at));
            buf = grown;
          }
          const got = readSync(fd, buf, at, buf.byteLength - at, null);
          if (got === 0) break;
          at += got;
        }
      } finally {
        closeSync(fd);
      }
    } catch (e) {
      // A document before this one that is not UTF-8 comes first.
      at = start;
      sources(i).free();
      throw unreadable(file, e);
    }
    lens[i] = at - start;
  }
  return { sources: sources(n), bytes: buf.subarray(0, at), bundles, paths, lens, files, stamps, layout: plan.layout, bundle: plan.bundle, line: plan.line };
}

/**
 * Reads `dir` as the core's folder plan decides, or as the one bundle `bundle`
 * (docs/import.md): `{docs: [{bundle, path, content, file}], layout, bundle?, line}`, docs
 * sorted by bundle then path; `line` is the decision in one line.
 */
export async function readFolder(dir, bundle) {
  const read = await readPlanned(dir, bundle);
  read.sources.free();
  const docs = decoded(read).map((d, i) => ({ ...d, file: read.files[i] }));
  return { docs, layout: read.layout, bundle: read.bundle, line: read.line };
}

/**
 * Imports a folder into the connection's tenant (docs/cli.md, "Import"): the location key is
 * the folder's canonical path, plus `?bundle=<b>` with `bundle`, as the native `import` keys
 * it, so both runtimes share baselines. Resolves the import result plus the folder plan's
 * decision `line` (what the native binary prints before it commits).
 * @param {object} connection a connection from `open`
 * @param {string} dir
 * @param {{bundle?: string, strict?: boolean}} [options]
 */
export async function importFolder(connection, dir, options = {}) {
  const { bundle, strict = false } = options ?? {};
  const read = await readPlanned(dir, bundle);
  try {
    let canonical;
    try {
      canonical = await realpath(dir);
    } catch (e) {
      throw unreadable(dir, e);
    }
    const location = bundle != null ? `${canonical}?bundle=${bundle}` : canonical;
    const check = () => {
      for (let i = 0; i < read.files.length; i++) {
        if (stamp(read.files[i]) !== read.stamps[i]) return `folder changed during import: ${read.files[i]}; scan it again`;
      }
      return undefined;
    };
    const opts = { strict: Boolean(strict), check };
    // A local connection takes the bytes as read; any other (a remote one refuses imports)
    // gets the documents as strings.
    const result =
      typeof connection[importSources] === 'function'
        ? await connection[importSources](location, read.sources, opts)
        : await connection.importDocuments(location, decoded(read), opts);
    return { ...result, line: read.line };
  } finally {
    read.sources.free();
  }
}

// The documents as strings (their bytes were checked as UTF-8 already).
function decoded(read) {
  const utf8 = new TextDecoder();
  let at = 0;
  return read.bundles.map((b, i) => {
    const content = utf8.decode(read.bytes.subarray(at, at + read.lens[i]));
    at += read.lens[i];
    return { bundle: b, path: read.paths[i], content };
  });
}

/**
 * Exports the tenant's documents to a new folder `dir`, one file per document at
 * `<bundle>/<path>` (navigation documents included). Resolves `{files}`, the count.
 */
export async function exportFolder(connection, dir) {
  const exists = await lstat(dir).then(
    () => true,
    () => false,
  );
  if (exists) throw new LangonrockError('INVALID', `export destination already exists: ${dir}`);
  const docs = await connection.documents();
  await mkdir(dir, { recursive: true });
  for (const d of docs) {
    const file = join(dir, d.bundle, d.path);
    await mkdir(dirname(file), { recursive: true });
    await writeFile(file, d.content);
  }
  return { files: docs.length };
}
