// The browser entry (`exports` conditions `browser` and `default`): fetches and instantiates
// the .wasm next to the generated bindings, with top-level await, so the package is ready
// once its import resolves.

import init from '../gen/langonrock_wasm.js';

await init({ module_or_path: new URL('../gen/langonrock_wasm_bg.wasm', import.meta.url) });

export * from './index.js';
export { indexedDb } from './stores/indexeddb.js';
