// Names the package's modules share and its entries do not export.

/**
 * A local connection's import of a folder read into a `WasmSources` (src/folder.js): one
 * crossing of the documents' bytes into the module instead of one string per document.
 */
export const importSources = Symbol('langonrock.importSources');

/**
 * A store's `put` of bytes that no one else holds or will change (a prepared commit's
 * records, each a fresh array from the module), which the store may keep without copying.
 * The memory store has it; `storeCommit` (src/host.js) uses it where a store does.
 */
export const handOver = Symbol('langonrock.handOver');
