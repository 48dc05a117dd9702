// The note view: the title, the full description, the rendered body, the outline of its
// headings, its links and its backlinks (titles first, each backlink with the sentence it
// links from), and the diagnostics the last save reported. The worker renders; this view
// sanitises and shows. Opened from a search hit (`?q=…&pos=…`), it scrolls to the passage at
// `pos` and marks the query's words there. A long note renders its first part, then the rest
// on request.

import type { App } from '../app.js';
import type { ConceptModel, Marked } from '../engine/types.js';
import { h, fill } from '../lib/dom.js';
import { sanitized } from '../lib/sanitize.js';
import { occurrences } from '../lib/passage.js';
import { badge, routes, setTitle, confirmDialog, showError, announce, noteLink, markedText, noteName, typing, plural } from '../ui.js';
import type { Command } from '../palette.js';
import { currentChanged, type View } from './view.js';

export interface ConceptParams {
  id: string;
  q?: string;
  pos?: number;
  anchor?: string;
  section?: string;
}

const MORE = 200_000;

export function diagnosticsList(list: { message: string }[] | null | undefined, heading = 'Diagnostics'): HTMLElement | null {
  if (list === undefined || list === null) return null;
  return h(
    'section',
    { class: 'diagnostics-panel', 'aria-label': heading },
    h('h2', null, heading),
    list.length === 0
      ? h('p', { class: 'diagnostics none' }, 'No diagnostics: the compiler is happy with this note.')
      : h('ul', { class: 'diagnostics' }, list.map((d) => h('li', null, d.message))),
  );
}

