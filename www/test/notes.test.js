// End-to-end tests of writing and reading notes in headless Chromium, on the built page and
// the real langonrock package (its wasm engine in the page's worker, its IndexedDB store).
// The tests run in order and share one browser profile: notes made in one test are read by
// the next.

import { test, before, after, beforeEach } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import {
  launch,
  newPage,
  watch,
  go,
  nav,
  ready,
  shot,
  assertAccessible,
  source,
  body,
  bodyHas,
  setBody,
  appendBody,
  select,
  save,
  saved,
  errors,
  logTests,
} from './helpers.js';

logTests(beforeEach);

let env;
let page;
let url;

const ALPHA = '---\ntype: note\ntitle: Alpha\n---\nAlpha is the first note. It links to [[beta]] by a wiki link, and to [[Gamma ray]], which does not exist yet.\n';

const DESCRIPTION = 'The second note, with a passage far down and a description longer than the manifest’s summary cell, which stops at one hundred and twenty characters.';
const FILLER = Array.from({ length: 40 }, (_, i) => `Paragraph ${i + 1} talks about gardens, rivers and the weather in general terms, nothing more.`).join('\n\n');
const BETA = `---
type: note
title: Beta note
description: ${DESCRIPTION}
---

# Beta

${FILLER}

## Crossing rules

The zebra crossing protocol requires quokka approval before dawn.

${FILLER}
`;

before(async () => {
  env = await launch();
  url = env.server.url;
  page = await newPage(env.browser);
});

after(async () => {
  await env?.close();
});

test('an empty tenant opens with its start page; a hidden button is never shown', async () => {
  await go(page, url);
  assert.match(await page.textContent('main h1'), /Your notes, in this browser/);
  assert.equal(await page.isEnabled('#q'), true);
  // The `hidden` attribute wins over `button { display: inline-block }` and its kin.
  const shown = await page.evaluate(() => {
    const out = {};
    for (const [tag, cls] of [['button', ''], ['a', 'button'], ['button', 'primary']]) {
      const el = document.createElement(tag);
      el.className = cls;
      el.hidden = true;
      el.textContent = 'x';
      document.body.append(el);
      out[`${tag}.${cls}`] = getComputedStyle(el).display;
      el.remove();
    }
    return out;
  });
  assert.deepEqual(shown, { 'button.': 'none', 'a.button': 'none', 'button.primary': 'none' });
  await assertAccessible(page, 'the start page');
});

test('a new note: the frontmatter form, the Markdown editor, the preview, and the save', async () => {
  await nav(page, '#/new');
  await page.waitForSelector('.cm-content');
  // A new note has nothing to delete or look back on: those buttons are hidden, for real.
  assert.equal(await page.isVisible('#delete'), false);
  assert.equal(await page.isVisible('#note-history'), false);
  await page.fill('#field-title', 'Alpha');
  assert.equal(await page.inputValue('#field-path'), 'alpha.md', 'the file name follows the title');
  await page.fill('#field-bundle', 'notes');
  await setBody(page, 'Alpha is the first note. It links to [[beta]] by a wiki link, and to [[Gamma ray]], which does not exist yet.\n');
  // The split view's preview follows the text.
  await page.waitForFunction(() => document.querySelector('.preview-pane .rendered')?.textContent.includes('Alpha is the first note'));
  assert.equal(await page.getAttribute('.editor-modes [data-mode="split"]', 'aria-pressed'), 'true');
  await save(page);
  await saved(page);
  assert.equal((await source(page, 'notes', 'alpha.md')).content, ALPHA);
  // beta does not exist yet: the link is unresolved, and the compiler says so.
  assert.match(await page.textContent('.diag-area'), /unresolved link "beta"/);
  assert.equal(await page.isVisible('#delete'), true, 'a saved note can be deleted');
  await shot(page, 'editor');
  await assertAccessible(page, 'the editor');
  // The raw YAML is one click away, and the form is back with another.
  await page.click('#yaml-toggle');
  assert.equal(await page.inputValue('#yaml'), 'type: note\ntitle: Alpha');
  await page.click('#yaml-toggle');
  assert.equal(await page.isVisible('#field-title'), true);
  await assertAccessible(page, 'the editor with the raw YAML');
});

