// End-to-end tests of import and export through the page in headless Chromium: a folder is
// ONE revision through the engine's import (the CLI's reconciliation against the folder's
// baseline), with progress and Cancel (nothing committed), invalid names listed and imported
// only when skipped, a folder that is one bundle, loose files, and the export back.

import { test, before, after, beforeEach } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, mkdirSync, readFileSync, rmSync, writeFileSync, unlinkSync } from 'node:fs';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { unzipSync } from 'fflate';
import { launch, newPage, go, nav, shot, assertAccessible, source, folderDocuments, samples, errors, logTests } from './helpers.js';

logTests(beforeEach);

let env;
let url;
let tmp;

before(async () => {
  env = await launch();
  url = env.server.url;
  tmp = mkdtempSync(join(tmpdir(), 'www-import-'));
});

after(async () => {
  await env?.close();
  if (tmp) rmSync(tmp, { recursive: true, force: true });
});

/** A folder of files under the temp dir: `{relative path: text}`. */
function folder(name, files) {
  const root = join(tmp, name);
  for (const [rel, text] of Object.entries(files)) {
    mkdirSync(join(root, rel, '..'), { recursive: true });
    writeFileSync(join(root, rel), text);
  }
  return root;
}

const revisions = (p) => p.evaluate(async () => (await window.notes.call('history', undefined, 100)).revisions.length);
const listed = (p) => p.evaluate(async () => (await window.notes.call('callTool', 'manifest', {})).text);

async function choose(p, dir) {
  await p.setInputFiles('#folder-input', dir);
  await p.waitForSelector('#import-plan');
}

async function importPlanned(p) {
  await p.click('#import-go');
  await p.waitForSelector('#import-done');
}

test('the okf-samples folder is ONE revision through the page, and exports back byte for byte', async () => {
  const p = await newPage(env.browser);
  await go(p, url, '#/transfer');
  await assertAccessible(p, 'import and export');
  await choose(p, samples);
  const expected = folderDocuments(samples);
  assert.match(await p.textContent('#plan-summary'), new RegExp(`^${expected.size} Markdown files in 4 bundles .*: ${expected.size} new, 0 already stored as they are, 0 different`));
  // The folder rule of the command line (docs/import.md), in its words.
  assert.equal(await p.textContent('#plan-layout'), 'Reading okf-samples as 4 bundles, one per subfolder; left out at its root: LICENSE.md. Import the folder as one bundle (okf-samples)');
  await shot(p, 'import-plan');
  await assertAccessible(p, 'the import plan');
  assert.equal(await revisions(p), 0, 'nothing is committed before the person confirms');
  await importPlanned(p);
  assert.match(await p.textContent('#import-progress-text'), new RegExp(`^Imported ${expected.size} changes in one revision\\.$`));
  assert.equal(await revisions(p), 1, 'one revision, as on the command line');
  await shot(p, 'import');
  await assertAccessible(p, 'an import done');

  // The same folder again: everything is stored as it is.
  await choose(p, samples);
  assert.match(await p.textContent('#plan-summary'), new RegExp(`0 new, ${expected.size} already stored as they are, 0 different`));
  assert.equal(await p.isDisabled('#import-go'), true);
  assert.equal(await p.textContent('#import-go'), 'Nothing to import');
  await p.click('#import-discard');

  const [download] = await Promise.all([p.waitForEvent('download'), p.click('#export')]);
  assert.equal(download.suggestedFilename(), 'notes-notes.zip');
  const zip = unzipSync(new Uint8Array(readFileSync(await download.path())));
  assert.deepEqual(Object.keys(zip).sort(), [...expected.keys()].sort(), 'the export holds exactly the imported documents');
  for (const [name, bytes] of expected) assert.ok(Buffer.from(zip[name]).equals(bytes), `${name} is byte-identical`);
  await p.context().close();
});

test('invalid names are all listed, and nothing is imported unless the person skips them', async () => {
  const dir = folder('mixed', {
    'good/fine.md': '---\ntype: note\n---\nFine.\n',
    'good/a:b.md': '---\ntype: note\n---\nA colon.\n',
    'good/con.md': '---\ntype: note\n---\nA device name.\n',
    'Bad Bundle/x.md': '---\ntype: note\n---\nA bundle with a space.\n',
    'good/.hidden.md': 'Skipped: a dot name.\n',
    'good/notes.txt': 'Not Markdown.\n',
  });
  const p = await newPage(env.browser);
  await go(p, url, '#/transfer');
  await choose(p, dir);
  // "Bad Bundle" is no bundle name, so the folder is one bundle named after it (the rule).
  assert.match(await p.textContent('#plan-layout'), /^Reading mixed as one bundle "mixed".*its subfolder "Bad Bundle" is not a bundle name/);
  const problems = await p.$$eval('#invalid-names li', (ls) => ls.map((l) => l.textContent));
  assert.equal(problems.length, 2, JSON.stringify(problems));
  assert.match(problems[0], /^good\/a:b\.md: invalid path "good\/a:b\.md": /);
  assert.match(problems[1], /^good\/con\.md: invalid path "good\/con\.md": .*reserved device name/);
  assert.match(await p.textContent('#plan-summary'), /^2 Markdown files in 1 bundle \(mixed\): 2 new.* 1 other file left out \(not Markdown\)\./);
  assert.equal(await p.isDisabled('#import-go'), true, 'not while names are invalid');
  await shot(p, 'import-invalid');
  await assertAccessible(p, 'an import plan with invalid names');
  assert.equal(await revisions(p), 0);
  await p.check('#skip-invalid');
  assert.equal(await p.isDisabled('#import-go'), false);
  await importPlanned(p);
  assert.deepEqual(
    (await p.evaluate(() => window.notes.call('listing', 'mixed'))).notes.map((n) => n.path).sort(),
    ['Bad Bundle/x.md', 'good/fine.md'],
  );
  assert.equal(await revisions(p), 1);
  await p.context().close();
});

