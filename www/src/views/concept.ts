// The concept view: the rendered body, the manifest row (kind, status, grain, summary), the
// outline of its sections, outgoing links and backlinks, and the diagnostics the last save
// reported. Opened from a search hit (`?q=…&pos=…`), it scrolls to the passage at `pos` and
// highlights the query's words there.

import type { App, Section } from '../app.js';
import { h, fill } from '../lib/dom.js';
import { render, lineOf, type LinkContext } from '../lib/markdown.js';
import { resolveMarkdown, resolveWiki } from '../lib/links.js';
import { readFields, split } from '../lib/frontmatter.js';
import { badge, routes, setTitle, confirmDialog, showError, announce } from '../ui.js';
import type { View } from './view.js';

export interface ConceptParams {
  id: string;
  q?: string;
  pos?: number;
  anchor?: string;
}

export function linkContext(app: App, bundle: string, path: string, links: readonly string[], self: string): LinkContext {
  return {
    markdown: (d) => resolveMarkdown(app.docs, bundle, path, d),
    wiki: (inner) => resolveWiki(app.docs, bundle, links, inner),
    anchor: (fragment) => `${self}?anchor=${encodeURIComponent(fragment)}`,
  };
}

export function diagnosticsList(list: { message: string }[] | undefined, heading = 'Diagnostics'): HTMLElement | null {
  if (list === undefined) return null;
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

  const draw = async (first: boolean) => {
    const { id } = params;
    const [bodies, sources] = await Promise.all([app.conn.get([id]), app.conn.get([id], { source: true })]);
    if (disposed) return;
    const body = bodies.get(id);
    const source = sources.get(id);
    if (!body || !source) {
      setTitle('Not found');
      fill(
        main,
        h('h1', null, 'No such note'),
        h('p', null, `There is no concept “${id}” in this tenant (any more). Its id may have changed when another note was added or removed; search for it.`),
      );
      return;
    }
    const row = app.rows.get(id);
    const signature = JSON.stringify([source.hash, row, app.backlinks.get(id), app.diagnosticsOf(source.bundle!, source.path!)]);
    if (!first && signature === shown) return;
    shown = signature;
    const bundle = source.bundle!;
    const path = source.path!;
    const fields = readFields(source.text).fields;
    const hasFrontmatter = split(source.text).has;
    const self = routes.concept(id);
    const sections = await app.sections(id, body.text).catch(() => [] as Section[]);
    if (disposed) return;
    const html = render(body.text, linkContext(app, bundle, path, row?.links ?? [], self));
    const rendered = h('article', { class: 'rendered', 'aria-label': 'Note' });
    rendered.innerHTML = html;

    const title = fields.title || id;
    setTitle(title);
    const back = app.backlinks.get(id) ?? [];
    const del = h('button', { class: 'danger', type: 'button' }, 'Delete');
    del.addEventListener('click', async () => {
      if (!(await confirmDialog(`Delete ${bundle}/${path}? Its history keeps it, so a restore can bring it back.`, 'Delete', true))) return;
      try {
        await app.conn.delete(bundle, path, source.hash!);
        announce(`Deleted ${bundle}/${path}`);
        await app.refresh();
        location.hash = '#/';
      } catch (e) {
        showError(e, 'delete');
        if ((e as { code?: string }).code === 'CONFLICT') void draw(true);
      }
    });

    fill(
      main,
      h(
        'div',
        { class: 'concept', dataset: { id } },
        h(
          'div',
          null,
          h(
            'header',
            { class: 'concept-head' },
            h('div', { class: 'path' }, `${bundle} / ${path}`),
            h('h1', null, title),
            h(
              'div',
              { class: 'meta' },
              title !== id ? h('code', null, id) : null,
              row && row.kind !== '-' ? h('span', null, `kind: ${row.kind}`) : null,
              row ? badge(row.status) : null,
              row && row.grain !== '-' ? h('span', null, `grain: ${row.grain}`) : null,
              hasFrontmatter ? null : h('span', null, 'no frontmatter'),
            ),
            row && row.summary !== '-' ? h('p', { class: 'summary muted' }, row.summary) : null,
            h(
              'div',
              { class: 'toolbar' },
              h('a', { class: 'button primary', href: routes.edit(bundle, path), 'aria-keyshortcuts': 'e' }, 'Edit'),
              del,
            ),
          ),
          params.q !== undefined && params.pos !== undefined
            ? h('p', { class: 'banner', id: 'passage-note' }, `Opened at the passage for “${params.q}”. `, h('a', { href: self }, 'Clear the highlight'))
            : null,
          rendered,
        ),
        h(
          'div',
          { class: 'side' },
          h(
            'section',
            { 'aria-labelledby': 'outline-h' },
            h('h2', { id: 'outline-h' }, 'Outline'),
            sections.length
              ? h(
                  'ul',
                  { class: 'outline' },
                  sections.map((s) =>
                    h(
                      'li',
                      null,
                      h(
                        'a',
                        {
                          href: `${self}?section=${encodeURIComponent(s.name)}`,
                          onclick: (e: Event) => {
                            e.preventDefault();
                            scrollToLine(rendered, lineOf(body.text, s.start), true);
                          },
                        },
                        s.name,
                      ),
                    ),
                  ),
                )
              : h('p', { class: 'muted' }, 'No sections.'),
          ),
          h(
            'section',
            { 'aria-labelledby': 'links-h' },
            h('h2', { id: 'links-h' }, `Links (${row?.links.length ?? 0})`),
            row && row.links.length ? h('ul', { class: 'links' }, row.links.map((l) => h('li', null, h('a', { href: routes.concept(l) }, l), ' ', badge(app.rows.get(l)?.status ?? '-')))) : h('p', { class: 'muted' }, 'None.'),
          ),
          h(
            'section',
            { 'aria-labelledby': 'backlinks-h' },
            h('h2', { id: 'backlinks-h' }, `Backlinks (${back.length})`),
            back.length ? h('ul', { class: 'backlinks' }, back.map((l) => h('li', null, h('a', { href: routes.concept(l) }, l)))) : h('p', { class: 'muted' }, 'None.'),
          ),
          diagnosticsList(app.diagnosticsOf(bundle, path)),
        ),
      ),
    );

    if (first) {
      if (params.q !== undefined && params.pos !== undefined) await highlight(app, rendered, id, body.text, params.q, params.pos);
      else if (params.anchor) scrollToAnchor(rendered, params.anchor);
      else if (new URLSearchParams(location.hash.split('?')[1] ?? '').get('section')) {
        const name = new URLSearchParams(location.hash.split('?')[1]).get('section');
        const s = sections.find((x) => x.name === name);
        if (s) scrollToLine(rendered, lineOf(body.text, s.start), false);
      }
    }
  };

  void draw(true).catch((e) => showError(e, 'open note'));

  const keys = (e: KeyboardEvent) => {
    if (e.key !== 'e' || e.ctrlKey || e.metaKey || e.altKey) return;
    if ((e.target as HTMLElement).closest('input, textarea, select, dialog')) return;
    const edit = main.querySelector<HTMLAnchorElement>('.toolbar a.button.primary');
    if (edit) {
      e.preventDefault();
      location.hash = edit.getAttribute('href')!;
    }
  };
  document.addEventListener('keydown', keys);

  return {
    refresh: () => {
      void draw(false).catch((e) => showError(e, 'refresh note'));
    },
    dispose: () => {
      disposed = true;
      document.removeEventListener('keydown', keys);
    },
  };
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

interface Occurrence {
  at: number;
  end: number;
  word: string;
}

/** Whole-word occurrences of `words` (search.md §6 rules 2–4), sorted by offset. */
function occurrences(text: string, query: string): Occurrence[] {
  let words = [...new Set(query.match(/[\p{L}\p{N}]+/gu) ?? [])];
  let hay = text;
  const lower = text.toLowerCase();
  if (lower.length === text.length) {
    hay = lower;
    words = [...new Set(words.map((w) => w.toLowerCase()))];
  }
  const isWord = (c: string | undefined) => c !== undefined && /[\p{L}\p{N}]/u.test(c);
  const before = (i: number) => {
    if (i <= 0) return undefined;
    const c = hay.charCodeAt(i - 1);
    return c >= 0xdc00 && c <= 0xdfff && i >= 2 ? hay.slice(i - 2, i) : hay[i - 1];
  };
  const after = (i: number) => (i < hay.length ? String.fromCodePoint(hay.codePointAt(i)!) : undefined);
  const out: Occurrence[] = [];
  for (const word of words) {
    let i = hay.indexOf(word);
    while (i >= 0) {
      if (!isWord(before(i)) && !isWord(after(i + word.length))) out.push({ at: i, end: i + word.length, word });
      i = hay.indexOf(word, i + 1);
    }
  }
  return out.sort((a, b) => a.at - b.at || a.end - b.end);
}

/** The densest cluster (search.md §6 rule 5) of the occurrences. */
function cluster(occ: Occurrence[]): Occurrence[] {
  let best: Occurrence[] = [];
  let bestCount = 0;
  for (let i = 0; i < occ.length; i++) {
    const window = [occ[i]];
    for (let j = i + 1; j < occ.length && occ[j].end <= occ[i].at + 2000; j++) window.push(occ[j]);
    const count = new Set(window.map((o) => o.word)).size;
    if (count > bestCount) {
      bestCount = count;
      best = window;
    }
  }
  return best;
}

/**
 * Scrolls to the passage a search hit points at: `get(id, {offset: pos, limit: 2000})` is the
 * window search.md §6 intends; the densest cluster of the query's words in it is marked.
 */
async function highlight(app: App, root: HTMLElement, id: string, body: string, query: string, pos: number): Promise<void> {
  const window = (await app.conn.get([id], { offset: pos, limit: 2000 })).get(id);
  if (!window) return;
  const found = cluster(occurrences(window.text, query));
  const from = window.start + (found[0]?.at ?? 0);
  const to = window.start + (found.length ? found[found.length - 1].end : Math.min(window.text.length, 200));
  const blocks = blocksFor(root, lineOf(body, from), lineOf(body, Math.max(from, to - 1)));
  const words = new Set(found.map((o) => o.word));
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
function markWords(el: HTMLElement, words: Set<string>): void {
  if (words.size === 0) return;
  const walker = document.createTreeWalker(el, NodeFilter.SHOW_TEXT);
  const nodes: Text[] = [];
  while (walker.nextNode()) nodes.push(walker.currentNode as Text);
  const query = [...words].join(' ');
  for (const node of nodes) {
    const text = node.data;
    const occ = occurrences(text, query);
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
