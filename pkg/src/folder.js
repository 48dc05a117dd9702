// Node folder helpers: import a folder of Markdown documents into a connection and export a
// tenant to a folder, as the native binary's `import` and `export` do (docs/cli.md). This
// file only walks the folder and reads files: what the folder means (a folder of bundles or
// one bundle, which file is which document, the decision line, the refusals) is the core's
// folder plan (`planFolder`, docs/import.md), which the native binary calls too. The
// reconciliation with the tenant, the baseline and the checks are the core's import.

import { lstat, mkdir, readdir, readFile, realpath, stat, writeFile } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { folderWalkError, hiddenName } from '../gen/langonrock_wasm.js';
import { planFolder } from './index.js';
import { LangonrockError, invalidError } from './errors.js';

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

const fatal = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/**
 * Reads `dir` as the core's folder plan decides, or as the one bundle `bundle`
 * (docs/import.md): `{docs: [{bundle, path, content, file}], layout, bundle?, line}`, docs
 * sorted by bundle then path; `line` is the decision in one line.
 */
export async function readFolder(dir, bundle) {
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
  const docs = [];
  for (const d of plan.documents) {
    const { file } = found[d.entry];
    let bytes;
    try {
      bytes = await readFile(file);
    } catch (e) {
      throw unreadable(file, e);
    }
    let content;
    try {
      content = fatal.decode(bytes);
    } catch {
      throw invalidError(`${d.bundle}/${d.path}: source must contain valid UTF-8`);
    }
    docs.push({ bundle: d.bundle, path: d.path, content, file });
  }
  return { docs, layout: plan.layout, bundle: plan.bundle, line: plan.line };
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
  return { ...result, line: read.line };
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
