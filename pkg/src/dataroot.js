// The default data root of cli.md §2 (Node only): $LANGONROCK_DATA, else the platform
// directory, as the native binary finds it.

import { homedir } from 'node:os';
import { join } from 'node:path';
import { invalidError } from './errors.js';

const MISSING = 'cannot find the data directory: pass --data or set LANGONROCK_DATA';

/** The default data root for `env` (default `process.env`); `INVALID` when there is none. */
export function defaultDataRoot(env = process.env) {
  const set = (k) => (env[k] ? env[k] : undefined);
  if (set('LANGONROCK_DATA')) return env.LANGONROCK_DATA;
  if (process.platform === 'win32') {
    if (set('LOCALAPPDATA')) return join(env.LOCALAPPDATA, 'langonrock');
    if (!set('USERPROFILE')) throw invalidError(MISSING);
    return join(env.USERPROFILE, 'AppData', 'Local', 'langonrock');
  }
  const home = set('HOME') ?? homedir();
  if (process.platform === 'darwin') {
    if (!home) throw invalidError(MISSING);
    return join(home, 'Library', 'Application Support', 'langonrock');
  }
  if (set('XDG_DATA_HOME')) return join(env.XDG_DATA_HOME, 'langonrock');
  if (!set('HOME')) throw invalidError(MISSING);
  return join(env.HOME, '.local', 'share', 'langonrock');
}
