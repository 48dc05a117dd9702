// The list of notes: bundles from the manifest, each with its concepts (id and status) and its
// navigation documents. Arrow keys move between entries, Home/End jump, Enter follows; a
// bundle's heading button folds it.

import type { App } from './app.js';
import { h, fill } from './lib/dom.js';
import { badge, routes } from './ui.js';

const folded = new Set<string>();
let foldedDefault: boolean | null = null;

export function renderSidebar(app: App, nav: HTMLElement, current: { id?: string; bundle?: string; path?: string }): void {
  const rows = app.manifest.rows;
  if (foldedDefault === null && rows.length > 0) {
    // A big tenant starts with its bundles folded, except the one being read.
    foldedDefault = rows.length > 400;
    if (foldedDefault) for (const b of app.bundles) folded.add(b);
  }
  const byBundle = new Map<string, typeof rows>();
  for (const r of rows) {
    let list = byBundle.get(r.bundle);
    if (!list) byBundle.set(r.bundle, (list = []));
    list.push(r);
  }
  const navDocs = new Map<string, Array<{ bundle: string; path: string }>>();
  for (const e of app.entries) {
    if (e.id !== undefined) continue;
    let list = navDocs.get(e.bundle);
    if (!list) navDocs.set(e.bundle, (list = []));
    list.push(e);
  }
  const currentBundle = current.id ? app.rows.get(current.id)?.bundle : current.bundle;
  if (currentBundle) folded.delete(currentBundle);
  if (app.bundles.length === 0) {
    fill(nav, h('p', { class: 'muted', style: 'padding: 0 0.75rem' }, 'No notes yet. Create one, or import a folder of Markdown.'));
    return;
  }
  const groups = app.bundles.map((bundle) => {
    const concepts = byBundle.get(bundle) ?? [];
    const docs = navDocs.get(bundle) ?? [];
    const isFolded = folded.has(bundle);
    const listId = `bundle-${bundle}`;
    const toggle = h(
      'button',
      {
        class: 'bundle-toggle',
        'aria-expanded': String(!isFolded),
        'aria-controls': listId,
        onclick: () => {
          if (folded.has(bundle)) folded.delete(bundle);
          else folded.add(bundle);
          renderSidebar(app, nav, current);
          (nav.querySelector(`[aria-controls="${CSS.escape(listId)}"]`) as HTMLElement | null)?.focus();
        },
      },
      h('span', null, `${isFolded ? '▸' : '▾'} ${bundle}`),
      h('span', { class: 'count' }, String(concepts.length)),
    );
    const items = isFolded
      ? []
      : [
          ...concepts.map((r) =>
            h(
              'li',
              null,
              h(
                'a',
                { href: routes.concept(r.id), 'aria-current': r.id === current.id ? 'page' : null, title: r.summary !== '-' ? r.summary : null },
                h('span', null, r.id),
                badge(r.status),
              ),
            ),
          ),
          ...docs.map((d) =>
            h(
              'li',
              null,
              h(
                'a',
                { class: 'nav-doc', href: routes.document(d.bundle, d.path), 'aria-current': d.bundle === current.bundle && d.path === current.path ? 'page' : null },
                d.path,
              ),
            ),
          ),
        ];
    return [h('h2', null, toggle), h('ul', { id: listId, hidden: isFolded }, items)];
  });
  fill(nav, groups);
  nav.querySelector('[aria-current="page"]')?.scrollIntoView({ block: 'nearest' });
}

/** Arrow-key movement between the list's links and toggles. */
export function sidebarKeys(nav: HTMLElement): void {
  nav.addEventListener('keydown', (e) => {
    if (!['ArrowDown', 'ArrowUp', 'Home', 'End'].includes(e.key)) return;
    const items = [...nav.querySelectorAll<HTMLElement>('a, button.bundle-toggle')].filter((el) => el.offsetParent !== null);
    if (items.length === 0) return;
    const at = items.indexOf(document.activeElement as HTMLElement);
    let next = at;
    if (e.key === 'ArrowDown') next = at < 0 ? 0 : Math.min(items.length - 1, at + 1);
    else if (e.key === 'ArrowUp') next = at < 0 ? 0 : Math.max(0, at - 1);
    else if (e.key === 'Home') next = 0;
    else next = items.length - 1;
    e.preventDefault();
    items[next].focus();
  });
}
