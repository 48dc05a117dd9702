// The start page: what the tenant holds (bundles with counts by status) and the notes opened
// recently, or how to begin. Also the view of a navigation document (index.md, log.md):
// stored and shown, never compiled.

import type { App } from '../app.js';
import { h, fill } from '../lib/dom.js';
import { sanitized } from '../lib/sanitize.js';
import { routes, setTitle, showError, noteLink, plural } from '../ui.js';
import type { View } from './view.js';

export function homeView(app: App, main: HTMLElement): View {
  let disposed = false;
  const draw = async () => {
    setTitle('');
    const s = app.summary;
    if (s.bundles.length === 0) {
      fill(
        main,
        h('h1', null, 'Your notes, in this browser'),
        h('p', null, 'Notes live in this browser only (IndexedDB), with every revision kept. Write them in Markdown with a little frontmatter, link them with [[wiki links]], and search them as you type. An agent can read the very same notes through the same verbs.'),
        h('div', { class: 'toolbar' }, h('a', { class: 'button primary', href: '#/new' }, 'Write your first note'), h('a', { class: 'button', href: '#/transfer' }, 'Import a folder of Markdown')),
        h('p', { class: 'muted' }, 'Press ? for the keyboard shortcuts, or Ctrl+K to open a note by its title.'),
      );
      return;
    }
    const recent = await app.call('refs', app.recent().slice(0, 8));
    if (disposed) return;
    fill(
      main,
      h('h1', null, 'Notes'),
      h('p', null, `${plural(s.concepts, 'note')} in ${plural(s.bundles.length, 'bundle')}. Press / to search, Ctrl+K to open a note by its title, or pick one from the list.`),
      recent.length ? h('section', { 'aria-labelledby': 'recent-h' }, h('h2', { id: 'recent-h' }, 'Opened recently'), h('ul', { class: 'recent' }, recent.map((r) => h('li', null, noteLink(r, true))))) : null,
      h(
        'section',
        { 'aria-labelledby': 'bundles-h' },
        h('h2', { id: 'bundles-h' }, 'Bundles'),
        h(
          'div',
          { class: 'table-wrap' },
          h(
            'table',
            { class: 'list', id: 'bundles-table' },
            h('thead', null, h('tr', null, ['Bundle', 'Notes', 'Draft', 'Deprecated', 'Stale', 'Documents'].map((t) => h('th', { scope: 'col' }, t)))),
            h(
              'tbody',
              null,
              s.bundles.map((b) => h('tr', null, h('td', null, b.name), h('td', null, String(b.concepts)), h('td', null, String(b.draft)), h('td', null, String(b.deprecated)), h('td', null, String(b.stale)), h('td', null, String(b.documents)))),
            ),
          ),
        ),
      ),
    );
  };
  void draw().catch((e) => showError(e, 'show the start page'));
  return {
    refresh: () => void draw().catch((e) => showError(e, 'show the start page')),
    dispose: () => {
      disposed = true;
    },
  };
}

export function documentView(app: App, main: HTMLElement, bundle: string, path: string): View {
  let disposed = false;
  const draw = async () => {
    const d = await app.call('documentView', bundle, path);
    if (disposed) return;
    setTitle(path);
    if (!d) {
      fill(main, h('h1', null, 'No such document'), h('p', null, `${bundle}/${path} does not exist (any more).`));
      return;
    }
    const article = h('article', { class: 'rendered', 'aria-label': 'Document' });
    article.append(sanitized(d.html));
    fill(
      main,
      h('header', { class: 'concept-head' }, h('div', { class: 'path' }, `${bundle} / ${path}`), h('h1', null, path), h('p', { class: 'muted' }, 'A navigation document: stored, listed and exported, but not compiled, so it has no id and no row in the manifest.')),
      h('div', { class: 'toolbar' }, h('a', { class: 'button primary', href: routes.edit(bundle, path) }, 'Edit'), h('a', { class: 'button', href: routes.noteHistory(bundle, path) }, 'History')),
      article,
    );
  };
  void draw().catch((e) => showError(e, 'open the document'));
  return {
    refresh: () => void draw().catch((e) => showError(e, 'open the document')),
    dispose: () => {
      disposed = true;
    },
    current: () => ({ bundle, path }),
  };
}
