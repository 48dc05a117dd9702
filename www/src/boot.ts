// The page's first module (src/main.ts imports it before anything else): starts the engine
// worker and sends it the open, so that the worker fetches and compiles the package's wasm
// module and reads the tenant while the rest of the page's code is evaluated.

import { Engine } from './engine/client.js';

const params = new URLSearchParams(location.search);
/** The IndexedDB database and the tenant; `?db=` and `?tenant=` choose others. */
export const DATABASE = params.get('db') || 'langonrock-notes';
export const TENANT = params.get('tenant') || 'notes';

export const engine = new Engine(DATABASE, TENANT);
