// The engine-level conformance cases (test/engine-conformance.js) on connections over the
// memory and files stores in Node.

import { test, describe, after } from 'node:test';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as lib from 'langonrock';
import { cases } from '../engine-conformance.js';

const roots = [];
after(async () => {
  for (const r of roots) await rm(r, { recursive: true, force: true });
});

const runners = {
  memory: {
    make: async (o = {}) => lib.memory(o),
    reopen: async (store, o = {}) => lib.memory({ ...o, sharing: store }),
  },
  files: {
    make: async (o = {}) => {
      const dataRoot = await mkdtemp(join(tmpdir(), 'langonrock-conn-'));
      roots.push(dataRoot);
      return lib.files({ dataRoot, ...o });
    },
    reopen: async (store, o = {}) => lib.files({ dataRoot: store.dataRoot, ...o }),
  },
};

for (const [name, ctx] of Object.entries(runners)) {
  describe(`engine conformance: ${name}`, () => {
    for (const c of cases) test(c.name, () => c.run({ lib, ...ctx }));
  });
}
