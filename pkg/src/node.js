// The Node entry (`exports` condition `node`): loads the .wasm bytes from disk and
// instantiates them synchronously, so the package is ready once its import resolves.

import { readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { initSync } from '../gen/langonrock_wasm.js';
import { setDsnHost } from './dsn.js';
import { unixTransport } from './unix.js';
import { files } from './stores/files.js';
import { defaultDataRoot } from './dataroot.js';

initSync({ module: readFileSync(new URL('../gen/langonrock_wasm_bg.wasm', import.meta.url)) });
setDsnHost({
  unix: unixTransport,
  embedded: (dataRoot) => files({ dataRoot: dataRoot ?? defaultDataRoot() }),
  home: () => (process.platform === 'win32' ? process.env.USERPROFILE : process.env.HOME) || homedir(),
});

export * from './index.js';
export { files } from './stores/files.js';
export { importFolder, exportFolder } from './folder.js';
