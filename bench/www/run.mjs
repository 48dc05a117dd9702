// The notes page at scale: a harness that prints numbers (it asserts nothing). It generates
// (or reuses) the reference corpus, imports it through the page in headless Chromium, then
// measures what a person waits for: open-to-interactive, keystroke-to-results, the first
// save after opening, the longest main-thread task during import, open and save, and the
// import itself. Run it with scripts/www-bench.sh (which builds the page first).
//
//   node bench/www/run.mjs [--bundles 40] [--per-bundle 500] [--corpus DIR] [--keep]
//                          [--reloads 3] [--saves 5] [--keystrokes 3] [--profile DIR [--skip-import]]
//                          [--dist DIR]
//
// Long tasks are the browser's own (PerformanceObserver 'longtask': main-thread tasks over
// 50 ms), collected by the page into window.__notesPerf.longTasks.

import { existsSync, readdirSync, statSync, mkdtempSync, rmSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { tmpdir, loadavg, cpus } from 'node:os';
import { fileURLToPath } from 'node:url';
import { createRequire } from 'node:module';

const repo = fileURLToPath(new URL('../..', import.meta.url));
const www = join(repo, 'www');
const require = createRequire(join(www, 'package.json'));
const { chromium } = require('playwright-core');
const { serve } = await import(join(www, 'test', 'server.js'));

const args = process.argv.slice(2);
const opt = (name, dflt) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? args[i + 1] : dflt;
};
const bundles = Number(opt('bundles', '40'));
const perBundle = Number(opt('per-bundle', '500'));
const corpus = opt('corpus', join(tmpdir(), `www-corp-${bundles}x${perBundle}`));
const keystrokes = Number(opt('keystrokes', '3'));
const reloads = Number(opt('reloads', '3'));
const saveRuns = Number(opt('saves', '5'));
const FLAGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'];

function generate() {
  if (existsSync(join(corpus, 'domain01')) || existsSync(join(corpus, `domain${bundles}`))) return;
  const gen = [join(repo, '..', 'shared', 'bench', 'reference-corpus', 'gen.py'), '/work/shared/bench/reference-corpus/gen.py'].find((f) => existsSync(f));
  const a = [corpus, '--bundles', String(bundles), '--per-bundle', String(perBundle)];
  if (gen) execFileSync('python3', [gen, ...a], { stdio: 'inherit' });
  else execFileSync('cargo', ['run', '--quiet', '--release', '--locked', '-p', 'langonrock-bench', '--', 'generate', ...a], { cwd: repo, stdio: 'inherit' });
}

function countMd(dir) {
  let n = 0;
  for (const name of readdirSync(dir)) {
    if (name.startsWith('.')) continue;
    const f = join(dir, name);
    if (statSync(f).isDirectory()) n += countMd(f);
    else if (/\.md$/i.test(name)) n++;
  }
  return n;
}

const ms = (x) => (typeof x === "number" ? `${x.toFixed(0)} ms` : "–");
const stats = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  const at = (q) => s[Math.min(s.length - 1, Math.ceil(q * s.length) - 1)];
  return { n: s.length, p50: s[Math.floor(s.length / 2)], p95: at(0.95), max: s[s.length - 1] };
};

generate();
const files = countMd(corpus);
// A kept profile's notes belong to the page's origin: serve it on the same port each time.
// --dist DIR serves another build of the page (an A/B against an older commit's www/dist).
const server = await serve(opt('dist', join(www, 'dist')), Number(opt('port', opt('profile', null) ? '5191' : '0')));
// --profile DIR keeps the browser profile (and the imported notes) for a later --skip-import run.
const profile = opt('profile', null) ?? mkdtempSync(join(tmpdir(), 'www-bench-'));
const skipImport = args.includes('--skip-import');
const browser = await chromium.launchPersistentContext(profile, { executablePath: process.env.CHROMIUM ?? '/usr/bin/chromium', args: FLAGS, headless: true, viewport: { width: 1280, height: 860 } });
const page = browser.pages()[0] ?? (await browser.newPage());
page.setDefaultTimeout(30 * 60_000);
const errors = [];
page.on('pageerror', (e) => errors.push(String(e)));

