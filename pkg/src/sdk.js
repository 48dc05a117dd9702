// The MCP SDK (`@modelcontextprotocol/sdk`) is an optional peer dependency of the package:
// only createMcpServer and the bin load it, and without it they fail with the install line.

import { LangonrockError } from './errors.js';

/** The message when the MCP SDK, an optional peer dependency, is not installed. */
export const SDK_MISSING =
  'createMcpServer and `langonrock mcp` need the MCP SDK, an optional peer dependency: npm install @modelcontextprotocol/sdk';

/**
 * Loads modules of the MCP SDK (`@modelcontextprotocol/sdk/<name>`), an optional peer
 * dependency: only createMcpServer and the bin need it. Without it, rejects with `INVALID`
 * and the install line.
 */
export async function loadSdk(names) {
  try {
    // A bundler must leave this import to the runtime: the SDK is optional, and the notes
    // page, which bundles the package, never calls it (Vite and webpack read these hints).
    return await Promise.all(
      names.map((n) => import(/* @vite-ignore */ /* webpackIgnore: true */ `@modelcontextprotocol/sdk/${n}`)),
    );
  } catch (e) {
    if (e?.code === 'ERR_MODULE_NOT_FOUND' && String(e.message).includes('@modelcontextprotocol/sdk')) {
      throw new LangonrockError('INVALID', SDK_MISSING);
    }
    throw e;
  }
}

