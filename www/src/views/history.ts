// History: the retained revisions, newest first (a page at a time), what one revision
// changed against its parent, and restore, which commits the old state as a new revision on
// top of the head (history is never rewritten). And one note's history: the revisions in
// which it changed, each with its diff, and restoring one version of it (a save of that
// text over the current one, which the engine refuses if the note changed meanwhile). A
// commit while a history is open (here or in another tab) adds the new revisions on top and
// leaves what is shown as it was: the diffs opened, the older pages loaded.

import type { App } from '../app.js';
import type { RevisionInfo } from 'langonrock';
import type { NoteVersion } from '../engine/types.js';
import { h, fill } from '../lib/dom.js';
import { routes, setTitle, formatTime, shortHash, announce, confirmDialog, showError, plural } from '../ui.js';
import { diffBlock } from './diffview.js';
import type { View } from './view.js';

const changeBadge = (change: string) => h('span', { class: `badge ${change === 'removed' ? 'deprecated' : change === 'added' ? 'other' : 'draft'}` }, change);

export function historyView(app: App, main: HTMLElement): View {
  setTitle('History');
  const body = h('tbody');
  const more = h('button', { type: 'button', hidden: true, id: 'older' }, 'Older revisions');
  let next: string | undefined;
  let disposed = false;

  const row = (r: RevisionInfo) =>
    h(
      'tr',
      { 'data-revision': r.revision },
      h('td', null, h('a', { href: routes.revision(r.revision) }, formatTime(r.created))),
      h('td', null, h('code', { class: 'hash', title: r.revision }, shortHash(r.revision))),
      h('td', null, String(r.concepts)),
      h('td', null, r.bundles.join(', ') || '—'),
    );
  /** The "current" badge on the newest row only. */
  const markHead = () => {
    body.querySelector('.head-mark')?.remove();
    body.querySelector('tr[data-revision] td')?.append(h('span', { class: 'head-mark' }, ' ', h('span', { class: 'badge other' }, 'current')));
  };

  const page = async (reset: boolean) => {
    const result = await app.call('history', reset ? undefined : next, 20);
    if (disposed) return;
    if (reset) {
      // A refresh (a commit here or elsewhere): the revisions newer than the newest one shown
      // go on top, and the rows shown stay, with the older pages loaded so far. Only when the
      // newest one shown is not on the first page any more is the list read anew.
      const top = (body.querySelector('tr[data-revision]') as HTMLElement | null)?.dataset.revision;
      const at = top === undefined ? -1 : result.revisions.findIndex((r) => r.revision === top);
      if (at >= 0) body.prepend(...result.revisions.slice(0, at).map(row));
      else {
        fill(body, result.revisions.map(row));
        next = result.next;
      }
    } else {
      body.append(...result.revisions.map(row));
      next = result.next;
    }
    markHead();
    more.hidden = next === undefined;
    if (!body.querySelector('tr[data-revision]')) fill(body, h('tr', null, h('td', { colspan: '4', class: 'muted' }, 'No revisions yet: the first save makes one.')));
  };
  // One read at a time, in order: a refresh that arrives while a page is read waits for it.
  let queue = Promise.resolve();
  const run = (reset: boolean) => (queue = queue.then(() => page(reset)).catch((e) => showError(e, 'read the history')));
  more.addEventListener('click', () => void run(false));

  fill(
    main,
    h('h1', null, 'History'),
    h('p', { class: 'muted' }, 'Every save, delete, import and restore is a revision. Open one to see what it changed, or to restore it. Each note’s own history is under its History button.'),
    h('div', { class: 'table-wrap' }, h('table', { class: 'list' }, h('thead', null, h('tr', null, h('th', { scope: 'col' }, 'When'), h('th', { scope: 'col' }, 'Revision'), h('th', { scope: 'col' }, 'Notes'), h('th', { scope: 'col' }, 'Bundles'))), body)),
    h('div', { class: 'toolbar' }, more),
  );
  void run(true);
  return {
    refresh: () => void run(true),
    dispose: () => {
      disposed = true;
    },
  };
}