export function conceptView(app: App, main: HTMLElement, params: ConceptParams): View {
  let disposed = false;
  let shown = '';
  let model: ConceptModel | null = null;
  let rendered: HTMLElement | null = null;
  let moreButton: HTMLButtonElement | null = null;

  const remove = async () => {
    if (!model) return;
    const { bundle, path } = model.note;
    if (!(await confirmDialog(`Delete “${noteName(model.note)}” (${bundle}/${path})? Its history keeps it, so it can be restored.`, 'Delete', true))) return;
    try {
      await app.call('remove', bundle, path, model.hash);
      announce(`Deleted ${bundle}/${path}`);
      location.hash = '#/';
    } catch (e) {
      showError(e, 'delete the note');
      if ((e as { code?: string }).code === 'CONFLICT') void draw(true);
    }
  };

  const renderRest = async (untilLine?: number) => {
    if (!model || !rendered) return;
    while (model.renderedTo < model.bodyLength) {
      const part = await app.call('renderMore', model.note.id, model.renderedTo, MORE);
      if (!part || disposed) return;
      rendered.append(sanitized(part.html));
      model.renderedTo = part.renderedTo;
      if (untilLine === undefined || lastLine(rendered) > untilLine) break;
    }
    if (moreButton) {
      moreButton.hidden = model.renderedTo >= model.bodyLength;
      moreButton.textContent = `Show the rest of the note (${plural(model.bodyLength - model.renderedTo, 'more character')})`;
    }
  };

  const goToLine = async (line: number, focus: boolean) => {
    if (!rendered || !model) return;
    if (lastLine(rendered) < line && model.renderedTo < model.bodyLength) await renderRest(line);
    scrollToLine(rendered, line, focus);
  };

  const draw = async (first: boolean) => {
    const m = await app.call('concept', params.id, first && params.q !== undefined && params.pos !== undefined ? { q: params.q, pos: params.pos } : {});
    if (disposed) return;
    if (!m) {
      setTitle('Not found');
      fill(
        main,
        h('h1', null, 'No such note'),
        h('p', null, `There is no note “${params.id}” here (any more). Its id may have changed when another note was added or removed: search for it, or open it from the list.`),
      );
      return;
    }
    const signature = JSON.stringify([m.hash, m.note, m.links, m.backlinks, m.diagnostics, m.outline]);
    if (!first && signature === shown) return;
    shown = signature;
    model = m;
    currentChanged();
    app.visited(m.note.id);
    const { bundle, path } = m.note;
    const title = noteName(m.note);
    setTitle(title);
    const self = routes.concept(m.note.id);
    rendered = h('article', { class: 'rendered', 'aria-label': 'The note' });
    rendered.append(sanitized(m.html));
    moreButton = h('button', { type: 'button', hidden: m.renderedTo >= m.bodyLength }, `Show the rest of the note (${plural(m.bodyLength - m.renderedTo, 'more character')})`);
    moreButton.addEventListener('click', () => void renderRest().catch((e) => showError(e, 'show the rest of the note')));
    const del = h('button', { class: 'danger', type: 'button' }, 'Delete');
    del.addEventListener('click', () => void remove());

    const description = m.description ?? (m.summary !== '-' ? m.summary : null);
    fill(
      main,
      h(
        'div',
        { class: 'concept', dataset: { id: m.note.id } },
        h(
          'div',
          null,
          h(
            'header',
            { class: 'concept-head' },
            h('div', { class: 'path' }, `${bundle} / ${path}`),
            h('h1', null, title),
            description ? h('p', { class: m.description ? 'description' : 'description muted' }, description) : null,
            h(
              'div',
              { class: 'meta' },
              title !== m.note.id ? h('code', { title: 'The note’s id: agents and links use it' }, m.note.id) : null,
              m.kind !== '-' ? h('span', null, `kind: ${m.kind}`) : null,
              badge(m.note.status),
              m.grain !== '-' ? h('span', null, `grain: ${m.grain}`) : null,
              m.hasFrontmatter ? null : h('span', null, 'no frontmatter'),
            ),
            h(
              'div',
              { class: 'toolbar' },
              h('a', { class: 'button primary', href: routes.edit(bundle, path), 'aria-keyshortcuts': 'e', id: 'edit-note' }, 'Edit'),
              h('a', { class: 'button', href: routes.noteHistory(bundle, path), 'aria-keyshortcuts': 'h' }, 'History'),
              del,
            ),
          ),
          params.q !== undefined && params.pos !== undefined
            ? h('p', { class: 'banner', id: 'passage-note' }, `Opened at the passage for “${params.q}”. `, h('a', { href: self }, 'Clear the highlight'))
            : null,
          rendered,
          moreButton,
        ),
        h(
          'div',
          { class: 'side' },
          h(
            'section',
            { 'aria-labelledby': 'outline-h' },
            h('h2', { id: 'outline-h' }, 'Outline'),
            m.outline.length
              ? h(
                  'ul',
                  { class: 'outline' },
                  m.outline.map((s) =>
                    h(
                      'li',
                      { class: `level-${s.level}` },
                      h(
                        'a',
                        {
                          href: `${self}?section=${encodeURIComponent(s.name)}`,
                          'data-section': s.name,
                          onclick: (e: Event) => {
                            e.preventDefault();
                            void goToLine(s.line, true);
                          },
                        },
                        s.text,
                      ),
                    ),
                  ),
                )
              : h('p', { class: 'muted' }, 'No headings.'),
          ),
          h(
            'section',
            { 'aria-labelledby': 'links-h' },
            h('h2', { id: 'links-h' }, `Links (${m.links.length})`),
            m.links.length ? h('ul', { class: 'links' }, m.links.map((l) => h('li', null, noteLink(l)))) : h('p', { class: 'muted' }, 'None.'),
          ),
          h(
            'section',
            { 'aria-labelledby': 'backlinks-h' },
            h('h2', { id: 'backlinks-h' }, `Backlinks (${m.backlinks.length})`),
            m.backlinks.length
              ? h(
                  'ul',
                  { class: 'backlinks' },
                  m.backlinks.map((b) => h('li', null, noteLink(b), b.contexts.map((c: Marked) => h('span', { class: 'context' }, markedText(c))))),
                )
              : h('p', { class: 'muted' }, 'None.'),
          ),
          diagnosticsList(m.diagnostics),
        ),
      ),
    );

    if (first) {
      if (m.hit) highlight(rendered, m.hit.fromLine, m.hit.toLine, m.hit.words);
      else if (params.anchor) scrollToAnchor(rendered, params.anchor);
      else if (params.section) {
        const s = m.outline.find((x) => x.name === params.section);
        if (s) void goToLine(s.line, false);
      }
    }
  };

  void draw(true).catch((e) => showError(e, 'open the note'));

  const keys = (e: KeyboardEvent) => {
    if (e.key !== 'e' || e.ctrlKey || e.metaKey || e.altKey || typing(e) || document.querySelector('dialog[open]')) return;
    if (model) {
      e.preventDefault();
      location.hash = routes.edit(model.note.bundle, model.note.path);
    }
  };
  document.addEventListener('keydown', keys);

  return {
    refresh: () => {
      void draw(false).catch((e) => showError(e, 'show the note'));
    },
    dispose: () => {
      disposed = true;
      document.removeEventListener('keydown', keys);
    },
    current: () => {
      if (!model) return { id: params.id };
      const { bundle, path } = model.note;
      const commands: Command[] = [
        { label: `Edit “${noteName(model.note)}”`, keys: 'e', run: () => (location.hash = routes.edit(bundle, path)) },
        { label: 'History of this note', keys: 'h', run: () => (location.hash = routes.noteHistory(bundle, path)) },
        { label: 'Delete this note', run: () => void remove() },
      ];
      return { id: params.id, bundle, path, commands };
    },
  };
}