test('Cancel stops an import with nothing committed', async () => {
  const files = {};
  for (let i = 0; i < 3000; i++) files[`bulk/note-${String(i).padStart(4, '0')}.md`] = `---\ntype: note\ntitle: Note ${i}\n---\nNote ${i} links to [[note-${String((i + 1) % 3000).padStart(4, '0')}]].\n`;
  const dir = folder('bulk-folder', files);
  const p = await newPage(env.browser);
  await go(p, url, '#/transfer');
  await p.evaluate(() => window.notes.call('write', 'notes', 'before.md', '---\ntype: note\n---\nHere before.\n', undefined));
  const head = await p.evaluate(() => window.notes.call('headRevision'));
  const manifest = await listed(p);
  await choose(p, dir);
  assert.match(await p.textContent('#plan-summary'), /^3,000 Markdown files in 1 bundle \(bulk\): 3,000 new/);
  // Import, and Cancel at once (one task: the cancel reaches the worker right behind the
  // import, while it is still compiling, before anything is stored).
  await p.evaluate(() => {
    document.querySelector('#import-go').click();
    document.querySelector('#import-cancel').click();
  });
  await p.waitForFunction(() => /Cancelled: nothing was imported\.|Imported/.test(document.querySelector('#import-progress-text').textContent));
  assert.equal(await p.textContent('#import-progress-text'), 'Cancelled: nothing was imported.');
  assert.equal(await p.evaluate(() => window.notes.call('headRevision')), head, 'the head did not move');
  assert.equal(await listed(p), manifest, 'the notes are as they were');
  // The same folder imports in full afterwards, its progress shown on the way.
  await choose(p, dir);
  await p.evaluate(() => {
    const seen = (window.__progressSeen = []);
    new MutationObserver(() => {
      const t = document.querySelector('#import-progress-text')?.textContent;
      if (t && seen[seen.length - 1] !== t) seen.push(t);
    }).observe(document.body, { childList: true, characterData: true, subtree: true });
  });
  await importPlanned(p);
  const seen = await p.evaluate(() => window.__progressSeen);
  assert.ok(seen.includes('Checking and compiling 3,000 documents…'), `compiling is shown: ${JSON.stringify(seen)}`);
  assert.ok(seen.includes('Saving in this browser… (this can no longer be cancelled)'), `storing is shown: ${JSON.stringify(seen)}`);
  assert.equal(seen[seen.length - 1], 'Imported 3,000 changes in one revision.');
  assert.equal((await p.evaluate(() => window.notes.summary)).concepts, 3001);
  await p.context().close();
});

test('a folder that is one bundle imports as one, by the command line’s rule, and its root links resolve', async () => {
  const dir = folder('vault', {
    'index.md': '# Vault\n\nStart at [the first note](first.md).\n',
    'first.md': '---\ntype: note\ntitle: First\n---\nSee [the second](/topics/second.md) and [[topics/second]].\n',
    'topics/second.md': '---\ntype: note\ntitle: Second\n---\nBack to [[first]].\n',
  });
  const p = await newPage(env.browser);
  await go(p, url, '#/transfer');
  await choose(p, dir);
  // Markdown at its root makes it one bundle, as on the command line: the root links resolve.
  assert.match(await p.textContent('#plan-layout'), /^Reading vault as one bundle "vault": it has index\.md at its root/);
  assert.match(await p.textContent('#plan-summary'), /^3 Markdown files in 1 bundle \(vault\): 3 new/);
  await importPlanned(p);
  await nav(p, '#/c/first');
  await p.waitForSelector('.concept[data-id="first"] .links');
  assert.deepEqual(await p.$$eval('.side .links .note-title', (ts) => ts.map((t) => t.textContent)), ['Second']);
  assert.equal(await p.$('article.rendered a.broken'), null);
  assert.equal(await source(p, 'vault', 'index.md').then((s) => s.content), '# Vault\n\nStart at [the first note](first.md).\n');
  await p.context().close();
});