const longTasks = () => page.evaluate(() => window.__notesPerf.longTasks.slice());
const resetLong = () => page.evaluate(() => (window.__notesPerf.longTasks.length = 0));
const longest = (list) => (list.length ? Math.max(...list.map((t) => t.duration)) : 0);
const ready = async () => {
  await page.waitForSelector('body[data-ready]');
  if ((await page.getAttribute('body', 'data-ready')) !== 'true') throw new Error(`the page did not open: ${await page.textContent('main')}`);
};
// The reloads are watched without touching the page until it is interactive: Playwright's
// first call into a new document evaluates its own injected script there (a task of tens of
// milliseconds on this machine), which the page's long task list would otherwise count. The
// page says it is ready through this init script's console message instead.
await page.addInitScript(() => {
  document.addEventListener('DOMContentLoaded', () => {
    const seen = new MutationObserver(() => {
      if (!document.body.dataset.ready) return;
      seen.disconnect();
      console.debug(`notes-bench-ready:${document.body.dataset.ready}`);
    });
    seen.observe(document.body, { attributes: true, attributeFilter: ['data-ready'] });
  });
});
const reloadUntouched = async () => {
  const said = page.waitForEvent('console', { predicate: (m) => m.text().startsWith('notes-bench-ready:'), timeout: 10 * 60_000 });
  await page.reload({ waitUntil: 'commit' });
  const m = await said;
  if (m.text() !== 'notes-bench-ready:true') throw new Error(`the page did not open: ${await page.textContent('main')}`);
};

const out = [];
const say = (line) => {
  out.push(line);
  console.log(line);
};
say(`www bench: ${files.toLocaleString('en-US')} documents in ${corpus}; ${cpus().length} cores, load ${loadavg().map((x) => x.toFixed(2)).join(' ')}`);

// 1. Import through the page.
if (!skipImport) {
await page.goto(`${server.url}/#/transfer`);
await ready();
await resetLong();
const t0 = Date.now();
await page.setInputFiles('#folder-input', corpus);
await page.waitForSelector('#import-go, #notices .notice.error');
if (await page.$('#notices .notice.error')) throw new Error(`the import failed: ${await page.textContent('#notices')}`);
const planned = Date.now();
const planMs = await page.evaluate(() => window.__notesPerf.marks.importPlanMs);
await page.click('#import-go');
await page.waitForSelector('#import-done, #notices .notice.error');
if (await page.$('#notices .notice.error')) throw new Error(`the import failed: ${await page.textContent('#notices')}`);
const done = Date.now();
const commitMs = await page.evaluate(() => window.__notesPerf.marks.importCommitMs);
// Long tasks from the moment the page has the files (before it, Playwright's setInputFiles
// builds 20,000 File objects inside the renderer: the harness's cost, not the page's).
const picked = await page.evaluate(() => ({ at: window.__notesPerf.marks.importPicked, posted: window.__notesPerf.marks.importPosted }));
// The task that dispatches the folder's `change` event begins with Playwright's building of the
// File objects (seconds at 20,000 files, the harness's cost): of it, only the part from the
// page's handler on counts.
const importLong = (await longTasks())
  .filter((t) => t.start + t.duration > picked.at)
  .map((t) => (t.start < picked.at ? { start: picked.at, duration: t.start + t.duration - picked.at } : t));
const concepts = await page.evaluate(() => window.notes.summary.concepts);
const revisions = (await page.evaluate(() => window.notes.call('history', undefined, 100))).revisions.length;
say(`import: ${((done - t0) / 1000).toFixed(1)} s from choosing the folder to done (${((planned - t0) / 1000).toFixed(1)} s to the plan, of which ${(planMs / 1000).toFixed(1)} s reading, hashing and comparing in the worker; ${(commitMs / 1000).toFixed(1)} s for the one-revision import); ${concepts.toLocaleString('en-US')} notes, ${revisions} revision${revisions === 1 ? '' : 's'}`);
say(`import: longest main-thread task ${ms(longest(importLong))} (${importLong.filter((t) => t.duration > 50).length} over 50 ms) after the page had the files; handing the ${files.toLocaleString('en-US')} files to the worker took ${ms(picked.posted - picked.at)} on the main thread`);
// Let the worker write the derived record (a second after the commit), as a person's next open would find it.
await page.waitForTimeout(8000);
}

// 2. Open: reload to interactive.
if (skipImport) await page.goto(`${server.url}/#/`);
const opens = [];
for (let i = 0; i < reloads; i++) {
  await reloadUntouched();
  // Until interactive only: what comes after is the harness's own calls and the idle warm-up.
  const m = await page.evaluate(() => ({ interactive: window.__notesPerf.interactive, marks: { ...window.__notesPerf.marks }, long: window.__notesPerf.longTasks.filter((t) => t.start < window.__notesPerf.interactive), early: window.__notesPerf.early }));
  await page.waitForFunction(() => window.__notesPerf.marks.warm !== undefined);
  m.marks = await page.evaluate(() => ({ ...window.__notesPerf.marks }));
  opens.push(m);
}
const o = stats(opens.map((x) => x.interactive));
const last = opens[opens.length - 1];
say(`open to interactive (navigation start to the list shown and search enabled), ${reloads} reloads: median ${ms(o.p50)}, max ${ms(o.max)} (${opens.map((x) => ms(x.interactive)).join(', ')}); last: worker loaded ${ms(last.marks.workerLoaded)}, package and wasm loaded ${ms(last.marks.packageLoaded)}, connection open ${ms(last.marks.open)}, first data ${ms(last.marks.data)}, the page has it ${ms(last.marks.opened)}, search index ${ms(last.marks.searchReady)}, first commit readied ${ms(last.marks.warm)}`);
// A task over before the page's first module runs is the browser's commit of the navigation
// (the document and its script context made) or the HTML's parse, before the page's code.
const before = (x) => x.long.filter((t) => t.start + t.duration <= x.marks.module);
const own = (x) => x.long.filter((t) => t.start + t.duration > x.marks.module);
say(`open: longest main-thread task from the page's first module on ${ms(Math.max(...opens.map((x) => longest(own(x)))))}, before it (the navigation's commit) ${ms(Math.max(...opens.map((x) => longest(before(x)))))} (${opens.map((x) => x.long.map((t) => `${t.duration.toFixed(0)} ms at ${t.start.toFixed(0)}`).join(', ') || 'none').join(' | ')}; first module at ${opens.map((x) => ms(x.marks.module)).join(', ')}); early reads served ${opens.map((x) => (x.early ? `${x.early.served} of ${x.early.hinted}` : 'none')).join(', ')}`);
await page.waitForFunction(() => window.__notesPerf.marks.warm !== undefined);

