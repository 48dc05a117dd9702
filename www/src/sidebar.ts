// The list of notes: bundles from the summary, each folded or open; an open bundle lists its
// notes by title (the id beneath), then its navigation documents. A big bundle shows its
// first notes and a button for more, so the page never draws thousands of rows at once.
// Arrow keys move between entries, Home/End jump, Enter follows; a bundle's heading button
// folds it.

import type { App } from './app.js';
import type { Current } from './palette.js';
import { h, fill } from './lib/dom.js';
import { badge, noteLabel, routes, showError } from './ui.js';

const PAGE = 200;
const folded = new Set<string>();
const shown = new Map<string, number>();
let foldedDefault: boolean | null = null;
let drawn = 0;

export function renderSidebar(app: App, nav: HTMLElement, current: Current): void {
  const bundles = app.summary.bundles;
  const total = bundles.reduce((n, b) => n + b.concepts, 0);
  if (foldedDefault === null && total > 0) {
    // A big tenant starts with its bundles folded, except the one being read.
    foldedDefault = total > 400;
    if (foldedDefault) for (const b of bundles) folded.add(b.name);
  }
  if (current.bundle) folded.delete(current.bundle);
  if (bundles.length === 0) {
    fill(nav, h('p', { class: 'muted pad' }, 'No notes yet. Create one, or import a folder of Markdown.'));
    return;
  }
  const draw = ++drawn;
  const groups = bundles.map((b) => {
    const isFolded = folded.has(b.name);
    const listId = `bundle-${b.name}`;
    const toggle = h(
      'button',
      {
        type: 'button',
        class: 'bundle-toggle',
        'aria-expanded': String(!isFolded),
        'aria-controls': listId,
        onclick: () => {
          if (folded.has(b.name)) folded.delete(b.name);
          else folded.add(b.name);
          renderSidebar(app, nav, current);
          (nav.querySelector(`[aria-controls="${CSS.escape(listId)}"]`) as HTMLElement | null)?.focus();
        },
      },
      h('span', null, `${isFolded ? '▸' : '▾'} ${b.name}`),
      h('span', { class: 'count' }, String(b.concepts)),
    );
    const list = h('ul', { id: listId, hidden: isFolded });
    if (!isFolded) {
      list.append(h('li', { class: 'muted pad' }, 'Loading…'));
      void app
        .listing(b.name)
        .then((l) => {
          if (draw !== drawn) return;
          const limit = shown.get(b.name) ?? PAGE;
          const items: HTMLElement[] = l.notes.slice(0, limit).map((n) =>
            h(
              'li',
              null,
              h('a', { href: routes.concept(n.id), 'aria-current': n.id === current.id ? 'page' : null, 'data-id': n.id }, noteLabel(n), badge(n.status)),
            ),
          );
          if (l.notes.length > limit) {
            const more = h('button', { type: 'button', class: 'linklike' }, `Show ${Math.min(PAGE, l.notes.length - limit)} more of ${l.notes.length.toLocaleString('en-US')}`);
            more.addEventListener('click', () => {
              shown.set(b.name, limit + PAGE);
              renderSidebar(app, nav, current);
            });
            items.push(h('li', { class: 'more' }, more));
          }
          for (const d of l.navigation) {
            items.push(
              h(
                'li',
                null,
                h('a', { class: 'nav-doc', href: routes.document(d.bundle, d.path), 'aria-current': d.bundle === current.bundle && d.path === current.path ? 'page' : null }, d.path),
              ),
            );
          }
          if (items.length === 0) items.push(h('li', { class: 'muted pad' }, 'No notes.'));
          fill(list, items);
          list.querySelector('[aria-current="page"]')?.scrollIntoView({ block: 'nearest' });
        })
        .catch((e) => showError(e, `list the bundle ${b.name}`));
    }
    return [h('h2', null, toggle), list];
  });
  fill(nav, groups);
}

/** Arrow-key movement between the list's links and toggles. */
export function sidebarKeys(nav: HTMLElement): void {
  nav.addEventListener('keydown', (e) => {
    if (!['ArrowDown', 'ArrowUp', 'Home', 'End'].includes(e.key)) return;
    const items = [...nav.querySelectorAll<HTMLElement>('a, button')].filter((el) => el.offsetParent !== null);
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
