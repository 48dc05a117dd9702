// The Node entry (`exports` condition `node`): loads the .wasm bytes from disk and
// instantiates them synchronously, so the package is ready once its import resolves.

import { createHash, hash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { initSync, setHostSha256 } from '../gen/langonrock_wasm.js';
import { setDsnHost } from './dsn.js';
import { unixTransport } from './unix.js';
import { files } from './stores/files.js';
import { defaultDataRoot } from './dataroot.js';

const wasm = initSync({ module: readFileSync(new URL('../gen/langonrock_wasm_bg.wasm', import.meta.url)) });

// SHA-256 from `crypto` (SHA instructions; WebAssembly has none) for the core's long inputs,
// which it hands over as (address, length) pairs into the module's memory (docs/js.md §1.4).
// The core decides what is hashed; the digests are the same bytes as the module's.
const sha256 = typeof hash === 'function' ? (b) => hash('sha256', b, 'buffer') : (b) => createHash('sha256').update(b).digest();
setHostSha256((ranges) => {
  const memory = new Uint8Array(wasm.memory.buffer);
  const n = ranges.length >>> 1;
  const out = new Uint8Array(32 * n);
  for (let i = 0; i < n; i++) {
    const at = ranges[2 * i];
    out.set(sha256(memory.subarray(at, at + ranges[2 * i + 1])), 32 * i);
  }
  return out;
});
setDsnHost({
  unix: unixTransport,
  embedded: (dataRoot) => files({ dataRoot: dataRoot ?? defaultDataRoot() }),
  home: () => (process.platform === 'win32' ? process.env.USERPROFILE : process.env.HOME) || homedir(),
});

export * from './index.js';
export { files } from './stores/files.js';
export { importFolder, exportFolder } from './folder.js';
