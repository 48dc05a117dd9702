// Every view of the page, in headless Chromium: axe-core finds no serious or critical problem
// in the light theme or the dark one (prefers-color-scheme: dark), nothing is cut off or
// scrolls sideways on a 360 px phone, the list of notes is a drawer there, and the theme
// toggle overrides the system's choice and is remembered. Screenshots of each.

import { test, before, after, beforeEach } from 'node:test';
import assert from 'node:assert/strict';
import { launch, newPage, go, nav, shot, assertAccessible, overflow, samples, errors, logTests, PHONE, DESKTOP } from './helpers.js';

logTests(beforeEach);

let env;
let url;

before(async () => {
  env = await launch();
  url = env.server.url;
});

after(async () => {
  await env?.close();
});

const NOTE = '---\ntype: note\ntitle: A note with a rather long title that has to wrap on a phone screen\ndescription: What this note is about, in one sentence that is long enough to wrap.\n---\n\n# First heading\n\nIt links to [[other]] and to [[missing note]].\n\n## A second heading\n\n| a | table | with | many | columns | that | would | not | fit |\n|---|---|---|---|---|---|---|---|---|\n| 1 | 2 | 3 | 4 | 5 | 6 | 7 | 8 | 9 |\n\n```\na code block with a very long line that would not fit on a phone screen at all, so it scrolls\n```\n';
const OTHER = '---\ntype: note\ntitle: Other\n---\n\nThe other note links back to [[long_note_with_an_id_that_is_long]].\n';

/** Fills a fresh profile: the samples, two notes of our own and an edit (for the history). */
async function fill(p) {
  await go(p, url, '#/transfer');
  await p.setInputFiles('#folder-input', samples);
  await p.click('#import-go');
  await p.waitForSelector('#import-done');
  await p.evaluate(
    async ([note, other]) => {
      const w = await window.notes.call('write', 'notes', 'long_note_with_an_id_that_is_long.md', note, undefined);
      await window.notes.call('write', 'notes', 'other.md', other, undefined);
      await window.notes.call('write', 'notes', 'long_note_with_an_id_that_is_long.md', `${note}\nEdited.\n`, w.hash);
    },
    [NOTE, OTHER],
  );
}

/** The views, each opened by `open(p)` and ready when it resolves. */
const views = [
  ['start', async (p) => (await nav(p, '#/'), await p.waitForSelector('#bundles-table'))],
  ['note', async (p) => (await nav(p, '#/c/long_note_with_an_id_that_is_long'), await p.waitForSelector('.concept .backlinks'))],
  ['sample-note', async (p) => {
    const id = await p.evaluate(async () => (await window.notes.call('switcher', 'orders', 1))[0].id);
    await nav(p, `#/c/${encodeURIComponent(id)}`);
    await p.waitForSelector('.concept .backlinks');
  }],
  ['document', async (p) => (await nav(p, '#/d/acme_retail/index.md'), await p.waitForSelector('article.rendered'))],
  ['editor', async (p) => (await nav(p, '#/edit/notes/long_note_with_an_id_that_is_long.md'), await p.waitForFunction(() => document.querySelector('.preview-pane .rendered')?.textContent.includes('It links to')))],
  ['new-note', async (p) => (await nav(p, '#/new'), await p.waitForSelector('.cm-content'))],
  ['conflict', async (p) => {
    await nav(p, '#/edit/notes/other.md');
    await p.waitForFunction(() => document.querySelector('.cm-editor')?.notesEditor?.state.doc.toString().includes('The other note'));
    await p.evaluate(async () => {
      const s = await window.notes.call('readSource', 'notes', 'other.md');
      await window.notes.call('write', 'notes', 'other.md', `${s.content}Changed elsewhere.\n`, s.hash);
    });
    await p.waitForSelector('.banner.elsewhere');
    await p.click('.banner.elsewhere button');
    await p.waitForSelector('section.conflict');
  }],
  ['search', async (p) => {
    await nav(p, '#/');
    await p.fill('#q', '');
    await p.click('#q');
    await p.keyboard.type('orders revenue');
    await p.waitForSelector('#results [role="option"] .hit-passage-text');
  }],
  ['switcher', async (p) => {
    await nav(p, '#/');
    await p.keyboard.press('Control+k');
    await p.keyboard.type('ord');
    await p.waitForSelector('#picker-list [role="option"] .hit-title');
  }],
  ['palette', async (p) => {
    await nav(p, '#/');
    await p.keyboard.press('F1');
    await p.waitForSelector('#picker-list [role="option"]');
  }],
  ['shortcuts', async (p) => {
    await nav(p, '#/');
    await p.click('#shortcuts-button');
    await p.waitForSelector('dialog.shortcuts[open]');
  }],
  ['note-history', async (p) => (await nav(p, '#/log/notes/long_note_with_an_id_that_is_long.md'), await p.waitForFunction(() => document.querySelectorAll('#note-versions > li').length === 2))],
  ['history', async (p) => (await nav(p, '#/history'), await p.waitForSelector('table.list tbody tr'))],
  ['revision', async (p) => {
    const rev = await p.evaluate(async () => (await window.notes.call('history', undefined, 5)).revisions[1].revision);
    await nav(p, `#/history/${rev}`);
    await p.waitForSelector('ul.changes .diff');
  }],
  ['import-plan', async (p) => {
    await nav(p, '#/transfer');
    await p.setInputFiles('#folder-input', samples);
    await p.waitForSelector('#import-plan');
  }],
  ['agent', async (p) => (await nav(p, '#/agent'), await p.waitForSelector('#manifest-tsv'))],
  ['not-found', async (p) => (await nav(p, '#/c/no-such-note'), await p.waitForFunction(() => document.querySelector('main h1')?.textContent === 'No such note'))],
  ['notification', async (p) => {
    await nav(p, '#/');
    await p.evaluate(() => window.notes.engine.dispatchEvent(new CustomEvent('failed', { detail: Object.assign(new Error('the browser\'s storage refused the write'), { code: 'STORE' }) })));
    await p.waitForSelector('#notices .notice.error');
  }],
];