function lastLine(root: HTMLElement): number {
  const all = root.querySelectorAll<HTMLElement>('[data-line-end]');
  const last = all[all.length - 1];
  return last ? Number(last.dataset.lineEnd) : 0;
}

/** The innermost rendered blocks whose source lines meet [from, to]. */
function blocksFor(root: HTMLElement, from: number, to: number): HTMLElement[] {
  const all = [...root.querySelectorAll<HTMLElement>('[data-line]')];
  const meets = all.filter((el) => {
    const a = Number(el.dataset.line);
    const b = Number(el.dataset.lineEnd ?? a + 1);
    return a <= to && b > from;
  });
  return meets.filter((el) => !meets.some((other) => other !== el && el.contains(other)));
}

function scrollToLine(root: HTMLElement, line: number, focus: boolean): void {
  const el = blocksFor(root, line, line)[0] ?? root;
  el.scrollIntoView({ block: 'start' });
  if (focus) {
    el.setAttribute('tabindex', '-1');
    el.focus({ preventScroll: true });
  }
}

function scrollToAnchor(root: HTMLElement, fragment: string): void {
  const want = fragment.toLowerCase();
  const slug = (s: string) => s.toLowerCase().trim().replace(/[^\p{L}\p{N}]+/gu, '-').replace(/^-|-$/g, '');
  const heading = [...root.querySelectorAll<HTMLElement>('h1, h2, h3, h4, h5, h6')].find((el) => slug(el.textContent ?? '') === want || slug(el.textContent ?? '') === slug(want));
  heading?.scrollIntoView({ block: 'start' });
}

/** Marks the passage of a search hit (its body lines) and the query's words in it. */
function highlight(root: HTMLElement, fromLine: number, toLine: number, words: string[]): void {
  const blocks = blocksFor(root, fromLine, toLine);
  for (const block of blocks) {
    block.classList.add('hit-passage');
    markWords(block, words);
  }
  const first = root.querySelector('.hit-passage mark') ?? blocks[0];
  if (first) {
    first.scrollIntoView({ block: 'center' });
    const target = blocks[0];
    target.setAttribute('tabindex', '-1');
    target.focus({ preventScroll: true });
  }
}

/** Wraps whole-word occurrences of `words` in the text under `el` in <mark>. */
function markWords(el: HTMLElement, words: string[]): void {
  if (words.length === 0) return;
  const walker = document.createTreeWalker(el, NodeFilter.SHOW_TEXT);
  const nodes: Text[] = [];
  while (walker.nextNode()) nodes.push(walker.currentNode as Text);
  for (const node of nodes) {
    const text = node.data;
    const occ = occurrences(text, words);
    if (occ.length === 0) continue;
    const frag = document.createDocumentFragment();
    let at = 0;
    for (const o of occ) {
      if (o.at < at) continue;
      frag.append(text.slice(at, o.at), h('mark', null, text.slice(o.at, o.end)));
      at = o.end;
    }
    frag.append(text.slice(at));
    node.replaceWith(frag);
  }
}
