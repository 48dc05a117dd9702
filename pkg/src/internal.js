// Names the package's modules share and its entries do not export.

/**
 * A local connection's import of a folder read into a `WasmSources` (src/folder.js): one
 * crossing of the documents' bytes into the module instead of one string per document.
 */
export const importSources = Symbol('langonrock.importSources');
