// The start page: what the tenant holds (bundles with counts by status), or how to begin.
// Also the view of a navigation document (index.md, log.md): stored and shown, never compiled.

import type { App } from '../app.js';
import { h, fill } from '../lib/dom.js';
import { render } from '../lib/markdown.js';
import { split } from '../lib/frontmatter.js';
import { routes, setTitle, showError } from '../ui.js';
import { linkContext } from './concept.js';
import type { View } from './view.js';

export function homeView(app: App, main: HTMLElement): View {
  const draw = () => {
    setTitle('');
    if (app.entries.length === 0) {
      fill(
        main,
        h('h1', null, 'Your notes, in this browser'),
        h('p', null, 'Notes live in this browser only (IndexedDB), with every revision kept. Write them in Markdown with a little frontmatter, link them with [[wiki links]], and search them as you type. An agent can read the very same notes through the same verbs.'),
        h('div', { class: 'toolbar' }, h('a', { class: 'button primary', href: '#/new' }, 'Write your first note'), h('a', { class: 'button', href: '#/transfer' }, 'Import a folder of Markdown')),
      );
      return;
    }
    const byBundle = new Map<string, { total: number; draft: number; deprecated: number; stale: number; docs: number }>();
    for (const b of app.bundles) byBundle.set(b, { total: 0, draft: 0, deprecated: 0, stale: 0, docs: 0 });
    for (const r of app.manifest.rows) {
      const c = byBundle.get(r.bundle);
      if (!c) continue;
      c.total++;
      if (r.status === 'draft' || r.status === 'deprecated' || r.status === 'stale') c[r.status]++;
    }
    for (const e of app.entries) {
      const c = byBundle.get(e.bundle);
      if (c) c.docs++;
    }
    fill(
      main,
      h('h1', null, 'Notes'),
      h('p', null, `${app.manifest.rows.length.toLocaleString('en-US')} concepts in ${app.bundles.length} bundle${app.bundles.length === 1 ? '' : 's'}. Press / to search, or pick a note on the left.`),
      h(
        'table',
        { class: 'list', id: 'bundles-table' },
        h('thead', null, h('tr', null, ['Bundle', 'Concepts', 'Draft', 'Deprecated', 'Stale', 'Documents'].map((t) => h('th', { scope: 'col' }, t)))),
        h(
          'tbody',
          null,
          [...byBundle].map(([b, c]) => {
            const first = app.manifest.rows.find((r) => r.bundle === b);
            return h('tr', null, h('td', null, first ? h('a', { href: routes.concept(first.id) }, b) : b), h('td', null, String(c.total)), h('td', null, String(c.draft)), h('td', null, String(c.deprecated)), h('td', null, String(c.stale)), h('td', null, String(c.docs)));
          }),
        ),
      ),
    );
  };
  draw();
  return { refresh: draw };
}

export function documentView(app: App, main: HTMLElement, bundle: string, path: string): View {
  let disposed = false;
  const draw = async () => {
    const source = await app.conn.readSource(bundle, path);
    if (disposed) return;
    setTitle(path);
    if (!source) {
      fill(main, h('h1', null, 'No such document'), h('p', null, `${bundle}/${path} does not exist (any more).`));
      return;
    }
    const article = h('article', { class: 'rendered', 'aria-label': 'Document' });
    article.innerHTML = render(split(source.content).body, linkContext(app, bundle, path, [...app.rows.keys()], routes.document(bundle, path)));
    fill(
      main,
      h('header', { class: 'concept-head' }, h('div', { class: 'path' }, `${bundle} / ${path}`), h('h1', null, path), h('p', { class: 'muted' }, 'A navigation document: stored, listed and exported, but not compiled, so it has no id and no row in the manifest.')),
      h('div', { class: 'toolbar' }, h('a', { class: 'button primary', href: routes.edit(bundle, path) }, 'Edit')),
      article,
    );
  };
  void draw().catch((e) => showError(e, 'open document'));
  return {
    refresh: () => void draw().catch((e) => showError(e, 'open document')),
    dispose: () => {
      disposed = true;
    },
  };
}
