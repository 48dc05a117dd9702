// Packs the package with `npm pack` and installs the tarball into a fresh project, as a user
// would (no registry access: the package has no runtime dependencies).

import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { mkdtemp, writeFile } from 'node:fs/promises';
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
