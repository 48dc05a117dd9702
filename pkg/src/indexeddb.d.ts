// Types of the IndexedDB store (`langonrock/indexeddb`, also exported by the browser entry).
// The subpath loads the store alone, without the WebAssembly module: a worker can start
// reading while the module compiles.

import type { Store, StoreOptions, TenantStore } from './index.js';

export interface IndexedDbOptions extends StoreOptions {
  /** The IndexedDB database name. */
  name: string;
  /** The IndexedDB factory; default `globalThis.indexedDB`. */
  indexedDB?: IDBFactory;
}

/** One tenant of an IndexedDB store. */
export interface IndexedDbTenantStore extends TenantStore {
  /**
   * Calls `listener` when another connection to this tenant moved the head (over the
   * BroadcastChannel `langonrock:<name>:<tenant>`). Returns a function that stops the calls.
   */
  onHeadChange(listener: () => void): () => void;
}

export interface IndexedDbStore extends Store<IndexedDbTenantStore> {
  readonly kind: 'indexeddb';
  readonly name: string;
}

/** The IndexedDB store (engine.md §9.2 rule 3), for browsers. */
export declare function indexedDb(options: IndexedDbOptions): IndexedDbStore;
