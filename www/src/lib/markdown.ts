// Renders a concept's body to HTML with markdown-it (CommonMark, tables, strikethrough,
// footnotes; raw HTML is shown as text). It runs in the engine worker; the page sanitises the
// HTML (DOMPurify, src/lib/sanitize.ts) before it shows it. Every block carries the body line
// it starts on (`data-line`), so the page can scroll to a section or a search hit. Links
// become routes of the page: Markdown links by path, wiki links (`[[target|label]]`) by path
// or id, by the compiler's rule (the package's `linkTargets`, docs/compile.md §6.2–§6.3);
// a link nothing resolves is shown as broken, and clicking it creates the note it names.

import MarkdownIt, { type StateInline, type Token } from 'markdown-it';
import footnote from 'markdown-it-footnote';
import type { LinkTarget as Target } from 'langonrock';

export interface LinkContext {
  markdown(destination: string): Target;
  wiki(inner: string): Target;
  /** The route of an anchor in this concept. */
  anchor(fragment: string): string;
}

interface PageEnv {
  links: LinkContext;
  lineOffset: number;
}

const wikiRule = (state: StateInline, silent: boolean): boolean => {
  const src = state.src;
  const pos = state.pos;
  if (src.charCodeAt(pos) !== 0x5b || src.charCodeAt(pos + 1) !== 0x5b) return false;
  if (pos > 0 && src.charCodeAt(pos - 1) === 0x21) return false; // ![[embed]] is an image
  const end = src.indexOf(']]', pos + 2);
  if (end < 0) return false;
  const inner = src.slice(pos + 2, end);
  if (inner.trim() === '' || /[[\]\n]/.test(inner)) return false;
  if (!silent) {
    const token = state.push('wikilink', 'a', 0);
    token.meta = { inner };
  }
  state.pos = end + 2;
  return true;
};

const md = new MarkdownIt({ html: false, linkify: false, typographer: false });
md.use(footnote);
md.inline.ruler.before('link', 'wikilink', wikiRule);

// Every block token that opens (or is) an element gets the body line it starts on.
md.core.ruler.push('source_lines', (state) => {
  const offset = (state.env as unknown as PageEnv | undefined)?.lineOffset ?? 0;
  for (const token of state.tokens) {
    if (token.map && token.nesting >= 0 && token.type !== 'inline') {
      token.attrSet('data-line', String(token.map[0] + offset));
      token.attrSet('data-line-end', String(token.map[1] + offset));
    }
  }
});

const escape = md.utils.escapeHtml;

/** The page's route of a link target (none for an anchor or a broken link). */
export function href(target: Target): string | null {
  switch (target.kind) {
    case 'external':
      return target.href;
    case 'concept':
      return `#/c/${encodeURIComponent(target.id)}`;
    case 'document':
      return `#/d/${encodeURIComponent(target.bundle)}/${target.path.split('/').map(encodeURIComponent).join('/')}`;
    case 'anchor':
    case 'unresolved':
      return null;
  }
}

/** The route that creates the note a broken link names. */
export function createRoute(bundle: string, path: string, title: string): string {
  const p = new URLSearchParams({ bundle, path, title });
  return `#/new?${p.toString()}`;
}

function linkAttrs(target: Target, links: LinkContext): string {
  switch (target.kind) {
    case 'external':
      return ` href="${escape(target.href)}" class="external" rel="noopener noreferrer" target="_blank"`;
    case 'anchor':
      return ` href="${escape(links.anchor(target.fragment))}"`;
    case 'concept':
      return ` href="${escape(href(target)!)}" class="internal" data-id="${escape(target.id)}"`;
    case 'document':
      return ` href="${escape(href(target)!)}" class="internal nav-doc"`;
    case 'unresolved':
      return target.create
        ? ` href="${escape(createRoute(target.create.bundle, target.create.path, target.create.title))}" class="broken" title="No such note yet: click to create ${escape(target.create.path)}"`
        : ` class="broken" title="unresolved link" aria-disabled="true"`;
  }
}

md.renderer.rules.wikilink = (tokens, idx, _options, env) => {
  const links = (env as unknown as PageEnv).links;
  const inner = String((tokens[idx].meta as { inner: string }).inner);
  const bar = inner.indexOf('|');
  const label = bar >= 0 ? inner.slice(bar + 1) : inner;
  const target = links.wiki(inner);
  return `<a${linkAttrs(target, links).replace(' class="', ' class="wikilink ')}>${escape(label)}</a>`;
};

md.renderer.rules.link_open = (tokens, idx, _options, env) => {
  const links = (env as unknown as PageEnv).links;
  const token = tokens[idx];
  const destination = String(token.attrGet('href') ?? '');
  const title = token.attrGet('title');
  const target = links.markdown(destination);
  return `<a${linkAttrs(target, links)}${title ? ` title="${escape(String(title))}"` : ''}>`;
};