test('[[ completes titles and ids; the completion writes the id', async () => {
  await nav(page, '#/new');
  await page.waitForSelector('.cm-content');
  await page.fill('#field-bundle', 'notes');
  await page.fill('#field-path', 'beta.md');
  await setBody(page, '');
  // The form and the YAML: set everything through the raw YAML, then type the body.
  await page.click('#yaml-toggle');
  await page.fill('#yaml', `type: note\ntitle: Beta note\ndescription: ${DESCRIPTION}`);
  await page.click('#yaml-toggle');
  assert.equal(await page.inputValue('#field-title'), 'Beta note');
  await appendBody(page, BETA.slice(BETA.indexOf('---\n\n') + 4));
  await save(page);
  await saved(page);
  assert.equal((await source(page, 'notes', 'beta.md')).content, BETA, 'the note is stored exactly as written');

  await nav(page, '#/edit/notes/alpha.md');
  await bodyHas(page, 'Alpha is the first note');
  await appendBody(page, '\nSee also ');
  assert.ok((await body(page)).endsWith('yet.\n\nSee also '), JSON.stringify(await body(page)));
  // Typed key by key, as a person types: completion starts on typing.
  await page.keyboard.type('[[Bet', { delay: 30 });
  await page.waitForSelector('.cm-tooltip-autocomplete [role="option"]');
  // The answer to the last keystroke (the list may still show the one before it).
  await page.waitForTimeout(300);
  const options = await page.$$eval('.cm-tooltip-autocomplete [role="option"]', (os) => os.map((o) => o.textContent));
  assert.ok(options[0].startsWith('Beta note') && options[0].includes('beta'), `the title first, the id beside it: ${options}`);
  await shot(page, 'editor-completion');
  await page.keyboard.press('Enter');
  assert.match(await body(page), /See also \[\[beta\]\]$/m);
  await page.keyboard.insertText('.');
  await save(page);
  await saved(page);
  assert.match((await source(page, 'notes', 'alpha.md')).content, /See also \[\[beta\]\]\.\n?$/);
});

test('a note reads title first: the sidebar, links, backlinks with their sentence, the outline by heading text, the full description', async () => {
  await nav(page, '#/c/beta');
  await page.waitForSelector('.concept[data-id="beta"] .backlinks');
  assert.equal(await page.textContent('.concept h1'), 'Beta note');
  assert.equal(await page.textContent('.concept .description'), DESCRIPTION, 'the whole description, not the 120-unit summary');
  assert.deepEqual(await page.$$eval('.outline a', (as) => as.map((a) => a.textContent)), ['Beta', 'Crossing rules']);
  // Backlinks: alpha, by title, with the sentence that links here and the link text marked.
  assert.equal(await page.textContent('.backlinks .note-title'), 'Alpha');
  const contexts = await page.$$eval('.backlinks .context', (cs) => cs.map((c) => [c.textContent, c.querySelector('mark')?.textContent]));
  assert.deepEqual(contexts[0], ['It links to beta by a wiki link, and to Gamma ray, which does not exist yet.', 'beta']);
  // The note's own first heading is smaller than its title.
  const sizes = await page.evaluate(() => [parseFloat(getComputedStyle(document.querySelector('.concept-head h1')).fontSize), parseFloat(getComputedStyle(document.querySelector('article.rendered h1')).fontSize)]);
  assert.ok(sizes[0] > sizes[1], `title ${sizes[0]}px > first heading ${sizes[1]}px`);
  // The sidebar lists titles, the id beneath.
  const listed = await page.$$eval('#sidebar li a', (as) => as.map((a) => [a.querySelector('.note-title')?.textContent, a.querySelector('.note-id')?.textContent ?? null]));
  assert.deepEqual(listed, [
    ['Alpha', 'alpha'],
    ['Beta note', 'beta'],
  ]);
  // The outline scrolls to the heading it names.
  await page.click('.outline a:has-text("Crossing rules")');
  await page.waitForFunction(() => document.activeElement?.textContent === 'Crossing rules');
  await shot(page, 'concept');
  await assertAccessible(page, 'the note view');

  await nav(page, '#/c/alpha');
  await page.waitForSelector('.concept[data-id="alpha"] .links');
  assert.equal(await page.textContent('.side .links .note-title'), 'Beta note', 'links by title');
  await page.click('article.rendered a.wikilink.internal');
  await page.waitForFunction(() => location.hash === '#/c/beta');
});

