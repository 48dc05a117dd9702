// History: the retained revisions, newest first (the connection's `history`, a page at a
// time), what one revision changed against its parent, and restore, which commits the old
// state as a new revision on top of the head (history is never rewritten).

import type { App } from '../app.js';
import type { LangonrockError, RevisionInfo } from 'langonrock';
import { h, fill } from '../lib/dom.js';
import { routes, setTitle, formatTime, shortHash, announce, confirmDialog, showError } from '../ui.js';
import { diffBlock } from './editor.js';
import type { View } from './view.js';

export function historyView(app: App, main: HTMLElement): View {
  setTitle('History');
  const body = h('tbody');
  const more = h('button', { type: 'button', hidden: true }, 'Older revisions');
  let next: string | undefined;
  let disposed = false;

  const row = (r: RevisionInfo, head: boolean) =>
    h(
      'tr',
      null,
      h('td', null, h('a', { href: routes.revision(r.revision) }, formatTime(r.created)), head ? [' ', h('span', { class: 'badge other' }, 'current')] : null),
      h('td', null, h('code', { class: 'hash', title: r.revision }, shortHash(r.revision))),
      h('td', null, String(r.concepts)),
      h('td', null, r.bundles.join(', ') || '—'),
    );

  const page = async (reset: boolean) => {
    const result = await app.conn.history(reset ? { limit: 20 } : { limit: 20, before: next });
    if (disposed) return;
    if (reset) fill(body);
    const first = reset;
    result.revisions.forEach((r, i) => body.append(row(r, first && i === 0)));
    next = result.next;
    more.hidden = next === undefined;
    if (reset && result.revisions.length === 0) body.append(h('tr', null, h('td', { colspan: '4', class: 'muted' }, 'No revisions yet: the first save makes one.')));
  };
  more.addEventListener('click', () => void page(false).catch((e) => showError(e, 'history')));

  fill(
    main,
    h('h1', null, 'History'),
    h('p', { class: 'muted' }, 'Every save, delete, import and restore is a revision. Open one to see what it changed, or to restore it.'),
    h('table', { class: 'list' }, h('thead', null, h('tr', null, h('th', { scope: 'col' }, 'When'), h('th', { scope: 'col' }, 'Revision'), h('th', { scope: 'col' }, 'Concepts'), h('th', { scope: 'col' }, 'Bundles'))), body),
    h('div', { class: 'toolbar' }, more),
  );
  void page(true).catch((e) => showError(e, 'history'));
  return {
    refresh: () => void page(true).catch((e) => showError(e, 'history')),
    dispose: () => {
      disposed = true;
    },
  };
}

export function revisionView(app: App, main: HTMLElement, revision: string): View {
  setTitle(`Revision ${shortHash(revision)}`);
  let disposed = false;

  const draw = async () => {
    const [head, rev, changes] = await Promise.all([app.conn.history({ limit: 1 }), app.reader.revision(revision), app.reader.changes(revision)]);
    if (disposed) return;
    const current = head.revisions[0]?.revision;
    const restore = h('button', { type: 'button', class: 'primary', disabled: current === revision }, current === revision ? 'This is the current revision' : 'Restore this revision');
    restore.addEventListener('click', async () => {
      if (!(await confirmDialog('Restore the notes as they were in this revision? This makes a new revision; nothing in history is lost.', 'Restore'))) return;
      try {
        const latest = (await app.conn.history({ limit: 1 })).revisions[0]?.revision;
        if (!latest) return;
        const result = await app.conn.restore({ revision, expectedRevision: latest });
        app.noteTenantDiagnostics(result.diagnostics);
        announce(`Restored: new revision ${shortHash(result.revision)}.`);
        await app.refresh();
        location.hash = '#/history';
      } catch (e) {
        showError(e, 'restore');
        if ((e as LangonrockError).code === 'CONFLICT') void draw();
      }
    });
    const list = changes.map((c) => {
      const details = h('details', { class: 'change' }, h('summary', null, h('span', { class: `badge ${c.change === 'removed' ? 'deprecated' : c.change === 'added' ? 'other' : 'draft'}` }, c.change), ' ', `${c.bundle}/${c.path}`));
      let loaded = false;
      details.addEventListener('toggle', async () => {
        if (!details.open || loaded) return;
        loaded = true;
        try {
          const [before, after] = await Promise.all([c.before ? app.reader.source(c.before) : '', c.after ? app.reader.source(c.after) : '']);
          details.append(diffBlock(before, after, `Changes to ${c.bundle}/${c.path}`));
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
      h('h2', null, `What changed (${changes.length} document${changes.length === 1 ? '' : 's'})`),
      changes.length ? h('ul', { class: 'changes' }, list) : h('p', { class: 'muted' }, 'No document changed (an import baseline or a restore of the same state).'),
    );
    const firstDetails = main.querySelector('details');
    if (firstDetails && changes.length <= 5) for (const d of main.querySelectorAll('details')) (d as HTMLDetailsElement).open = true;
  };
  void draw().catch((e) => {
    showError(e, 'revision');
    fill(main, h('p', null, h('a', { href: '#/history' }, '← History')), h('h1', null, `Revision ${shortHash(revision)}`), h('p', { class: 'banner error' }, String((e as Error).message)));
  });
  return {
    refresh: () => void draw().catch((e) => showError(e, 'revision')),
    dispose: () => {
      disposed = true;
    },
  };
}
