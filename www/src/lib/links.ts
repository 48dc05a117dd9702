// Following links by clicking. Markdown links resolve by path within the linking bundle
// (compile.md §6.2), wiki links by path or id (§6.3). The engine decides which links a concept
// has (the manifest's links column); the page only finds which of those a click means, so a
// link the engine left unresolved is shown as broken, never pointed somewhere else. A broken
// link names the document that would resolve it (`create`): the path a Markdown link points
// at, or `<target>.md` from the bundle root for a wiki link (§6.3 rule 2.1).
//
// This stands in for the compiler's link resolution until the package reports where each
// link of a concept goes; it runs in the engine worker, beside src/lib/rows.ts.

import type { SourceEntry } from 'langonrock';

export type Target =
  | { kind: 'external'; href: string }
  | { kind: 'anchor'; fragment: string }
  | { kind: 'concept'; id: string }
  | { kind: 'document'; bundle: string; path: string }
  | { kind: 'unresolved'; create?: { bundle: string; path: string; title: string } };

export interface Documents {
  /** `<bundle>\n<path>` → entry. */
  byPath: Map<string, SourceEntry>;
  /** Public id → entry. */
  byId: Map<string, SourceEntry>;
}

export function indexDocuments(entries: SourceEntry[]): Documents {
  const byPath = new Map<string, SourceEntry>();
  const byId = new Map<string, SourceEntry>();
  for (const e of entries) {
    byPath.set(`${e.bundle}\n${e.path}`, e);
    if (e.id !== undefined) byId.set(e.id, e);
  }
  return { byPath, byId };
}

const SCHEME = /^[a-z][a-z0-9+.-]*:/i;

function decode(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}

function withMd(p: string): string {
  return /\.md$/i.test(p) ? p : `${p}.md`;
}

function lookup(docs: Documents, bundle: string, path: string): Target {
  const e = docs.byPath.get(`${bundle}\n${path.normalize('NFC')}`);
  if (!e) return { kind: 'unresolved' };
  return e.id !== undefined ? { kind: 'concept', id: e.id } : { kind: 'document', bundle: e.bundle, path: e.path };
}

/** A Markdown link destination, as written in `bundle`/`path`. */
export function resolveMarkdown(docs: Documents, bundle: string, path: string, destination: string): Target {
  if (SCHEME.test(destination)) return { kind: 'external', href: destination };
  if (destination.startsWith('#')) return { kind: 'anchor', fragment: destination.slice(1) };
  let target = destination;
  const hash = target.indexOf('#');
  if (hash >= 0) target = target.slice(0, hash);
  const query = target.indexOf('?');
  if (query >= 0) target = target.slice(0, query);
  target = decode(target);
  if (target === '') return { kind: 'unresolved' };
  const segments = target.startsWith('/') ? [] : path.split('/').slice(0, -1);
  for (const seg of target.split('/')) {
    if (seg === '' || seg === '.') continue;
    if (seg === '..') {
      if (segments.length === 0) return { kind: 'unresolved' };
      segments.pop();
    } else segments.push(seg);
  }
  if (segments.length === 0) return { kind: 'unresolved' };
  const to = withMd(segments.join('/')).normalize('NFC');
  const found = lookup(docs, bundle, to);
  if (found.kind !== 'unresolved') return found;
  const base = segments[segments.length - 1].replace(/\.md$/i, '');
  return { kind: 'unresolved', create: { bundle, path: to, title: base } };
}

/**
 * A wiki link target (the text of `[[…]]`), as written in `bundle`. `links` is the linking
 * concept's outgoing ids from the manifest: the candidates the engine resolved.
 */
export function resolveWiki(docs: Documents, bundle: string, links: readonly string[], inner: string): Target {
  let target = inner;
  const bar = target.indexOf('|');
  if (bar >= 0) target = target.slice(0, bar);
  const hash = target.indexOf('#');
  if (hash >= 0) target = target.slice(0, hash);
  target = target.normalize('NFC');
  if (target === '') return { kind: 'anchor', fragment: inner.slice(inner.indexOf('#') + 1) };
  if (SCHEME.test(target)) return { kind: 'external', href: target };
  const attempts = [target];
  const underscored = target.replace(/\s+/gu, '_');
  if (underscored !== target) attempts.push(underscored);
  for (const t of attempts) {
    // 1. a path from the linking bundle's root.
    const byPath = lookup(docs, bundle, withMd(t.replace(/^\/+/, '')));
    if (byPath.kind !== 'unresolved') return byPath;
    // 2. a local id in the linking bundle: bare, or prefixed with the bundle.
    for (const id of [t, `${bundle}/${t}`]) {
      const e = docs.byId.get(id);
      if (e && e.bundle === bundle && links.includes(id)) return { kind: 'concept', id };
    }
    // 3. a public id anywhere.
    if (links.includes(t) && docs.byId.has(t)) return { kind: 'concept', id: t };
  }
  const path = withMd(target.replace(/^\/+/, ''));
  return { kind: 'unresolved', create: { bundle, path, title: target.replace(/^\/+/, '').replace(/\.md$/i, '').split('/').pop() ?? target } };
}

/** The route of a target. */
export function href(target: Target): string | null {
  switch (target.kind) {
    case 'external':
      return target.href;
    case 'anchor':
      return null;
    case 'concept':
      return `#/c/${encodeURIComponent(target.id)}`;
    case 'document':
      return `#/d/${encodeURIComponent(target.bundle)}/${target.path.split('/').map(encodeURIComponent).join('/')}`;
    case 'unresolved':
      return null;
  }
}
