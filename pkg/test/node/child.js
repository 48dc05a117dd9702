// A separate Node process for the files store tests: `race <dataRoot> <i> <startAt>` swaps in
// writer i's commit over the shared first commit, in ROUNDS tenants, each round at its own
// moment after startAt, and prints the outcomes; `reload-write <dataRoot>` and `reload-check <dataRoot> <json>` run the suite's
// persistence scenario in two processes.

import { files } from 'langonrock';
import { buildChain, buildCommit } from '../fixtures.js';
import { reload } from '../store-conformance.js';

const [mode, dataRoot, arg, startAt] = process.argv.slice(2);
export const ROUNDS = 6;
const open = async (options = {}) => files({ dataRoot, ...options });

if (mode === 'race') {
  // Several rounds, one tenant each (race0, race1, …), each starting at its own moment.
  const [c0] = await buildChain(1);
  const commit = await buildCommit({ docs: [['ops', `w${arg}.md`, `writer ${arg}`]], parent: c0.revision, expected: c0.head });
  const outcomes = [];
  for (let round = 0; round < ROUNDS; round++) {
    const t = await (await open()).open(`race${round}`);
    for (const { key, bytes } of commit.records) await t.put(key, bytes);
    await t.readHead();
    while (Date.now() < Number(startAt) + round * 150) {
      // spin, so that every process swaps at the same moment
    }
    outcomes.push(await t.swapHead(commit.expected, commit.head));
  }
  process.stdout.write(JSON.stringify({ outcomes, head: new TextDecoder().decode(commit.head) }));
} else if (mode === 'reload-write') {
  process.stdout.write(JSON.stringify(await reload.write(open)));
} else if (mode === 'reload-check') {
  await reload.check(open, JSON.parse(arg));
  process.stdout.write('checked');
} else {
  throw new Error(`unknown mode ${mode}`);
}