test('a broken link creates the note it names', async () => {
  await nav(page, '#/c/alpha');
  await page.waitForSelector('article.rendered a.broken');
  assert.equal(await page.textContent('article.rendered a.broken'), 'Gamma ray');
  await page.click('article.rendered a.broken');
  await page.waitForFunction(() => location.hash.startsWith('#/new?'));
  await page.waitForSelector('.cm-content');
  assert.equal(await page.inputValue('#field-path'), 'Gamma ray.md');
  assert.equal(await page.inputValue('#field-title'), 'Gamma ray');
  assert.equal(await page.inputValue('#field-bundle'), 'notes');
  await setBody(page, 'Gamma rays are the third note.\n');
  await save(page);
  await saved(page);
  await nav(page, '#/c/alpha');
  await page.waitForFunction(() => [...document.querySelectorAll('.side .links .note-title')].map((a) => a.textContent).join() === 'Gamma ray,Beta note');
  assert.equal(await page.$('article.rendered a.broken'), null, 'no link is broken any more');
});

test('search shows titles and the matching passage; a hit opens at it, by keyboard', async () => {
  await nav(page, '#/c/alpha');
  await page.waitForSelector('.concept[data-id="alpha"]');
  await page.keyboard.press('/');
  assert.equal(await page.evaluate(() => document.activeElement.id), 'q');
  await page.keyboard.type('quokka approval', { delay: 20 });
  await page.waitForSelector('#results [role="option"] .hit-title');
  assert.equal(await page.textContent('#results [role="option"] .hit-title'), 'Beta note');
  assert.match(await page.textContent('#results [role="option"] .hit-meta'), /^beta · notes$/);
  assert.match(await page.textContent('#results [role="option"] .hit-passage-text'), /zebra crossing protocol requires quokka approval before dawn/);
  assert.deepEqual(await page.$$eval('#results [role="option"] .hit-passage-text mark', (ms) => ms.map((m) => m.textContent)), ['quokka', 'approval']);
  await shot(page, 'search');
  await assertAccessible(page, 'search results');
  await page.keyboard.press('ArrowDown');
  assert.equal(await page.getAttribute('#q', 'aria-activedescendant'), 'hit-0');
  await page.keyboard.press('Enter');
  await page.waitForFunction(() => location.hash.startsWith('#/c/beta?'));
  await page.waitForSelector('.hit-passage mark');
  const marked = await page.$$eval('.hit-passage mark', (ms) => ms.map((m) => m.textContent.toLowerCase()));
  assert.deepEqual([...new Set(marked)].sort(), ['approval', 'quokka']);
  const box = await page.$eval('.hit-passage', (el) => {
    const r = el.getBoundingClientRect();
    return { top: r.top, bottom: r.bottom, height: innerHeight };
  });
  assert.ok(box.top >= 0 && box.bottom <= box.height, `the passage is on screen: ${JSON.stringify(box)}`);
  await shot(page, 'search-hit');
});

test('the quick switcher (Ctrl+K) opens a note by title; the command palette runs commands; ? lists the shortcuts', async () => {
  await nav(page, '#/');
  await page.waitForSelector('main h1');
  await page.keyboard.press('Control+k');
  await page.waitForSelector('dialog.picker[open] #picker-input');
  // Empty: the notes opened recently, newest first.
  await page.waitForSelector('#picker-list [role="option"]');
  assert.equal(await page.textContent('#picker-list [role="option"] .hit-title'), 'Beta note');
  await page.keyboard.type('gam');
  await page.waitForFunction(() => document.querySelector('#picker-list [role="option"] .hit-title')?.textContent === 'Gamma ray');
  await shot(page, 'switcher');
  await assertAccessible(page, 'the quick switcher');
  await page.keyboard.press('Enter');
  await page.waitForFunction(() => location.hash === `#/c/${encodeURIComponent('Gamma_ray')}`);
  await page.waitForSelector('.concept h1');
  assert.equal(await page.textContent('.concept h1'), 'Gamma ray');

  // The palette: commands for the note on view, and the page's own.
  await page.keyboard.press('Control+Shift+P');
  await page.waitForSelector('dialog.picker[open]');
  assert.equal(await page.inputValue('#picker-input'), '> ');
  await page.keyboard.type('history of');
  await page.waitForFunction(() => document.querySelector('#picker-list [role="option"]')?.textContent.startsWith('History of this note'));
  await shot(page, 'palette');
  await assertAccessible(page, 'the command palette');
  await page.keyboard.press('Enter');
  await page.waitForFunction(() => location.hash === `#/log/notes/${encodeURIComponent('Gamma ray.md')}`);

  await page.keyboard.press('Shift+?');
  await page.waitForSelector('dialog.shortcuts[open]');
  const keys = await page.$$eval('.shortcut-list dt', (ds) => ds.map((d) => d.textContent));
  assert.ok(keys.includes('Ctrl+K') && keys.includes('Ctrl+S') && keys.includes('[['), `the shortcuts are listed: ${keys}`);
  await assertAccessible(page, 'the shortcuts');
  await page.keyboard.press('Escape');
  await page.waitForFunction(() => !document.querySelector('dialog.shortcuts'));
});

