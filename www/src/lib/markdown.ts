// Renders a concept's body to sanitised HTML with markdown-it (CommonMark, tables,
// strikethrough, footnotes; raw HTML is shown as text) and DOMPurify. Every block carries the
// body line it starts on (`data-line`), so the page can scroll to a section or a search hit.
// Links become routes of the page: Markdown links by path, wiki links (`[[target|label]]`) by
// path or id; a link the engine left unresolved is shown as broken.

import MarkdownIt, { type StateInline } from 'markdown-it';
import footnote from 'markdown-it-footnote';
import DOMPurify from 'dompurify';
import { href, type Target } from './links.js';

export interface LinkContext {
  markdown(destination: string): Target;
  wiki(inner: string): Target;
  /** The route of an anchor in this concept. */
  anchor(fragment: string): string;
}

interface PageEnv {
  links: LinkContext;
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
  for (const token of state.tokens) {
    if (token.map && token.nesting >= 0 && token.type !== 'inline') {
      token.attrSet('data-line', String(token.map[0]));
      token.attrSet('data-line-end', String(token.map[1]));
    }
  }
});

const escape = md.utils.escapeHtml;

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
      return ` class="broken" title="unresolved link" aria-disabled="true"`;
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

/** The body as sanitised HTML. */
export function render(body: string, links: LinkContext): string {
  const html = md.render(body, { links } satisfies PageEnv);
  return DOMPurify.sanitize(html, { ADD_ATTR: ['target'] });
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
