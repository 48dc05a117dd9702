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
  void draw(app, nav, current).catch((e) => showError(e, 'list the notes'));
}

/** The last drawn list's signature: a redraw that would change nothing leaves the DOM alone. */
let drawnSignature = '';

async function draw(app: App, nav: HTMLElement, current: Current): Promise<void> {
  const bundles = app.summary.bundles;
  const total = bundles.reduce((n, b) => n + b.concepts, 0);
  if (foldedDefault === null && total > 0) {
    // A big tenant starts with its bundles folded, except the one being read.
    foldedDefault = total > 400;
    if (foldedDefault) for (const b of bundles) folded.add(b.name);
  }
  if (current.bundle) folded.delete(current.bundle);
  const my = ++drawn;
  if (bundles.length === 0) {
    drawnSignature = '';
    fill(nav, h('p', { class: 'muted pad' }, 'No notes yet. Create one, or import a folder of Markdown.'));
    return;
  }
  const open = bundles.filter((b) => !folded.has(b.name));
  const listings = new Map(await Promise.all(open.map(async (b) => [b.name, await app.listing(b.name)] as const)));
  if (my !== drawn) return;
  const signature = JSON.stringify([
    bundles.map((b) => [b.name, b.concepts, folded.has(b.name), shown.get(b.name) ?? PAGE]),
    [...listings.values()].map((l) => [l.notes.map((n) => [n.id, n.title, n.status]), l.navigation.map((d) => d.path)]),
    current.id ?? null,
    current.bundle ?? null,
    current.path ?? null,
  ]);
  if (signature === drawnSignature && nav.childElementCount) return;
  drawnSignature = signature;
  const focused = document.activeElement && nav.contains(document.activeElement) ? (document.activeElement as HTMLElement).dataset.key : undefined;
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
        'data-key': `bundle:${b.name}`,
        onclick: () => {
          if (folded.has(b.name)) folded.delete(b.name);
          else folded.add(b.name);
          void draw(app, nav, current).then(() => (nav.querySelector(`[aria-controls="${CSS.escape(listId)}"]`) as HTMLElement | null)?.focus());
        },
      },
      h('span', null, `${isFolded ? '▸' : '▾'} ${b.name}`),
      h('span', { class: 'count' }, String(b.concepts)),
    );
    const list = h('ul', { id: listId, hidden: isFolded });
    const l = listings.get(b.name);
    if (l) {
      const limit = shown.get(b.name) ?? PAGE;
      const items: HTMLElement[] = l.notes.slice(0, limit).map((n) =>
        h('li', null, h('a', { href: routes.concept(n.id), 'aria-current': n.id === current.id ? 'page' : null, 'data-id': n.id, 'data-key': `note:${n.id}` }, noteLabel(n), badge(n.status))),
      );
      if (l.notes.length > limit) {
        const more = h('button', { type: 'button', class: 'linklike', 'data-key': `more:${b.name}` }, `Show ${Math.min(PAGE, l.notes.length - limit)} more of ${l.notes.length.toLocaleString('en-US')}`);
        more.addEventListener('click', () => {
          shown.set(b.name, limit + PAGE);
          void draw(app, nav, current);
        });
        items.push(h('li', { class: 'more' }, more));
      }
      for (const d of l.navigation) {
        items.push(
          h(
            'li',
            null,
            h('a', { class: 'nav-doc', href: routes.document(d.bundle, d.path), 'aria-current': d.bundle === current.bundle && d.path === current.path ? 'page' : null, 'data-key': `doc:${d.bundle}/${d.path}` }, d.path),
          ),
        );
      }
      if (items.length === 0) items.push(h('li', { class: 'muted pad' }, 'No notes.'));
      list.append(...items);
    }
    return [h('h2', null, toggle), list];
  });
  fill(nav, groups);
  if (focused) (nav.querySelector(`[data-key="${CSS.escape(focused)}"]`) as HTMLElement | null)?.focus({ preventScroll: true });
  nav.querySelector('[aria-current="page"]')?.scrollIntoView({ block: 'nearest' });
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