test('an edit that conflicts with a second tab is resolved with nothing lost', async () => {
  await nav(page, '#/edit/notes/beta.md');
  await bodyHas(page, 'quokka');

  const other = watch(await page.context().newPage());
  await go(other, url, '#/edit/notes/beta.md');
  await bodyHas(other, 'quokka');
  await other.fill('#field-title', 'Beta note, edited in the other tab');
  await save(other);
  await saved(other);

  // This tab hears of the new head and says so, keeping what it has.
  await page.waitForSelector('.banner.elsewhere');
  await appendBody(page, 'Added in the first tab.\n');
  await save(page);
  await page.waitForSelector('section.conflict');
  assert.match(await page.textContent('section.conflict pre.mine'), /Added in the first tab\./);
  assert.doesNotMatch(await page.textContent('section.conflict pre.mine'), /edited in the other tab/);
  assert.match(await page.textContent('section.conflict pre.theirs'), /title: Beta note, edited in the other tab/);
  assert.match(await page.textContent('section.conflict .diff'), /Added in the first tab/);
  await shot(page, 'conflict');
  await assertAccessible(page, 'the conflict view');
  assert.match((await source(page, 'notes', 'beta.md')).content, /edited in the other tab/, 'nothing was overwritten');

  await page.click('section.conflict button:has-text("Merge both")');
  assert.equal(await page.inputValue('#field-title'), 'Beta note, edited in the other tab');
  assert.match(await body(page), /Added in the first tab\./);
  await save(page);
  await saved(page);
  const stored = (await source(page, 'notes', 'beta.md')).content;
  assert.equal(stored, BETA.replace('title: Beta note', 'title: Beta note, edited in the other tab') + 'Added in the first tab.\n');

  // The other tab follows: its note view shows the merged note.
  await nav(other, '#/c/beta');
  await other.waitForFunction(() => document.querySelector('.concept h1')?.textContent === 'Beta note, edited in the other tab');
  await other.waitForFunction(() => document.querySelector('article.rendered')?.textContent.includes('Added in the first tab.'));
  await other.close();
});

test('a note’s own history: its versions, what each changed, and restoring one', async () => {
  await nav(page, '#/c/beta');
  await page.waitForSelector('.concept[data-id="beta"]');
  await page.keyboard.press('h');
  await page.waitForFunction(() => location.hash === '#/log/notes/beta.md');
  await page.waitForFunction(() => document.querySelectorAll('#note-versions > li').length === 3);
  // Newest first: the merge, the other tab's edit, the creation. Alpha's saves are not here.
  const kinds = await page.$$eval('#note-versions > li .badge', (bs) => bs.map((b) => b.textContent));
  assert.deepEqual(kinds, ['modified', 'modified', 'added']);
  await page.click('#note-versions > li:nth-child(2) button:has-text("Show the changes")');
  await page.waitForSelector('#note-versions > li:nth-child(2) .diff');
  const diff = await page.textContent('#note-versions > li:nth-child(2) .diff');
  assert.match(diff, /- title: Beta note\s*\+ title: Beta note, edited in the other tab/);
  await shot(page, 'note-history');
  await assertAccessible(page, 'a note’s history');
  // A commit while the history is open (here, or in another tab) puts its version on top and
  // leaves the list as it was: the diff opened stays open (it used to be drawn anew, closed).
  await page.$eval('#note-versions > li:nth-child(2) .diff', (d) => (d.dataset.opened = 'yes'));
  await page.evaluate(async () => {
    const now = await window.notes.call('readSource', 'notes', 'beta.md');
    await window.notes.call('write', 'notes', 'beta.md', `${now.content}A line written while the history is open.\n`, now.hash);
  });
  await page.waitForFunction(() => document.querySelectorAll('#note-versions > li').length === 4);
  assert.deepEqual(await page.$$eval('#note-versions > li .badge', (bs) => bs.map((b) => b.textContent)), ['modified', 'modified', 'modified', 'added']);
  assert.equal(await page.getAttribute('#note-versions > li:nth-child(3) .diff', 'data-opened'), 'yes', 'the diff opened is the same, still open');
  assert.equal(await page.getAttribute('#note-versions > li:nth-child(3) button[aria-expanded]', 'aria-expanded'), 'true');
  // Restore the first version: a new revision on top, the text as it was.
  await page.click('#note-versions > li:nth-child(4) button.restore');
  await page.click('dialog button[value="yes"]');
  await page.waitForFunction(() => document.querySelectorAll('#note-versions > li').length === 5);
  assert.equal((await source(page, 'notes', 'beta.md')).content, BETA);
});

