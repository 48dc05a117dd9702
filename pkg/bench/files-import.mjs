// Node's files store: `importFolder` of a tree into a fresh data root, as `langonrock import`
// does natively (bench/scripts/speed.py runs both on the same tree and prints the ratio).
// Prints one JSON line: wall and CPU (process.cpuUsage, user + system) in milliseconds, the
// snapshot id (the same tree gives the same snapshot natively), and, on Linux, the CPU of the
// main thread alone (`mainCpuMs`: the module's work, the reads and the store's JS) and of
// every other thread (`otherCpuMs`: V8's optimising compiler and collector, libuv's pool),
// from /proc in clock ticks (10 ms each, so a few ticks of error); null elsewhere.
// With `--warm`, a second import of the same tree into another fresh data root follows in the
// same process, after the first has closed, and its wall time is `warmWallMs`: the module's
// code is optimised by then, which the first import of a process never gets
// (docs/benchmarks.md, "Session 16").
// Usage: node bench/files-import.mjs <tree> <data root> <tenant> [--warm]

import { readdirSync, readFileSync, rmSync } from 'node:fs';
import { open, files, importFolder } from 'langonrock';

const [tree, dataRoot, tenant, flag] = process.argv.slice(2);

// CPU milliseconds of this process's main thread and of all its other threads together, from
// /proc; null off Linux.
function threadCpu() {
  try {
    const cpu = { main: 0, others: 0 };
    for (const t of readdirSync('/proc/self/task')) {
      const stat = readFileSync(`/proc/self/task/${t}/stat`, 'utf8');
      // Fields after the command name (which may hold spaces): utime and stime are the
      // 12th and 13th, in clock ticks (100 per second on Linux).
      const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      cpu[t === String(process.pid) ? 'main' : 'others'] += (Number(f[11]) + Number(f[12])) * 10;
    }
    return cpu;
  } catch {
    return null;
  }
}

async function importOnce(root) {
  const conn = await open({ tenant, store: files({ dataRoot: root }) });
  const r = await importFolder(conn, tree);
  await conn.close();
  return r;
}

const before = threadCpu();
const cpu0 = process.cpuUsage();
const t0 = performance.now();
const r = await importOnce(dataRoot);
const wallMs = performance.now() - t0;
const cpu = process.cpuUsage(cpu0);
const after = threadCpu();
const out = {
  wallMs,
  cpuMs: (cpu.user + cpu.system) / 1000,
  mainCpuMs: after && before ? after.main - before.main : null,
  otherCpuMs: after && before ? after.others - before.others : null,
  snapshot: r.snapshot,
};
if (flag === '--warm') {
  const warm = `${dataRoot}-warm`;
  rmSync(warm, { recursive: true, force: true });
  const t1 = performance.now();
  const w = await importOnce(warm);
  out.warmWallMs = performance.now() - t1;
  if (w.snapshot !== r.snapshot) throw new Error(`the second import gave ${w.snapshot}, the first ${r.snapshot}`);
  rmSync(warm, { recursive: true, force: true });
}
console.log(JSON.stringify(out));
