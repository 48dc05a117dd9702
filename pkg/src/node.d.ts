// Types of the Node entry: the shared API plus the files store.

export * from './index.js';
import type { Store, StoreOptions, TenantStore } from './index.js';

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