test('the tenant’s history shows each revision; one is restored; older pages only when there are some', async () => {
  await nav(page, '#/history');
  await page.waitForFunction(() => document.querySelectorAll('table.list tbody tr').length >= 7);
  const rows = await page.$$eval('table.list tbody tr', (rs) => rs.length);
  assert.equal(await page.isVisible('#older'), false, `${rows} revisions fit one page: no "Older revisions" button`);
  await shot(page, 'history');
  await assertAccessible(page, 'history');
  // The revision that created beta.
  const created = await page.evaluate(async () => {
    const h = await window.notes.call('history', undefined, 50);
    for (const r of h.revisions) {
      const m = await window.notes.call('revision', r.revision);
      if (m.changes.some((c) => c.path === 'beta.md' && c.change === 'added')) return r.revision;
    }
    return null;
  });
  await nav(page, `#/history/${created}`);
  await page.waitForSelector('ul.changes .diff');
  assert.match(await page.textContent('ul.changes .diff'), /\+ The zebra crossing protocol requires quokka approval before dawn\./);
  await shot(page, 'revision');
  await assertAccessible(page, 'a revision');
  await page.click('button:has-text("Restore this revision")');
  await page.click('dialog button[value="yes"]');
  await page.waitForFunction(() => location.hash === '#/history');
  await page.waitForFunction((n) => document.querySelectorAll('table.list tbody tr').length === n + 1, rows);
  assert.equal((await source(page, 'notes', 'beta.md')).content, BETA);
  assert.equal((await source(page, 'notes', 'alpha.md')).content, ALPHA, 'alpha as it was then');
  assert.equal(await source(page, 'notes', 'Gamma ray.md'), null, 'gamma did not exist yet');
});

test('a frontmatter that does not parse: the raw text and the error, and the note still saves', async () => {
  const bad = '---\ntype: note\ntitle: [unclosed\n---\n\nThe body is fine.\n';
  await page.evaluate((t) => window.notes.call('write', 'notes', 'broken.md', t, undefined), bad);
  await nav(page, '#/edit/notes/broken.md');
  await bodyHas(page, 'The body is fine.');
  assert.equal(await page.isVisible('#yaml'), true, 'the raw YAML is shown');
  assert.equal(await page.inputValue('#yaml'), 'type: note\ntitle: [unclosed');
  assert.match(await page.textContent('#yaml-problem'), /The form cannot show this frontmatter: the frontmatter is not valid YAML: /);
  await assertAccessible(page, 'the editor with a broken frontmatter');
  await appendBody(page, 'More text.\n');
  await save(page);
  await saved(page);
  assert.equal((await source(page, 'notes', 'broken.md')).content, `${bad}More text.\n`);
  // Fixing it in the YAML brings the form back.
  await page.fill('#yaml', 'type: note\ntitle: Fixed');
  await page.waitForFunction(() => document.querySelector('#yaml-problem').hidden);
  await page.click('#yaml-toggle');
  assert.equal(await page.inputValue('#field-title'), 'Fixed');
  await save(page);
  await saved(page);
  assert.equal((await source(page, 'notes', 'broken.md')).content, '---\ntype: note\ntitle: Fixed\n---\n\nThe body is fine.\nMore text.\n');
});

