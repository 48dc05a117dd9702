// Types of the Node entry: the shared API plus the files store.

export * from './index.js';
import type { Connection, ImportResult, Store, StoreOptions, TenantStore } from './index.js';

export interface FilesOptions extends StoreOptions {
  /** The data root: tenants live in `<dataRoot>/tenants/<tenant>/`. */
  dataRoot: string;
}

/** The files store: the native binary's layout under `dataRoot` (engine.md §9.2 rule 2). */
export interface FilesStore extends Store<TenantStore> {
  readonly kind: 'files';
  readonly dataRoot: string;
}

/** The files store (engine.md §9.2 rules 2 and 4), shared with the native binary. */
export declare function files(options: FilesOptions): FilesStore;

export interface ImportFolderOptions {
  /** Import the folder as this one bundle (its location key gets `?bundle=<b>`). */
  bundle?: string;
  /** Commit nothing when a folder document has a diagnostic. */
  strict?: boolean;
}

/**
 * Imports a folder of Markdown documents under the same location key as the native
 * `import`: the folder's canonical path, plus `?bundle=<b>`. The folder is a folder of
 * bundles or one bundle as the core's folder plan decides (docs/import.md); `line` says
 * which, as the native binary prints it before committing. A folder with nothing to import
 * rejects with `INVALID` `nothing to import in <dir>: <reason>`.
 */
export declare function importFolder(
  connection: Connection,
  dir: string,
  options?: ImportFolderOptions,
): Promise<ImportResult & { line: string }>;

/** Writes every document to `<dir>/<bundle>/<path>`; `dir` must not exist. */
export declare function exportFolder(connection: Connection, dir: string): Promise<{ files: number }>;
