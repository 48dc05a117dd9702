// Shared bits of the views: routes, status badges, announcements, errors and the confirm dialog.

import { h } from './lib/dom.js';
import { describe } from './app.js';

export const routes = {
  concept: (id: string, query?: Record<string, string | number>) => `#/c/${encodeURIComponent(id)}${qs(query)}`,
  document: (bundle: string, path: string) => `#/d/${encodeURIComponent(bundle)}/${path.split('/').map(encodeURIComponent).join('/')}`,
  edit: (bundle: string, path: string) => `#/edit/${encodeURIComponent(bundle)}/${path.split('/').map(encodeURIComponent).join('/')}`,
  revision: (id: string) => `#/history/${id}`,
};

function qs(query?: Record<string, string | number>): string {
  if (!query) return '';
  const p = new URLSearchParams();
  for (const [k, v] of Object.entries(query)) p.set(k, String(v));
  const s = p.toString();
  return s ? `?${s}` : '';
}

/** A status badge; nothing for a current concept (`-`). */
export function badge(status: string): HTMLElement | null {
  if (status === '-' || status === '') return null;
  const known = status === 'draft' || status === 'deprecated' || status === 'stale' ? status : 'other';
  return h('span', { class: `badge ${known}`, title: `status: ${status}` }, status);
}

/** Tells screen readers (and the status line) what just happened. */
export function announce(message: string): void {
  const el = document.getElementById('announce')!;
  el.textContent = '';
  // A new text node in a live region is read out even when the text repeats.
  setTimeout(() => (el.textContent = message), 30);
}

let toastTimer: number | undefined;

/** Shows an error in the corner for a while (role=alert). */
export function showError(error: unknown, context?: string): void {
  const el = document.getElementById('toast')!;
  el.textContent = `${context ? `${context}: ` : ''}${describe(error)}`;
  el.hidden = false;
  clearTimeout(toastTimer);
  toastTimer = window.setTimeout(() => (el.hidden = true), 8000);
  console.warn(context ?? 'error', error);
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
