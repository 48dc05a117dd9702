// What the end-to-end tests share: Debian's Chromium driven by playwright-core (no browser is
// downloaded), the built page (www/dist) served on loopback, readiness, the CodeMirror editor,
// axe-core, and screenshots. Screenshots go to www/artifacts/screenshots (not tracked: CI keeps
// them as artifacts); `scripts/www-screenshots.sh` points SCREENSHOTS_DIR at a folder of its
// own and copies a chosen set into docs/screenshots.

import assert from 'node:assert/strict';
import { appendFileSync, existsSync, mkdirSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createRequire } from 'node:module';
import { chromium } from 'playwright-core';
import { serve } from './server.js';

const require = createRequire(import.meta.url);
export const www = fileURLToPath(new URL('..', import.meta.url));
export const repo = join(www, '..');
export const dist = join(www, 'dist');
export const samples = join(repo, 'tests', 'data', 'okf-samples');
const shots = process.env.SCREENSHOTS_DIR ? resolve(process.env.SCREENSHOTS_DIR) : join(www, 'artifacts', 'screenshots');
const executablePath = process.env.CHROMIUM ?? '/usr/bin/chromium';
const FLAGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'];
export const DESKTOP = { width: 1280, height: 860 };
export const PHONE = { width: 360, height: 740 };

/** Every page error and console error of every page watched, for the last test to check. */
export const errors = [];

export async function launch() {
  assert.ok(existsSync(executablePath), `no Chromium at ${executablePath}: run scripts/wasm-setup.sh`);
  assert.ok(existsSync(join(dist, 'index.html')), 'www/dist is missing: run `npm run build` in www/ (scripts/www-test.sh does)');
  const server = await serve(dist);
  const browser = await chromium.launch({ executablePath, args: FLAGS, headless: true });
  return { server, browser, close: async () => (await browser.close(), await server.close()) };
}

/** Errors the page is expected to log (a test that provokes them says so). */
export const expected = [];

/**
 * With WWW_LOG=<file>, every console message of the pages watched and of their workers, and
 * each test's start (`logTests`), go to that file with the time: what a failed run did, in
 * order (the page logs nothing on its own, so add `console.debug` lines where you look).
 */
const trace = process.env.WWW_LOG;
const traceLine = (t) => appendFileSync(trace, `${new Date().toISOString().slice(11, 23)} ${t}\n`);

/** Marks each test's start in the WWW_LOG file (call with node:test's `beforeEach`). */
export function logTests(beforeEach) {
  if (trace) beforeEach((t) => traceLine(`=== ${t.name}`));
}

export function watch(p) {
  if (trace) {
    const log = (t) => traceLine(`${p.url().replace(/^http:\/\/[^/]+/, '')} ${t}`);
    p.on('console', (m) => log(`[${m.type()}] ${m.text()}`));
    p.on('pageerror', (e) => log(`[pageerror] ${e}`));
    p.on('worker', (w) => w.on('console', (m) => log(`[worker ${m.type()}] ${m.text()}`)));
  }
  p.on('pageerror', (e) => errors.push(`${p.url()}: ${e}`));
  p.on('console', (m) => {
    if (m.type() !== 'error') return;
    const t = m.text();
    if (expected.some((re) => re.test(t))) return;
    errors.push(`${p.url()}: ${t}`);
  });
  p.setDefaultTimeout(Number(process.env.WWW_TIMEOUT_MS ?? 30_000));
  return p;
}

export async function newPage(browser, options = {}) {
  const context = await browser.newContext({ viewport: DESKTOP, ...options });
  return watch(await context.newPage());
}

export async function ready(p) {
  await p.waitForSelector('body[data-ready]', { timeout: 60_000 });
  const state = await p.getAttribute('body', 'data-ready');
  if (state !== 'true') assert.fail(`the page did not open: ${await p.textContent('main')}`);
}

export async function go(p, url, hash = '#/') {
  await p.goto(`${url}/${hash}`);
  await ready(p);
}

/** Navigates within the open page (no reload). */
export async function nav(p, hash) {
  await p.evaluate((h) => (location.hash = h), hash);
}

export async function shot(p, name) {
  mkdirSync(shots, { recursive: true });
  await p.screenshot({ path: join(shots, `${name}.png`) });
}

/** axe-core's serious and critical violations on the page as it is now. */
export async function axe(p) {
  if (!(await p.evaluate(() => 'axe' in window))) await p.addScriptTag({ path: require.resolve('axe-core/axe.min.js') });
  const result = await p.evaluate(async () => {
    // eslint-disable-next-line no-undef
    const r = await axe.run(document, { resultTypes: ['violations'] });
    return r.violations.map((v) => ({ id: v.id, impact: v.impact, help: v.help, nodes: v.nodes.map((n) => n.target.join(' ')).slice(0, 5) }));
  });
  return result.filter((v) => v.impact === 'serious' || v.impact === 'critical');
}