/** Closes what a view left open (a dialog, the results, a notification). */
async function settle(p) {
  await p.keyboard.press('Escape');
  await p.evaluate(() => {
    for (const d of document.querySelectorAll('dialog[open]')) d.close();
    for (const n of document.querySelectorAll('#notices .notice')) n.remove();
    document.getElementById('notices').hidden = true;
    document.activeElement?.blur?.();
  });
  await p.waitForFunction(() => !document.querySelector('dialog'));
}

for (const theme of ['light', 'dark']) {
  test(`every view in the ${theme} theme passes axe-core`, { timeout: 10 * 60_000 }, async () => {
    const p = await newPage(env.browser, { colorScheme: theme });
    await fill(p);
    const bg = await p.evaluate(() => getComputedStyle(document.body).backgroundColor);
    const [r, g, b] = bg.match(/\d+/g).map(Number);
    if (theme === 'dark') assert.ok(r + g + b < 120, `a dark background by prefers-color-scheme: ${bg}`);
    else assert.ok(r + g + b > 600, `a light background: ${bg}`);
    for (const [name, open] of views) {
      await open(p);
      await assertAccessible(p, `${name} (${theme})`);
      await shot(p, theme === 'light' ? name : `${name}-dark`);
      await settle(p);
    }
    await p.context().close();
  });
}

test('on a 360 px phone nothing is cut off, and the list of notes is a drawer', { timeout: 10 * 60_000 }, async () => {
  const p = await newPage(env.browser, { viewport: PHONE, isMobile: true, hasTouch: true });
  await fill(p);
  for (const [name, open] of views) {
    await open(p);
    const o = await overflow(p);
    assert.ok(o.scrollWidth <= PHONE.width && o.wide.length === 0, `${name} fits ${PHONE.width} px: ${JSON.stringify(o)}`);
    await shot(p, `phone-${name}`);
    await settle(p);
  }
  await nav(p, '#/c/long_note_with_an_id_that_is_long');
  await p.waitForSelector('.concept .backlinks');
  assert.equal(await p.isVisible('#sidebar'), false, 'the list is tucked away');
  await p.click('#menu');
  assert.equal(await p.isVisible('#sidebar'), true);
  assert.equal(await p.getAttribute('#menu', 'aria-expanded'), 'true');
  await shot(p, 'phone-menu');
  await assertAccessible(p, 'the phone menu');
  await p.click('#sidebar a[data-id="other"]');
  await p.waitForFunction(() => location.hash === '#/c/other');
  assert.equal(await p.isVisible('#sidebar'), false, 'following a note closes the drawer');
  await p.context().close();
});

test('the theme toggle overrides the system and is remembered', async () => {
  const p = await newPage(env.browser, { colorScheme: 'light', viewport: DESKTOP });
  await go(p, url, '#/');
  const dark = () => p.evaluate(() => getComputedStyle(document.body).backgroundColor.match(/\d+/g).map(Number).reduce((a, b) => a + b) < 120);
  assert.equal(await dark(), false);
  assert.equal(await p.getAttribute('#theme', 'aria-pressed'), 'false');
  await p.click('#theme');
  assert.equal(await dark(), true);
  assert.equal(await p.getAttribute('#theme', 'aria-pressed'), 'true');
  await p.reload();
  await p.waitForSelector('body[data-ready="true"]');
  assert.equal(await dark(), true, 'remembered across a reload');
  // And back to the system's choice from the palette.
  await p.keyboard.press('F1');
  await p.keyboard.type('follow the system');
  await p.keyboard.press('Enter');
  assert.equal(await dark(), false);
  await p.context().close();
});

test('no page reported an error', () => {
  assert.deepEqual(errors, []);
});