export function revisionView(app: App, main: HTMLElement, revision: string): View {
  setTitle(`Revision ${shortHash(revision)}`);
  let disposed = false;
  let drawn = false;
  const restore = h('button', { type: 'button', class: 'primary' });
  /** What a revision changed never changes; only whether it is the head does. */
  const showHead = (head: string | null) => {
    restore.disabled = head === revision;
    restore.textContent = head === revision ? 'This is the current revision' : 'Restore this revision';
  };
  const headMoved = async () => {
    if (!drawn) return;
    const head = await app.call('headRevision');
    if (!disposed) showHead(head);
  };

  const draw = async () => {
    const rev = await app.call('revision', revision);
    if (disposed) return;
    showHead(rev.head);
    restore.addEventListener('click', async () => {
      if (!(await confirmDialog('Restore the notes as they were in this revision? This makes a new revision; nothing in history is lost.', 'Restore'))) return;
      try {
        const latest = await app.call('headRevision');
        if (!latest) return;
        const result = await app.call('restore', revision, latest);
        announce(`Restored: new revision ${shortHash(result.revision)}.`);
        location.hash = '#/history';
      } catch (e) {
        showError(e, 'restore the revision');
        if ((e as { code?: string }).code === 'CONFLICT') void headMoved().catch(() => undefined);
      }
    });
    const list = rev.changes.map((c) => {
      const details = h('details', { class: 'change' }, h('summary', null, changeBadge(c.change), ' ', `${c.bundle}/${c.path}`));
      let loaded = false;
      details.addEventListener('toggle', async () => {
        if (!details.open || loaded) return;
        loaded = true;
        try {
          const [before, after] = await Promise.all([c.before ? app.call('source', c.before) : '', c.after ? app.call('source', c.after) : '']);
          details.append(diffBlock(before, after, `Changes to ${c.bundle}/${c.path}`), h('p', null, h('a', { href: routes.noteHistory(c.bundle, c.path) }, `History of ${c.bundle}/${c.path}`)));
        } catch (e) {
          details.append(h('p', { class: 'banner error' }, String((e as Error).message)));
        }
      });
      return h('li', null, details);
    });
    fill(
      main,
      h('p', null, h('a', { href: '#/history' }, '← History')),
      h('h1', null, `Revision ${shortHash(revision)}`),
      h(
        'dl',
        { class: 'meta' },
        h('dt', null, 'Committed'),
        h('dd', null, formatTime(rev.created)),
        h('dt', null, 'Parent'),
        h('dd', null, rev.parent ? h('a', { href: routes.revision(rev.parent) }, shortHash(rev.parent)) : 'none (the first revision)'),
      ),
      h('div', { class: 'toolbar' }, restore),
      h('h2', null, `What changed (${plural(rev.changes.length, 'document')})`),
      rev.changes.length ? h('ul', { class: 'changes' }, list) : h('p', { class: 'muted' }, 'No document changed (an import baseline or a restore of the same state).'),
    );
    if (rev.changes.length <= 5) for (const d of main.querySelectorAll('details')) (d as HTMLDetailsElement).open = true;
    drawn = true;
  };
  void draw().catch((e) => {
    showError(e, 'read the revision');
    fill(main, h('p', null, h('a', { href: '#/history' }, '← History')), h('h1', null, `Revision ${shortHash(revision)}`), h('p', { class: 'banner error' }, String((e as Error).message)));
  });
  return {
    // A commit here or elsewhere: the revision's changes and any diff opened stay as they are.
    refresh: () => void headMoved().catch((e) => showError(e, 'read the revision')),
    dispose: () => {
      disposed = true;
    },
  };
}