// 3. Keystroke to results.
const queries = ['campaigns spend curated', 'orders grain join refunds', 'settled card wallet authorisation', 'inventory warehouse stock'];
await resetLong();
const timings = [];
const engine = [];
const parts = [];
for (let round = 0; round < keystrokes; round++) {
  for (const q of queries) {
    await page.evaluate(() => {
      window.__notesPerf.search = [];
      document.querySelector('#q').value = '';
    });
    await page.focus('#q');
    for (const ch of q) {
      await page.keyboard.type(ch);
      await page.waitForTimeout(120);
    }
    await page.waitForSelector('#results [role="option"]');
    const s = await page.evaluate(() => window.__notesPerf.search);
    timings.push(...s.map((x) => x.total));
    engine.push(...s.map((x) => x.engine));
    parts.push(...s.map((x) => x.parts));
  }
}
const k = stats(timings);
const e = stats(engine);
const ps = stats(parts.map((x) => x.search));
const pp = stats(parts.map((x) => x.passages));
say(`keystroke to rendered results, ${k.n} keystrokes: p50 ${k.p50.toFixed(1)} ms, p95 ${k.p95.toFixed(1)} ms, max ${k.max.toFixed(1)} ms (in the worker: p50 ${e.p50.toFixed(1)} ms, p95 ${e.p95.toFixed(1)} ms; of which the package's search p50 ${ps.p50.toFixed(1)} / p95 ${ps.p95.toFixed(1)} ms, the passages' get p50 ${pp.p50.toFixed(1)} / p95 ${pp.p95.toFixed(1)} ms)`);
say(`search: longest main-thread task ${ms(longest(await longTasks()))}`);

// 4. The first save after opening.
const saves = [];
for (let i = 0; i < saveRuns; i++) {
  await page.goto(`${server.url}/#/`);
  await page.reload();
  await ready();
  await page.waitForFunction(() => window.__notesPerf.marks.warm !== undefined);
  const id = await page.evaluate(() => window.notes.call('switcher', 'campaigns', 1).then((r) => r[0]));
  await page.evaluate((r) => (location.hash = `#/edit/${r.bundle}/${r.path}`), id);
  await page.waitForSelector('.cm-content');
  await page.waitForFunction(() => document.querySelector('.cm-content')?.textContent.length > 0);
  await resetLong();
  await page.click('.cm-content');
  await page.keyboard.press('Control+End');
  await page.keyboard.type(` ${i}`);
  const t = Date.now();
  await page.keyboard.press('Control+s');
  await page.waitForSelector('.banner.saved');
  const wall = Date.now() - t;
  const call = await page.evaluate(() => window.__notesPerf.marks.lastSaveMs);
  await page.waitForTimeout(3000);
  saves.push({ wall, call, long: longest(await longTasks()) });
}
const sv = stats(saves.map((s) => s.call));
say(`first save after opening, ${saveRuns} runs (each after its own reload): ${saves.map((s) => ms(s.call)).join(', ')} (Ctrl+S to the saved banner: ${saves.map((s) => ms(s.wall)).join(', ')}); median ${ms(sv.p50)}`);
say(`save: longest main-thread task ${ms(Math.max(...saves.map((s) => s.long)))} (including the derived record's encoding a second later, in the worker)`);
say(`load after the run: ${loadavg().map((x) => x.toFixed(2)).join(' ')}`);
if (errors.length) say(`page errors: ${errors.join('; ')}`);

await browser.close();
await server.close();
if (!opt('profile', null)) rmSync(profile, { recursive: true, force: true });
if (!args.includes('--keep') && !opt('corpus')) rmSync(corpus, { recursive: true, force: true });