test('importing a folder again reconciles as the command line does: folder edits land, edits here survive, both is refused', async () => {
  const dir = folder('sync', {
    'a/one.md': '---\ntype: note\n---\nOne.\n',
    'a/two.md': '---\ntype: note\n---\nTwo.\n',
    'a/three.md': '---\ntype: note\n---\nThree.\n',
  });
  const p = await newPage(env.browser);
  await go(p, url, '#/transfer');
  await choose(p, dir);
  await importPlanned(p);
  // Here: one.md is edited. In the folder: two.md changes, three.md goes.
  await p.evaluate(async () => {
    const s = await window.notes.call('readSource', 'a', 'one.md');
    await window.notes.call('write', 'a', 'one.md', `${s.content}Edited here.\n`, s.hash);
  });
  writeFileSync(join(dir, 'a/two.md'), '---\ntype: note\n---\nTwo, edited in the folder.\n');
  unlinkSync(join(dir, 'a/three.md'));
  await choose(p, dir);
  assert.match(await p.textContent('#plan-summary'), /2 Markdown files in 1 bundle \(a\): 0 new, 0 already stored as they are, 2 different from the stored version\./);
  assert.match(await p.textContent('#import-plan'), /Delete the 1 note an earlier import of this folder brought in that is gone from it: a\/three\.md/);
  await p.check('#replace-differing');
  await p.check('#delete-missing');
  await importPlanned(p);
  assert.equal((await source(p, 'a', 'one.md')).content, '---\ntype: note\n---\nOne.\nEdited here.\n', 'the edit made here survives');
  assert.equal((await source(p, 'a', 'two.md')).content, '---\ntype: note\n---\nTwo, edited in the folder.\n', 'the folder’s edit lands');
  assert.equal(await source(p, 'a', 'three.md'), null, 'the file gone from the folder is deleted, as asked');

  // Both sides change one.md: the whole import is refused, naming it; nothing changes.
  writeFileSync(join(dir, 'a/one.md'), '---\ntype: note\n---\nOne, edited in the folder too.\n');
  writeFileSync(join(dir, 'a/four.md'), '---\ntype: note\n---\nFour.\n');
  const head = await p.evaluate(() => window.notes.call('headRevision'));
  await choose(p, dir);
  await p.check('#replace-differing');
  await p.click('#import-go');
  await p.waitForSelector('#notices .notice.error');
  assert.match(await p.textContent('#notices .notice.error p'), /^Could not import the files: a\/one\.md changed both in the folder and here since the folder was last imported\. Nothing was imported\./);
  assert.match(await p.textContent('#notices .notice.error details code'), /^CONFLICT: folder and database both changed a\/one\.md; reconcile the source hashes before importing$/);
  assert.equal(await p.evaluate(() => window.notes.call('headRevision')), head);
  assert.equal(await source(p, 'a', 'four.md'), null);
  // Keeping the stored versions imports the rest.
  await choose(p, dir);
  await importPlanned(p);
  assert.equal((await source(p, 'a', 'one.md')).content, '---\ntype: note\n---\nOne.\nEdited here.\n');
  assert.equal((await source(p, 'a', 'four.md')).content, '---\ntype: note\n---\nFour.\n');
  await p.context().close();
});

test('Markdown files dropped on the page go into the bundle named for them, in one revision', async () => {
  const p = await newPage(env.browser);
  await go(p, url, '#/transfer');
  await p.fill('#bundle-name', 'dropped');
  const drop = (files) =>
    p.evaluate((fs) => {
      const data = new DataTransfer();
      for (const [name, text] of fs) data.items.add(new File([text], name, { type: 'text/markdown' }));
      document.querySelector('#dropzone').dispatchEvent(new DragEvent('drop', { dataTransfer: data, bubbles: true, cancelable: true }));
    }, files);
  await drop([
    ['first.md', '---\ntype: note\n---\n\nThe first dropped note links to [[second]].\n'],
    ['second.md', '---\ntype: note\n---\n\nThe second dropped note.\n'],
  ]);
  await p.waitForSelector('#import-go');
  assert.match(await p.textContent('#plan-summary'), /^2 Markdown files in 1 bundle \(dropped\): 2 new/);
  await importPlanned(p);
  assert.equal(await revisions(p), 1);
  const l = await p.evaluate(() => window.notes.call('listing', 'dropped'));
  assert.deepEqual(
    l.notes.map((n) => [n.path, n.id]),
    [
      ['first.md', 'first'],
      ['second.md', 'second'],
    ],
  );
  await drop([['second.md', '---\ntype: note\n---\n\nThe second dropped note.\n']]);
  await p.waitForFunction(() => document.querySelector('#plan-summary')?.textContent.includes('0 new, 1 already stored'));
  assert.equal(await p.isDisabled('#import-go'), true);
  await p.context().close();
});

test('no page reported an error', () => {
  assert.deepEqual(errors, []);
});
