// Packs the package with `npm pack` and installs the tarball into a fresh project, as a user
// would (no registry access: the package has no runtime dependencies).

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
export async function installPacked() {
  const dir = await mkdtemp(join(tmpdir(), 'langonrock-pack-'));
  const { stdout } = await run('npm', ['pack', '--json', '--pack-destination', dir], { cwd: pkgDir });
  const [info] = JSON.parse(stdout);
  const project = join(dir, 'project');
  await run('mkdir', ['-p', project]);
  await writeFile(join(project, 'package.json'), JSON.stringify({ name: 'fixture', private: true, type: 'module' }));
  await run('npm', ['install', '--offline', '--no-audit', '--no-fund', join(dir, info.filename)], { cwd: project });
  return { dir, project, files: info.files.map((f) => f.path).sort() };
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
