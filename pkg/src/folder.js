// Node folder helpers: import a folder of Markdown documents into a connection and export a
// tenant to a folder, as the native binary's `import` and `export` do (docs/cli.md). This
// file only walks the folder and reads files: what the folder means (a folder of bundles or
// one bundle, which file is which document, the decision line, the refusals) is the core's
// folder plan (`planFolder`, docs/import.md), which the native binary calls too. The
// reconciliation with the tenant, the baseline and the checks are the core's import.

import { closeSync, fstatSync, openSync, readSync, statSync } from 'node:fs';
import { lstat, mkdir, readdir, realpath, stat, writeFile } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { folderWalkError, hiddenName, WasmFolderPlan, WasmSources } from '../gen/langonrock_wasm.js';
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

// An entry's kind as `WasmFolderPlan` takes it.
const FILE = 0;
const LINK = 1;
const DIR = 2;
const OTHER = 3;

/**
 * Every entry under `dir`, hidden names skipped, links not followed: `paths` (relative, with
 * `/`), `kinds` (as `WasmFolderPlan` takes them) and `files` (the full paths), in one order.
 */
async function walk(dir) {
  const paths = [];
  const kinds = [];
  const files = [];
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
      let kind = OTHER;
      // Reported, never entered: the plan leaves it out, and names it when the folder
      // holds nothing else.
      if (hiddenName(e.name)) kind = OTHER;
      // A Dirent describes a symbolic link itself, never its target.
      else if (e.isDirectory()) {
        kind = DIR;
        stack.push([file, path]);
      } else if (e.isFile()) kind = FILE;
      else if (e.isSymbolicLink()) kind = LINK;
      paths.push(path);
      kinds.push(kind);
      files.push(file);
    }
  }
  return { paths, kinds, files };
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

// The read buffer: files are read into it back to back and its contents handed to the
// module a run of documents at a time, so it is allocated (and its pages touched) once.
const BUFFER_BYTES = 4 << 20;

/**
 * Reads `dir` as the core's folder plan decides, or as the one bundle `bundle`
 * (docs/import.md): the planned documents in the plan's order (bundle, then path), handed
 * to the module as they are read, a buffer's worth at a time, into a `WasmSources` (checked
 * as UTF-8 there), each file's stamp from the descriptor it was read through, the layout
 * and the decision `line`; with `texts`, also each document's text as a string. A failure is
 * the first in the plan's order, whether the file could not be read or is not UTF-8, as the
 * native reader reports it.
 */
async function readPlanned(dir, bundle, texts = false) {
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
  // One string of NUL-ended paths: no object per entry crosses into the module.
  const plan = new WasmFolderPlan(found.paths.join('\0') + (found.paths.length ? '\0' : ''), Uint8Array.from(found.kinds), {
    bundle: bundle == null ? undefined : String(bundle),
    name,
    shown: dir,
  });
  try {
    const entries = plan.entries;
    const n = entries.length;
    const files = new Array(n);
    const stamps = new Array(n);
    const contents = texts ? new Array(n) : null;
    const lens = new Uint32Array(n);
    const sources = new WasmSources(plan);
    const utf8 = new TextDecoder();
    let buf = new Uint8Array(BUFFER_BYTES);
    let at = 0;
    // The documents from `first` on are in `buf`, not yet in `sources`.
    let first = 0;
    // A document handed over that is not UTF-8: its error, which no later read may replace.
    let refused = null;
    const hand = (upTo) => {
      if (upTo > first) {
        try {
          sources.push(buf.subarray(0, at), lens.subarray(first, upTo));
        } catch (e) {
          refused = e;
          throw e;
        }
        if (contents) {
          let from = 0;
          for (let j = first; j < upTo; j++) {
            contents[j] = utf8.decode(buf.subarray(from, from + lens[j]));
            from += lens[j];
          }
        }
      }
      first = upTo;
      at = 0;
    };
    try {
      for (let i = 0; i < n; i++) {
        if (i > 0 && i % CHUNK === 0) await yieldToLoop();
        const file = found.files[entries[i]];
        files[i] = file;
        let start = at;
        try {
          const fd = openSync(file, 'r');
          try {
            const st = fstatSync(fd);
            stamps[i] = stampOf(st);
            if (buf.byteLength - at < st.size + 1) {
              hand(i);
              start = 0;
              if (buf.byteLength < st.size + 1) buf = new Uint8Array(st.size + 1);
            }
            // Up to the end of the file; once its fstat size is read, no second read looks
            // for more: a file that changed after its fstat fails the stamp check before
            // the commit (`folder changed during import`).
            while (at - start < st.size || st.size === 0) {
              if (at === buf.byteLength) {
                // The file grew since its fstat.
                const grown = new Uint8Array(buf.byteLength * 2);
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
          // Handing over the documents before this one found one that is not UTF-8.
          if (e === refused) throw e;
          // A document before this one that is not UTF-8 comes first.
          at = start;
          hand(i);
          throw unreadable(file, e);
        }
        lens[i] = at - start;
      }
      hand(n);
    } catch (e) {
      sources.free();
      throw e;
    }
    return { sources, contents, files, stamps, plan: texts ? plan.toJs() : null, layout: plan.layout, bundle: plan.bundle, line: plan.line };
  } finally {
    plan.free();
  }
}

/**
 * Reads `dir` as the core's folder plan decides, or as the one bundle `bundle`
 * (docs/import.md): `{docs: [{bundle, path, content, file}], layout, bundle?, line}`, docs
 * sorted by bundle then path; `line` is the decision in one line.
 */
export async function readFolder(dir, bundle) {
  const read = await readPlanned(dir, bundle, true);
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
  const local = typeof connection[importSources] === 'function';
  const read = await readPlanned(dir, bundle, !local);
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
    const result = local
        ? await connection[importSources](location, read.sources, opts)
        : await connection.importDocuments(location, decoded(read), opts);
    return { ...result, line: read.line };
  } finally {
    read.sources.free();
  }
}

// The documents as strings (their bytes were checked as UTF-8 already).
function decoded(read) {
  return read.plan.documents.map((d, i) => ({ bundle: d.bundle, path: d.path, content: read.contents[i] }));
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