/** One note's versions, newest first, each with its diff and a restore. */
export function noteHistoryView(app: App, main: HTMLElement, bundle: string, path: string): View {
  setTitle(`History of ${path}`);
  let disposed = false;
  let next: string | undefined;
  const list = h('ul', { class: 'versions-list', id: 'note-versions' });
  const more = h('button', { type: 'button', hidden: true, id: 'older-versions' }, 'Look further back');
  const status = h('p', { class: 'muted', 'aria-live': 'polite' }, 'Reading the history…');
  const back = h('p', null);

  const item = (v: NoteVersion) => {
    const diffArea = h('div');
    const showDiff = h('button', { type: 'button', 'aria-expanded': 'false' }, 'Show the changes');
    showDiff.addEventListener('click', async () => {
      if (diffArea.childElementCount) {
        fill(diffArea);
        showDiff.setAttribute('aria-expanded', 'false');
        showDiff.textContent = 'Show the changes';
        return;
      }
      try {
        const [before, after] = await Promise.all([v.before ? app.call('source', v.before) : '', v.after ? app.call('source', v.after) : '']);
        fill(diffArea, diffBlock(before, after, `Changes in revision ${shortHash(v.revision)}`));
        showDiff.setAttribute('aria-expanded', 'true');
        showDiff.textContent = 'Hide the changes';
      } catch (e) {
        showError(e, 'read that version');
      }
    });
    const restoreHash = v.after ?? v.before;
    const restore = h('button', { type: 'button', class: 'restore' }, v.change === 'removed' ? 'Restore the note as it was before' : 'Restore this version');
    restore.addEventListener('click', async () => {
      if (!restoreHash) return;
      if (!(await confirmDialog(`Make this version of ${bundle}/${path} the current one? This saves it as a new revision; nothing in history is lost.`, 'Restore'))) return;
      try {
        const [content, now] = await Promise.all([app.call('source', restoreHash), app.call('entry', bundle, path)]);
        if (now?.hash === restoreHash) {
          announce('This version is already the current one.');
          return;
        }
        await app.call('write', bundle, path, content, now?.hash);
        announce(`Restored the version of ${formatTime(v.created)}.`);
      } catch (e) {
        showError(e, 'restore that version');
      }
    });
    return h(
      'li',
      { 'data-revision': v.revision },
      h('div', { class: 'hit-head' }, changeBadge(v.change), h('a', { href: routes.revision(v.revision) }, formatTime(v.created)), h('code', { class: 'hash', title: v.revision }, shortHash(v.revision))),
      h('div', { class: 'toolbar' }, showDiff, restore),
      diffArea,
    );
  };

  const page = async (reset: boolean) => {
    const p = await app.call('noteHistory', bundle, path, reset ? undefined : next);
    if (disposed) return;
    if (reset) {
      // A refresh (a commit here or elsewhere): the versions newer than the newest one shown
      // go on top; the ones shown stay as they are, with any diff opened and the older pages
      // loaded so far. Only when the newest one shown is not among those read is the list
      // drawn anew.
      const top = (list.firstElementChild as HTMLElement | null)?.dataset.revision;
      const at = top === undefined ? -1 : p.versions.findIndex((v) => v.revision === top);
      if (at >= 0) list.prepend(...p.versions.slice(0, at).map(item));
      else {
        fill(list, p.versions.map(item));
        next = p.next;
      }
    } else {
      list.append(...p.versions.map(item));
      next = p.next;
    }
    const found = list.childElementCount;
    more.hidden = next === undefined;
    status.textContent =
      found === 0
        ? next
          ? `No change to this note in the last ${plural(p.scanned, 'revision')}.`
          : 'This note has no retained history.'
        : `${plural(found, 'version')}${next ? ' so far' : ''}, newest first.`;
    const entry = await app.call('entry', bundle, path);
    if (disposed) return;
    fill(back, entry?.id ? h('a', { href: routes.concept(entry.id) }, '← The note') : entry ? h('a', { href: routes.document(bundle, path) }, '← The document') : 'The note is deleted now; restore a version to bring it back.');
  };
  // One read at a time, in order: a refresh that arrives while a page is read waits for it.
  let queue = Promise.resolve();
  const run = (reset: boolean) => (queue = queue.then(() => page(reset)).catch((e) => showError(e, 'read the history')));
  more.addEventListener('click', () => void run(false));

  fill(main, back, h('h1', null, `History of ${bundle} / ${path}`), status, list, h('div', { class: 'toolbar' }, more));
  void run(true);
  return {
    refresh: () => void run(true),
    dispose: () => {
      disposed = true;
    },
    current: () => ({ bundle, path }),
  };
}
