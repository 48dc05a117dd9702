// The tool session of tests/data/sessions/tools.json, for the suites that run it (against a
// memory store, test/node/tool-session.test.js; against a remote connection,
// test/node/remote-serve.test.js).

import { readFile } from 'node:fs/promises';

const repo = new URL('../../', import.meta.url);

/** The session script. */
export const script = JSON.parse(await readFile(new URL('tests/data/sessions/tools.json', repo), 'utf8'));

/** `$HEAD`, `$PARENT` and `$HASH:<bundle>/<path>` in every string of `v`, looked up on `conn`. */
export async function substitute(v, conn) {
  if (typeof v === 'string' && v.startsWith('$')) {
    const head = (await conn.history({ limit: 1 })).revisions[0];
    if (v === '$HEAD') return head?.revision ?? '';
    if (v === '$PARENT') return head?.parent ?? '';
    const [bundle, ...rest] = v.slice('$HASH:'.length).split('/');
    return (await conn.readSource(bundle, rest.join('/')))?.hash ?? '';
  }
  if (Array.isArray(v)) return Promise.all(v.map((x) => substitute(x, conn)));
  if (v !== null && typeof v === 'object') {
    const out = {};
    for (const [k, x] of Object.entries(v)) out[k] = await substitute(x, conn);
    return out;
  }
  return v;
}

/** Runs every call of the session on `conn`: the transcript the golden holds. */
export async function runSession(conn) {
  let out = '';
  for (const [i, [name, args]] of script.calls.entries()) {
    const a = args === null ? undefined : await substitute(args, conn);
    const { text, isError } = await conn.callTool(name, a);
    out += `== ${i} ${name} ${isError ? 'error' : 'ok'}\n${text}\n`;
  }
  return out;
}
