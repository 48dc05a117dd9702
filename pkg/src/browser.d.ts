// Types of the browser entry: the shared API plus the IndexedDB store.

export * from './index.js';
export * from './indexeddb.js';
