// Runs the store conformance file (tests/data/conformance.json, shared with the Rust suite)
// and the JS store cases on the memory and files stores in Node.

import { test, describe, after } from 'node:test';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { readFile } from 'node:fs/promises';
import { cases } from '../store-conformance.js';
import { fileCases, runFileCase } from '../conformance-file.js';
import { memory, files } from 'langonrock';

const roots = [];
after(async () => {
  for (const r of roots) await rm(r, { recursive: true, force: true });
});

const runners = {
  memory: {
    strict: true,
    make: async (o = {}) => memory(o),
    reopen: async (store, o = {}) => memory({ ...o, sharing: store }),
  },
  files: {
    strict: false,
    make: async (o = {}) => {
      const dataRoot = await mkdtemp(join(tmpdir(), 'langonrock-files-'));
      roots.push(dataRoot);
      return files({ dataRoot, ...o });
    },
    reopen: async (store, o = {}) => files({ dataRoot: store.dataRoot, ...o }),
  },
};

const file = await readFile(new URL('../../../tests/data/conformance.json', import.meta.url), 'utf8');

for (const [name, ctx] of Object.entries(runners)) {
  describe(`store conformance file: ${name}`, () => {
    for (const c of fileCases(file, ctx.strict)) test(c.name, () => runFileCase(c.case, ctx));
  });
  describe(`store conformance: ${name}`, () => {
    for (const c of cases) {
      if (c.strictOnly && !ctx.strict) continue;
      test(c.name, () => c.run(ctx));
    }
  });
}
