// Shared bits of the views: routes, status badges, note labels (title first, id second),
// announcements, notifications, errors in words and the confirm dialog.

import { h } from './lib/dom.js';
import { explain } from './lib/messages.js';
import type { NoteRef, Marked } from './engine/types.js';

const seg = (path: string) => path.split('/').map(encodeURIComponent).join('/');

export const routes = {
  concept: (id: string, query?: Record<string, string | number>) => `#/c/${encodeURIComponent(id)}${qs(query)}`,
  document: (bundle: string, path: string) => `#/d/${encodeURIComponent(bundle)}/${seg(path)}`,
  edit: (bundle: string, path: string) => `#/edit/${encodeURIComponent(bundle)}/${seg(path)}`,
  noteHistory: (bundle: string, path: string) => `#/log/${encodeURIComponent(bundle)}/${seg(path)}`,
  revision: (id: string) => `#/history/${id}`,
  create: (fields: { bundle?: string; path?: string; title?: string }) => `#/new${qs(fields as Record<string, string>)}`,
};

function qs(query?: Record<string, string | number | undefined>): string {
  if (!query) return '';
  const p = new URLSearchParams();
  for (const [k, v] of Object.entries(query)) if (v !== undefined) p.set(k, String(v));
  const s = p.toString();
  return s ? `?${s}` : '';
}

/** A status badge; nothing for a current concept (`-`). */
export function badge(status: string): HTMLElement | null {
  if (status === '-' || status === '') return null;
  const known = status === 'draft' || status === 'deprecated' || status === 'stale' ? status : 'other';
  return h('span', { class: `badge ${known}`, title: `status: ${status}` }, status);
}

/** What a person reads for a note: its title, or its id when it has none. */
export function noteName(ref: Pick<NoteRef, 'title' | 'id'>): string {
  return ref.title ?? ref.id;
}

/** A note's title with its id as secondary text (left out when the title is the id). */
export function noteLabel(ref: NoteRef, withBundle = false): HTMLElement {
  const secondary = [ref.title !== null && ref.title !== ref.id ? ref.id : null, withBundle ? ref.bundle : null].filter(Boolean).join(' · ');
  return h('span', { class: 'note-label' }, h('span', { class: 'note-title' }, noteName(ref)), secondary ? h('span', { class: 'note-id' }, secondary) : null);
}

/** A link to a note, its title first. */
export function noteLink(ref: NoteRef, withBundle = false): HTMLElement {
  return h('a', { href: routes.concept(ref.id), class: 'note-link', 'data-id': ref.id }, noteLabel(ref, withBundle), ' ', badge(ref.status));
}

/** Marked text as elements: the marked parts in <mark>. */
export function markedText(m: Marked): Array<Node | string> {
  return m.map(([text, marked]) => (marked ? h('mark', null, text) : text));
}

/** Tells screen readers (and the status line) what just happened. */
export function announce(message: string): void {
  const el = document.getElementById('announce')!;
  el.textContent = '';
  // A new text node in a live region is read out even when the text repeats.
  setTimeout(() => (el.textContent = message), 30);
}

const MAX_NOTICES = 4;

/**
 * A notification at the bottom of the page: dismissable with its close button (or Escape
 * while it has focus); information closes by itself after a while, errors stay until closed.
 */
export function notify(kind: 'info' | 'error', message: string, detail?: string): HTMLElement {
  const area = document.getElementById('notices')!;
  const close = h('button', { type: 'button', class: 'close', 'aria-label': 'Dismiss this notification', title: 'Dismiss' }, '×');
  const item = h(
    'div',
    { class: `notice ${kind}`, role: kind === 'error' ? 'alert' : 'status' },
    h('div', { class: 'notice-text' }, h('p', null, message), detail ? h('details', null, h('summary', null, 'Details'), h('code', null, detail)) : null),
    close,
  );
  const dismiss = () => {
    item.remove();
    area.hidden = area.childElementCount === 0;
  };
  close.addEventListener('click', dismiss);
  item.addEventListener('keydown', (e) => {
    if (e.key === 'Escape') {
      e.stopPropagation();
      dismiss();
    }
  });
  area.append(item);
  area.hidden = false;
  while (area.childElementCount > MAX_NOTICES) area.firstElementChild?.remove();
  if (kind === 'info') setTimeout(dismiss, 6000);
  return item;
}

/** Shows a failure in words (the code only in its details). */
export function showError(error: unknown, action?: string): void {
  const { message, detail } = explain(error, action);
  notify('error', message, detail);
  console.warn(action ?? 'error', error);
}

/** A modal confirm dialog; resolves true when the person confirms. */
export function confirmDialog(message: string, confirmLabel: string, danger = false): Promise<boolean> {
  return new Promise((resolve) => {
    const yes = h('button', { type: 'submit', value: 'yes', class: danger ? 'danger' : 'primary' }, confirmLabel);
    const no = h('button', { type: 'submit', value: 'no' }, 'Cancel');
    const dialog = h('dialog', { 'aria-label': confirmLabel }, h('form', { method: 'dialog' }, h('p', null, message), h('div', { class: 'toolbar' }, yes, no)));
    dialog.addEventListener('close', () => {
      resolve(dialog.returnValue === 'yes');
      dialog.remove();
    });
    document.body.appendChild(dialog);
    dialog.showModal();
    no.focus();
  });
}

export function shortHash(hash: string): string {
  return hash.slice(0, 12);
}

export function formatTime(iso: string): string {
  const d = new Date(iso);
  return Number.isNaN(d.getTime()) ? iso : d.toLocaleString();
}

/** A title for the document: the view's heading, and the tab's title. */
export function setTitle(title: string): void {
  document.title = title ? `${title} · langonrock notes` : 'langonrock notes';
}

/** Replaces the page's route without showing another view (a new note once saved). */
export function replaceRoute(hash: string): void {
  history.replaceState(null, '', hash);
  window.dispatchEvent(new Event('routereplaced'));
}

/** Whether a key event comes from a place where typing goes (a field, the editor). */
export function typing(e: Event): boolean {
  const t = e.target as HTMLElement | null;
  return !!t?.closest?.('input, textarea, select, [contenteditable="true"], .cm-editor');
}

export function plural(n: number, one: string, many = `${one}s`): string {
  return `${n.toLocaleString('en-US')} ${n === 1 ? one : many}`;
}