export async function assertAccessible(p, view) {
  const bad = await axe(p);
  assert.deepEqual(bad, [], `axe-core on ${view}: ${JSON.stringify(bad, null, 1)}`);
}

/** The stored source of a document, read through the page's engine worker. */
export const source = (p, bundle, path) => p.evaluate(([b, q]) => window.notes.call('readSource', b, q), [bundle, path]);

/** The editor's whole body text (CodeMirror draws only the lines in view). */
export const body = (p) => p.evaluate(() => document.querySelector('.cm-editor')?.notesEditor?.state.doc.toString() ?? null);

/** Waits until the editor's body holds `text`. */
export const bodyHas = (p, text) => p.waitForFunction((t) => document.querySelector('.cm-editor')?.notesEditor?.state.doc.toString().includes(t), text);

/** Focuses the editor with the selection from `anchor` to `head` (offsets; -1: the end). */
export const select = (p, anchor, head = anchor) =>
  p.evaluate(
    ([a, b]) => {
      const v = document.querySelector('.cm-editor').notesEditor;
      const end = v.state.doc.length;
      v.focus();
      v.dispatch({ selection: { anchor: a < 0 ? end : a, head: b < 0 ? end : b } });
    },
    [anchor, head],
  );

/** Replaces the editor's body with `text`, as typed. */
export async function setBody(p, text) {
  await p.waitForSelector('.cm-content');
  await select(p, 0, -1);
  if (text === '') await p.keyboard.press('Delete');
  else await p.keyboard.insertText(text);
}

/** Appends text at the end of the editor's body (as one input; the cursor after it). */
export async function appendBody(p, text) {
  await p.waitForSelector('.cm-content');
  await p.evaluate((t) => {
    const v = document.querySelector('.cm-editor').notesEditor;
    const end = v.state.doc.length;
    v.focus();
    v.dispatch({ changes: { from: end, insert: t }, selection: { anchor: end + t.length }, userEvent: 'input.type' });
  }, text);
}

/** Ctrl+S, after taking away the banner of an earlier save so that `saved` waits for this one. */
export async function save(p) {
  await p.evaluate(() => document.querySelectorAll('.banner.saved').forEach((b) => b.remove()));
  await p.keyboard.press('Control+s');
}

/** Waits for the editor's saved banner of the last `save`. */
export async function saved(p) {
  await p.waitForSelector('.banner.saved');
}

/** The bundle documents of a folder as `<bundle>/<path>` → bytes, as compile.md §1.1 reads it. */
export function folderDocuments(root) {
  const out = new Map();
  const walk = (dir) => {
    for (const name of readdirSync(dir)) {
      if (name.startsWith('.')) continue;
      const full = join(dir, name);
      if (statSync(full).isDirectory()) walk(full);
      else if (/\.md$/i.test(name) && relative(root, full).includes(sep)) out.set(relative(root, full).split(sep).join('/'), readFileSync(full));
    }
  };
  walk(root);
  return out;
}

/**
 * Whether the page is wider than its viewport: the document's scroll width, and the elements
 * that reach past the right edge without a scrolling or clipping box around them (a table or
 * a code block that scrolls inside its own box is fine; one that pushes the page is not).
 */
export const overflow = (p) =>
  p.evaluate(() => {
    const w = document.documentElement.clientWidth;
    const contained = (el) => {
      for (let a = el; a && a !== document.body; a = a.parentElement) {
        const cs = getComputedStyle(a);
        if (cs.position === 'fixed') return true;
        if (a !== el && cs.overflowX !== 'visible' && a.getBoundingClientRect().right <= w + 1) return true;
      }
      return false;
    };
    const wide = [...document.querySelectorAll('body *')].filter((el) => {
      const r = el.getBoundingClientRect();
      if (r.width === 0 || contained(el)) return false;
      // The box itself reaches past the edge, or its text spills out of it.
      const spills = getComputedStyle(el).overflowX === 'visible' && el.scrollWidth > el.clientWidth + 1 && r.left + el.scrollWidth > w + 1;
      return r.right > w + 1 || spills;
    });
    const leaves = wide.filter((el) => !wide.some((o) => o !== el && el.contains(o)));
    return { scrollWidth: document.documentElement.scrollWidth, width: w, wide: leaves.slice(0, 5).map((el) => `${el.tagName.toLowerCase()}${el.id ? `#${el.id}` : ''}.${[...el.classList].join('.')} (${Math.round(el.getBoundingClientRect().right)})`) };
  });