test('a 10 MB note opens, renders its first part, edits and saves', async () => {
  const line = 'A line of a very long note about rivers, gardens and the weather, repeated.\n';
  const big = `---\ntype: note\ntitle: Huge\n---\n# Huge\n\n${line.repeat(Math.ceil((10 * 1024 * 1024) / line.length))}`;
  // The engine is in the worker: the page itself loads no WebAssembly, and its main thread
  // keeps ticking while the worker compiles and stores the 10 MB note.
  const run = await page.evaluate(async (t) => {
    let last = performance.now();
    let worst = 0;
    const beat = setInterval(() => {
      const now = performance.now();
      worst = Math.max(worst, now - last);
      last = now;
    }, 4);
    const t0 = performance.now();
    await window.notes.call('write', 'notes', 'huge.md', t, undefined);
    const took = performance.now() - t0;
    clearInterval(beat);
    return { took, worst, wasm: performance.getEntriesByType('resource').filter((e) => /\.wasm$/.test(new URL(e.name).pathname)).length };
  }, big);
  assert.equal(run.wasm, 0, 'the page fetched no WebAssembly: the engine runs in its worker');
  assert.ok(run.worst < run.took / 2, `the main thread ran on while the worker wrote: ${JSON.stringify(run)}`);
  await nav(page, '#/c/huge');
  await page.waitForSelector('.concept[data-id="huge"] article.rendered');
  const more = await page.textContent('.concept button:has-text("Show the rest")');
  assert.match(more, /more characters\)$/);
  assert.ok((await page.textContent('article.rendered')).length < 200_000, 'only the first part is rendered');
  await nav(page, '#/edit/notes/huge.md');
  await bodyHas(page, 'A line of a very long note');
  await select(page, 0);
  await page.keyboard.insertText('Start. ');
  await save(page);
  await saved(page);
  // Asked at once, the entry names the version just saved (the worker re-reads its listing a
  // moment after a commit; a hash asked for before that used to be the one before the save).
  const entry = await page.evaluate(() => window.notes.call('entry', 'notes', 'huge.md'));
  const stored = await source(page, 'notes', 'huge.md');
  assert.equal(entry.hash, stored.hash, 'the entry is the saved version');
  assert.equal(stored.content.length, big.length + 'Start. '.length);
  assert.ok(stored.content.startsWith('---\ntype: note\ntitle: Huge\n---\nStart. # Huge\n'));
  await page.evaluate((hash) => window.notes.call('remove', 'notes', 'huge.md', hash), entry.hash);
});

test('notifications are in words, with the code in the details, and can be dismissed', async () => {
  await nav(page, '#/new');
  await page.waitForSelector('.cm-content');
  await page.fill('#field-bundle', 'notes');
  await page.fill('#field-path', 'a:b.md');
  await setBody(page, 'x\n');
  await save(page);
  await page.waitForSelector('.save-failed');
  const text = await page.textContent('.save-failed');
  assert.match(text, /^Could not save the note: invalid path "a:b\.md": segment "a:b\.md" holds ":", which Windows file names cannot hold/);
  assert.match(await page.textContent('.save-failed details code'), /^INVALID: invalid path/);
  const words = await page.$eval('.save-failed', (el) => [...el.childNodes].filter((n) => n.nodeName !== 'DETAILS').map((n) => n.textContent).join(''));
  assert.doesNotMatch(words, /INVALID/, 'the code is only in the details');
  // A notification in the corner: words, details, and a close button.
  await page.evaluate(() => window.notes.engine.dispatchEvent(new CustomEvent('failed', { detail: Object.assign(new Error('invalid bundle name "no such bundle": expected 1-64 chars of [a-z0-9_-]'), { code: 'INVALID' }) })));
  await page.waitForSelector('#notices .notice.error');
  assert.match(await page.textContent('#notices .notice.error p'), /^invalid bundle name "no such bundle": expected 1-64 chars of \[a-z0-9_-\]\.$/);
  assert.match(await page.textContent('#notices .notice.error details code'), /^INVALID: /);
  await assertAccessible(page, 'a notification');
  await page.click('#notices .notice.error .close');
  assert.equal(await page.$('#notices .notice'), null);
  assert.equal(await page.isVisible('#notices'), false);
  // Leaving the unsaved note asks first.
  await nav(page, '#/');
  await page.waitForSelector('dialog[open]');
  assert.match(await page.textContent('dialog[open]'), /Leave the editor\? Your unsaved text will be lost\./);
  await page.click('dialog button[value="yes"]');
  await page.waitForFunction(() => location.hash === '#/' && document.querySelector('main h1')?.textContent === 'Notes');
});

