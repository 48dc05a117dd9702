// Node folder helpers: import a folder of OKF documents into a connection and export a
// tenant to a folder, as the native binary's `import` and `export` do (cli.md §4). The
// folder is read as compile.md §1.1 says (the native binary's node-mcp/src/folder.rs); the
// reconciliation with the tenant, the baseline and the checks are the core's import.

import { lstat, mkdir, readdir, readFile, realpath, stat, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { checkBundleName, checkDocumentPath, endsWithMd, nfc } from '../gen/langonrock_wasm.js';
import { LangonrockError, invalidError } from './errors.js';

const utf8 = (s) => Buffer.from(s, 'utf8');
/** Plain Rust string order: by code point, the same as UTF-8 byte order (README §4.2). */
const byCodePoint = (a, b) => Buffer.compare(utf8(a), utf8(b));

const ioError = (path, e) => invalidError(`${path}: ${e?.message ?? e}`);

async function list(dir) {
  let entries;
  try {
    entries = await readdir(dir, { withFileTypes: true });
  } catch (e) {
    throw ioError(dir, e);
  }
  // Symbolic links are not followed: a Dirent describes the link itself.
  return entries.map((d) => ({ name: d.name, path: join(dir, d.name), kind: d.isDirectory() ? 'dir' : d.isFile() ? 'file' : 'other' }));
}

async function holdsDocuments(dir) {
  for (const e of await list(dir)) {
    if (e.name.startsWith('.')) continue;
    if (e.kind === 'dir' && (await holdsDocuments(e.path))) return true;
    if (e.kind === 'file' && endsWithMd(e.name)) return true;
  }
  return false;
}

const fatal = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

async function readBundle(dir, bundle, out) {
  const stack = [[dir, '']];
  while (stack.length) {
    const [d, prefix] = stack.pop();
    for (const e of await list(d)) {
      if (e.name.startsWith('.')) continue;
      const name = nfc(e.name);
      const rel = prefix === '' ? name : `${prefix}/${name}`;
      if (e.kind === 'dir') stack.push([e.path, rel]);
      else if (e.kind === 'file' && endsWithMd(name)) {
        const path = checkDocumentPath(rel);
        let bytes;
        try {
          bytes = await readFile(e.path);
        } catch (err) {
          throw ioError(e.path, err);
        }
        let content;
        try {
          content = fatal.decode(bytes);
        } catch {
          throw invalidError(`${bundle}/${path}: source must contain valid UTF-8`);
        }
        out.docs.push({ bundle, path, content, file: e.path });
      }
    }
  }
}

/**
 * Reads `dir` as a tenant of bundles, or as the one bundle `bundle` (compile.md §1.1):
 * `{docs: [{bundle, path, content, file}], warnings}`, docs sorted by bundle then path.
 */
export async function readFolder(dir, bundle) {
  let meta;
  try {
    meta = await stat(dir);
  } catch (e) {
    throw ioError(dir, e);
  }
  if (!meta.isDirectory()) throw invalidError(`${dir}: not a directory`);
  const out = { docs: [], warnings: [] };
  if (bundle != null) {
    checkBundleName(String(bundle));
    await readBundle(dir, String(bundle), out);
  } else {
    const entries = (await list(dir)).sort((a, b) => byCodePoint(a.name, b.name));
    for (const e of entries) {
      if (e.name.startsWith('.')) continue;
      if (e.kind === 'dir') {
        if (!(await holdsDocuments(e.path))) continue;
        try {
          checkBundleName(e.name);
        } catch (err) {
          throw invalidError(`${err.message} (import the folder with --bundle to use it as one bundle)`);
        }
        await readBundle(e.path, e.name, out);
      } else if (e.kind === 'file' && endsWithMd(e.name)) {
        out.warnings.push(`warn: ${e.name}: not inside a bundle folder, ignored (use --bundle)`);
      }
    }
  }
  out.docs.sort((a, b) => byCodePoint(a.bundle, b.bundle) || byCodePoint(a.path, b.path));
  return out;
}

async function stamp(file) {
  try {
    const m = await stat(file);
    return `${m.size}:${m.mtimeMs}`;
  } catch {
    return null;
  }
}

/**
 * Imports a folder into the connection's tenant (cli.md §4): the location key is the
 * folder's canonical path, plus `?bundle=<b>` with `bundle`, as the native `import` keys it,
 * so both runtimes share baselines. Resolves the import result plus the folder's `warnings`.
 * @param {object} connection a connection from `open`
 * @param {string} dir
 * @param {{bundle?: string, strict?: boolean}} [options]
 */
export async function importFolder(connection, dir, options = {}) {
  const { bundle, strict = false } = options ?? {};
  const read = await readFolder(dir, bundle);
  const stamps = await Promise.all(read.docs.map(async (d) => [d.file, await stamp(d.file)]));
  let canonical;
  try {
    canonical = await realpath(dir);
  } catch (e) {
    throw ioError(dir, e);
  }
  const location = bundle != null ? `${canonical}?bundle=${bundle}` : canonical;
  const documents = read.docs.map(({ bundle: b, path, content }) => ({ bundle: b, path, content }));
  const check = async () => {
    for (const [file, s] of stamps) {
      if ((await stamp(file)) !== s) return `folder changed during import: ${file}; scan it again`;
    }
    return undefined;
  };
  const result = await connection.importDocuments(location, documents, { strict: Boolean(strict), check });
  return { ...result, warnings: read.warnings };
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
