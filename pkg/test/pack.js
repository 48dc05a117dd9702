// Packs the package with `npm pack` and installs the tarball into a fresh project, as a user
// would. The package has no dependencies (the MCP SDK is an optional peer), so the install
// needs nothing from the registry and works from an empty npm cache; `extra` packages are
// installed from the registry beside it.

import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const run = promisify(execFile);
const pkgDir = fileURLToPath(new URL('..', import.meta.url));

/** Returns `{project, tarball, files}`: a fresh ESM project with the packed package installed. */
export async function installPacked(extra = []) {
  const dir = await mkdtemp(join(tmpdir(), 'langonrock-pack-'));
  const { stdout } = await run('npm', ['pack', '--json', '--pack-destination', dir], { cwd: pkgDir });
  const [info] = JSON.parse(stdout);
  const project = join(dir, 'project');
  await run('mkdir', ['-p', project]);
  await writeFile(join(project, 'package.json'), JSON.stringify({ name: 'fixture', private: true, type: 'module' }));
  // A cache of its own, empty: what a fresh machine has.
  const env = { ...process.env, npm_config_cache: join(dir, 'npm-cache') };
  await run('npm', ['install', '--no-audit', '--no-fund', join(dir, info.filename), ...extra], { cwd: project, env });
  return { dir, project, tarball: join(dir, info.filename), files: info.files.map((f) => f.path).sort() };
}

/** The README's example: the first js code block under `## Example`. */
export function readmeExample() {
  const readme = readFileSync(new URL('../README.md', import.meta.url), 'utf8');
  const section = readme.slice(readme.indexOf('## Example'));
  const m = section.match(/```js\n([\s\S]*?)```/);
  if (!m) throw new Error('README.md has no js example under ## Example');
  return m[1];
}

/** What the README's example prints (console.log lines joined), checked by the pack tests. */
export const README_OUTPUT =
  /^# tenant: acme\n# bundles: ops\n# query: replay export\n# hits: 1 direct, 0 linked\nid\tbundle\tkind\tstatus\tgrain\tsummary\tlinks\tpos\nrunbook\tops\trunbook\t-\t-\tReplay a failed order export\.\t-\t\d+\n\n# Runbook\n\nReplay a failed order export\.\n\n$/;