/** The body (or a part of it that starts on body line `lineOffset`) as HTML. */
export function render(body: string, links: LinkContext, lineOffset = 0): string {
  return md.render(body, { links, lineOffset } satisfies PageEnv);
}

/**
 * Where to cut a long body so that about `limit` units are rendered: at a blank line (a
 * block boundary) before `from + limit`, or at a line break, or at `limit` itself.
 */
export function cutAt(body: string, from: number, limit: number): number {
  if (body.length - from <= limit) return body.length;
  const end = from + limit;
  const blank = body.lastIndexOf('\n\n', end);
  if (blank > from + limit / 2) return blank + 1;
  const nl = body.lastIndexOf('\n', end);
  if (nl > from) return nl + 1;
  return end;
}

/** The body line (0-based, as markdown-it counts: `\r\n`, `\r` and `\n` each end one) of a UTF-16 offset. */
export function lineOf(body: string, offset: number): number {
  let line = 0;
  const end = Math.min(offset, body.length);
  for (let i = 0; i < end; i++) {
    const c = body.charCodeAt(i);
    if (c === 0x0a) line++;
    else if (c === 0x0d) {
      if (body.charCodeAt(i + 1) === 0x0a) i++;
      line++;
    }
  }
  return line;
}

/** The text a reader sees of inline Markdown: text, code, link and image text (compile.md §7.2). */
export function plainInline(src: string): string {
  const tokens = md.parseInline(src, { links: NO_LINKS, lineOffset: 0 })[0]?.children ?? [];
  return plainTokens(tokens);
}

function plainTokens(tokens: Token[]): string {
  let out = '';
  for (const t of tokens) {
    if (t.type === 'text' || t.type === 'code_inline') out += t.content;
    else if (t.type === 'softbreak' || t.type === 'hardbreak') out += ' ';
    else if (t.type === 'image') out += plainTokens(t.children ?? []);
    else if (t.type === 'wikilink') {
      const inner = String((t.meta as { inner: string }).inner);
      const bar = inner.indexOf('|');
      out += bar >= 0 ? inner.slice(bar + 1) : inner;
    }
  }
  return out;
}

const NO_LINKS: LinkContext = {
  markdown: () => ({ kind: 'unresolved' }),
  wiki: () => ({ kind: 'unresolved' }),
  anchor: () => '',
};

/**
 * A heading line's text and level: an ATX heading (`## Text ##`), or a setext heading (a
 * paragraph line whose next line is `===` or `---`, after a blank line). Null otherwise.
 */
export function plainHeading(line: string, next: string | undefined, previous: string): { text: string; level: number } | null {
  const atx = /^ {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$/.exec(line);
  if (atx) return { text: plainInline((atx[2] ?? '').replace(/^#+$/, '')).trim(), level: atx[1].length };
  if (next !== undefined && previous.trim() === '' && line.trim() !== '' && !/^ {4}/.test(line) && !/^ {0,3}([-*+>]|\d+[.)])([ \t]|$)/.test(line)) {
    const under = /^ {0,3}(=+|-+)[ \t]*$/.exec(next);
    if (under) return { text: plainInline(line.trim()).trim(), level: under[1][0] === '=' ? 1 : 2 };
  }
  return null;
}

export interface LinkUse {
  /** Where the link is, as the resolver sees it. */
  target: Target;
  /** The paragraph's plain text, and the link's label in it. */
  text: string;
  start: number;
  end: number;
}

/** Every link in the body's paragraphs, with the paragraph's plain text around it. */
export function linkUses(body: string, links: LinkContext): LinkUse[] {
  const out: LinkUse[] = [];
  const tokens = md.parse(body, { links, lineOffset: 0 });
  for (const block of tokens) {
    if (block.type !== 'inline' || !block.children) continue;
    let text = '';
    const found: Array<{ target: Target; start: number; end: number }> = [];
    let open: { target: Target; start: number } | null = null;
    for (const t of block.children) {
      if (t.type === 'text' || t.type === 'code_inline') text += t.content;
      else if (t.type === 'softbreak' || t.type === 'hardbreak') text += ' ';
      else if (t.type === 'image') text += plainTokens(t.children ?? []);
      else if (t.type === 'link_open') open = { target: links.markdown(String(t.attrGet('href') ?? '')), start: text.length };
      else if (t.type === 'link_close' && open) {
        found.push({ ...open, end: text.length });
        open = null;
      } else if (t.type === 'wikilink') {
        const inner = String((t.meta as { inner: string }).inner);
        const bar = inner.indexOf('|');
        const start = text.length;
        text += bar >= 0 ? inner.slice(bar + 1) : inner;
        found.push({ target: links.wiki(inner), start, end: text.length });
      }
    }
    for (const f of found) out.push({ ...f, text });
  }
  return out;
}