test('storage full: a clear message, the text kept, nothing lost', async () => {
  // A fresh profile whose origin may store 600 kB (Chromium's quota override, set before the
  // page writes anything; the service worker's cache is left out of it).
  const ctx = await env.browser.newContext({ serviceWorkers: 'block' });
  const p = watch(await ctx.newPage());
  const cdp = await ctx.newCDPSession(p);
  await cdp.send('Storage.overrideQuotaForOrigin', { origin: url, quotaSize: 600_000 });
  await go(p, url, '#/new?bundle=notes&path=keep.md&title=Keep');
  await p.waitForSelector('.cm-content');
  await setBody(p, 'A note that is stored.\n');
  await save(p);
  await saved(p);
  const before = await source(p, 'notes', 'keep.md');
  const head = await p.evaluate(() => window.notes.call('headRevision'));
  // A megabyte of text that does not compress: more than the quota leaves.
  await setBody(p, `A note that is stored.\nMore words that will not fit. ${randomBytes(600_000).toString('base64')}\n`);
  await save(p);
  await p.waitForSelector('.save-failed');
  assert.match(await p.textContent('.save-failed'), /This browser has no room left for these notes \(its storage quota is full\), so nothing was saved\. Your text is still here/);
  assert.match(await p.textContent('.save-failed details code'), /^STORE: IndexedDB transaction aborted: the browser's storage quota is exceeded \(QuotaExceededError\)/);
  await shot(p, 'quota');
  assert.ok((await body(p)).includes('More words that will not fit.'), 'the text is still in the editor');
  assert.deepEqual(await source(p, 'notes', 'keep.md'), before, 'the stored note is as it was');
  assert.equal(await p.evaluate(() => window.notes.call('headRevision')), head, 'no revision was made');
  // With room again, the same save lands.
  await cdp.send('Storage.overrideQuotaForOrigin', { origin: url });
  await save(p);
  await saved(p);
  assert.match((await source(p, 'notes', 'keep.md')).content, /More words that will not fit\./);
  await ctx.close();
});

test('the list, the editor and the note view work from the keyboard', async () => {
  await go(page, url, '#/');
  await page.waitForSelector('#sidebar li a .note-title');
  await page.focus('#sidebar button.bundle-toggle');
  await page.keyboard.press('ArrowDown');
  assert.equal(await page.evaluate(() => document.activeElement.querySelector('.note-title')?.textContent), 'Alpha');
  await page.keyboard.press('ArrowDown');
  assert.equal(await page.evaluate(() => document.activeElement.querySelector('.note-title')?.textContent), 'Beta note');
  await page.keyboard.press('Enter');
  await page.waitForFunction(() => location.hash === '#/c/beta');
  await page.waitForSelector('.concept[data-id="beta"]');
  await page.keyboard.press('e');
  await page.waitForFunction(() => location.hash === '#/edit/notes/beta.md');
  await page.waitForFunction(() => document.activeElement?.closest('.cm-content'));
  await page.keyboard.press('/');
  assert.ok(await page.evaluate(() => !!document.activeElement.closest('.cm-content')), '/ types into the editor');
  await page.keyboard.press('Backspace');
  // Ctrl+Shift+E cycles write, split and preview.
  await page.keyboard.press('Control+Shift+E');
  assert.equal(await page.getAttribute('.panes', 'data-mode'), 'preview');
  assert.ok(await page.evaluate(() => !!document.activeElement.closest('.preview-pane')), 'the focus follows into the preview');
  await page.keyboard.press('Control+Shift+E');
  assert.equal(await page.getAttribute('.panes', 'data-mode'), 'write');
  assert.ok(await page.evaluate(() => !!document.activeElement.closest('.cm-content')), 'and back into the editor');
  await page.keyboard.press('Control+Shift+E');
  assert.equal(await page.getAttribute('.panes', 'data-mode'), 'split');
  await page.keyboard.press('Control+s');
  await saved(page);
  assert.equal((await source(page, 'notes', 'beta.md')).content, BETA, 'typing and removing a character leaves the note as it was');
});

test('leaving an editor that is still reading its note asks nothing', async () => {
  // The moment the editor's view is on screen it is reading the note from the worker; a
  // change of route then leaves it without a prompt (it had nothing to lose).
  await nav(page, '#/');
  await page.waitForSelector('main h1');
  const outcome = await page.evaluate(
    () =>
      new Promise((resolve) => {
        const main = document.querySelector('main');
        const seen = new MutationObserver(() => {
          if (!main.querySelector('.editor-view')) return;
          seen.disconnect();
          location.hash = '#/c/alpha';
          const wait = () => {
            if (document.querySelector('dialog[open]')) resolve('a prompt: ' + document.querySelector('dialog[open]').textContent);
            else if (document.querySelector('.concept[data-id="alpha"]')) resolve('left');
            else requestAnimationFrame(wait);
          };
          wait();
        });
        seen.observe(main, { childList: true, subtree: true });
        location.hash = '#/edit/notes/beta.md';
      }),
  );
  assert.equal(outcome, 'left');
  assert.equal(await page.evaluate(() => location.hash), '#/c/alpha');
  // Back to the editor, loaded, as the next test expects to find the page.
  await nav(page, '#/edit/notes/beta.md');
  await bodyHas(page, 'quokka approval');
});

test('after a reload everything is still there, and the page works offline', async () => {
  await page.reload();
  await ready(page);
  await page.waitForFunction(() => [...document.querySelectorAll('#sidebar .note-title')].map((t) => t.textContent).join() === 'Alpha,Beta note,Fixed');
  assert.equal((await source(page, 'notes', 'beta.md')).content, BETA);
  await page.evaluate(async () => {
    await navigator.serviceWorker.ready;
    if (!navigator.serviceWorker.controller) await new Promise((r) => navigator.serviceWorker.addEventListener('controllerchange', r, { once: true }));
  });
  await nav(page, '#/c/alpha');
  await page.context().setOffline(true);
  try {
    await page.reload();
    await ready(page);
    await page.waitForSelector('.concept[data-id="alpha"] article.rendered');
    assert.match(await page.textContent('article.rendered'), /Alpha is the first note/);
    // The editor's code loads on demand: offline too.
    await nav(page, '#/edit/notes/alpha.md');
    await bodyHas(page, 'Alpha is the first note');
  } finally {
    await page.context().setOffline(false);
  }
});

test('an open reads ahead what the last one read and wrote, and opens as well when that is gone', async () => {
  const p = await newPage(env.browser);
  const db = `early-${randomBytes(4).toString('hex')}`;
  const TEXT = '---\ntitle: Early\n---\nRead ahead of the engine.\n';
  const hintKey = `langonrock-notes:open:${db}:notes`;
  const early = () => p.evaluate(() => window.__notesPerf.early);
  try {
    await go(p, url, `?db=${db}#/`);
    // A save, then its derived record written: the worker remembers the head's revision
    // record (the save wrote it) and the derived record (written on the page's request).
    await p.evaluate((t) => window.notes.call('write', 'notes', 'early.md', t, undefined), TEXT);
    await p.evaluate(() => window.notes.call('flushDerived'));
    const hint = await p.evaluate((k) => JSON.parse(localStorage.getItem(k)), hintKey);
    assert.deepEqual(hint.map((k) => k.split('/')[0]).sort(), ['derived', 'revision']);
    // The next open is answered from the two early reads.
    await p.reload();
    await ready(p);
    assert.deepEqual(await early(), { hinted: 2, served: 2 });
    assert.equal((await source(p, 'notes', 'early.md')).content, TEXT);
    // Records that are not there (the head moved on elsewhere): nothing served early, and the
    // open reads what it needs.
    await p.evaluate((k) => localStorage.setItem(k, JSON.stringify([`revision/${'0'.repeat(64)}`, `derived/${'1'.repeat(64)}`])), hintKey);
    await p.reload();
    await ready(p);
    assert.deepEqual(await early(), { hinted: 2, served: 0 });
    assert.equal((await source(p, 'notes', 'early.md')).content, TEXT);
    // A hint that is not one: ignored.
    await p.evaluate((k) => localStorage.setItem(k, '{not json'), hintKey);
    await p.reload();
    await ready(p);
    assert.deepEqual(await early(), { hinted: 0, served: 0 });
    assert.equal((await source(p, 'notes', 'early.md')).content, TEXT);
  } finally {
    await p.context().close();
  }
});

test('a new note at a taken path shows both versions; a note is deleted, and history shows it', async () => {
  await nav(page, '#/new');
  await page.waitForSelector('.cm-content');
  await page.fill('#field-bundle', 'notes');
  await page.fill('#field-path', 'beta.md');
  await setBody(page, 'A different beta.\n');
  await save(page);
  await page.waitForSelector('section.conflict');
  assert.match(await page.textContent('section.conflict'), /A note already exists at notes\/beta\.md/);
  assert.equal((await source(page, 'notes', 'beta.md')).content, BETA, 'nothing was overwritten');
  await page.click('section.conflict button:has-text("Take theirs")');
  await page.click('dialog button[value="yes"]');
  await bodyHas(page, 'quokka approval');
  assert.equal(await page.textContent('#editor-h'), 'Editing “Beta note”', 'the editor now edits the stored note');

  await nav(page, '#/c/alpha');
  await page.waitForSelector('.concept[data-id="alpha"]');
  await page.click('.concept .toolbar button.danger');
  await page.click('dialog button[value="yes"]');
  await page.waitForFunction(() => location.hash === '#/');
  await page.waitForFunction(() => ![...document.querySelectorAll('#sidebar .note-title')].some((t) => t.textContent === 'Alpha'));
  assert.equal(await source(page, 'notes', 'alpha.md'), null);
  await nav(page, '#/c/beta');
  await page.waitForSelector('.concept .side');
  assert.equal((await page.textContent('#backlinks-h')).trim(), 'Backlinks (0)');
});

test('no page reported an error', () => {
  assert.deepEqual(errors, []);
});
