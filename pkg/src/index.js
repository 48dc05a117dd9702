// The public API of the `langonrock` package, shared by the Node and browser entries
// (src/node.js, src/browser.js), which load the WebAssembly module before anything here is
// called. Generated bindings live in ../gen/ (wasm-pack output, never edited by hand).

import { version as wasmVersion } from '../gen/langonrock_wasm.js';

export { CODES, LangonrockError } from './errors.js';
export { memory } from './stores/memory.js';

/** The package version, as compiled into the WebAssembly module. */
export function version() {
  return wasmVersion();
}
