// Node's files store: `importFolder` of a tree into a fresh data root, as `langonrock import`
// does natively (bench/scripts/speed.py runs both on the same tree and prints the ratio).
// Prints one JSON line: wall and CPU (process.cpuUsage, user + system) in milliseconds, and
// the snapshot id (the same tree gives the same snapshot natively).
// Usage: node bench/files-import.mjs <tree> <data root> <tenant>

import { open, files, importFolder } from 'langonrock';

const [tree, dataRoot, tenant] = process.argv.slice(2);
const cpu0 = process.cpuUsage();
const t0 = performance.now();
const conn = await open({ tenant, store: files({ dataRoot }) });
const r = await importFolder(conn, tree);
await conn.close();
const wallMs = performance.now() - t0;
const cpu = process.cpuUsage(cpu0);
console.log(JSON.stringify({ wallMs, cpuMs: (cpu.user + cpu.system) / 1000, snapshot: r.snapshot }));
