// The notes page: opens one langonrock connection on the package's IndexedDB store, then
// routes `#/…` to its views. Every tab of the page opens its own connection to the same
// tenant; the store tells each of them when another moved the head, and they re-read.

import { open, indexedDb } from 'langonrock';
import { App, describe } from './app.js';
import { h, fill } from './lib/dom.js';
import { renderSidebar, sidebarKeys } from './sidebar.js';
import { setupSearch } from './search.js';
import { shortHash, confirmDialog } from './ui.js';
import { conceptView } from './views/concept.js';
import { editorView } from './views/editor.js';
import { historyView, revisionView } from './views/history.js';
import { transferView } from './views/transfer.js';
import { agentView } from './views/agent.js';
import { homeView, documentView } from './views/home.js';
import type { View } from './views/view.js';

const params = new URLSearchParams(location.search);
/** The IndexedDB database and the tenant; `?db=` and `?tenant=` choose others. */
const DATABASE = params.get('db') || 'langonrock-notes';
const TENANT = params.get('tenant') || 'notes';

window.__notesPerf = { search: [], marks: { module: performance.now() } };

const main = document.getElementById('main')!;
const sidebar = document.getElementById('sidebar')!;
const status = document.getElementById('status')!;

async function start(): Promise<void> {
  const store = indexedDb({ name: DATABASE });
  const conn = await open({ tenant: TENANT, store });
  window.__notesPerf.marks.open = performance.now();
  const tenantStore = await store.open(TENANT);
  const app = new App(conn, tenantStore, TENANT, DATABASE);
  await app.refresh();
  window.__notesPerf.marks.data = performance.now();

  let view: View | null = null;
  let current: { id?: string; bundle?: string; path?: string } = {};
  let routeHash = location.hash;

  const drawStatus = () => {
    fill(
      status,
      `tenant ${app.tenant} · ${app.snapshot.concepts.toLocaleString('en-US')} concepts in ${app.bundles.length} bundle${app.bundles.length === 1 ? '' : 's'}`,
      app.snapshot.snapshot ? ` · snapshot ${shortHash(app.snapshot.snapshot)}` : '',
    );
  };

  const route = () => {
    const hash = location.hash || '#/';
    const [pathPart, queryPart] = hash.slice(1).split('?');
    const query = new URLSearchParams(queryPart ?? '');
    const segments = pathPart.split('/').slice(1).map(decodeURIComponent);
    view?.dispose?.();
    view = null;
    current = {};
    const [head, ...rest] = segments;
    if (head === 'c' && rest.length) {
      const id = rest.join('/');
      current = { id };
      const pos = query.get('pos');
      view = conceptView(app, main, { id, q: query.get('q') ?? undefined, pos: pos !== null ? Number(pos) : undefined, anchor: query.get('anchor') ?? undefined });
    } else if (head === 'd' && rest.length >= 2) {
      current = { bundle: rest[0], path: rest.slice(1).join('/') };
      view = documentView(app, main, rest[0], rest.slice(1).join('/'));
    } else if (head === 'edit' && rest.length >= 2) {
      current = { bundle: rest[0], path: rest.slice(1).join('/') };
      view = editorView(app, main, { bundle: rest[0], path: rest.slice(1).join('/') });
    } else if (head === 'new') {
      view = editorView(app, main, {});
    } else if (head === 'history' && rest.length) {
      view = revisionView(app, main, rest[0]);
    } else if (head === 'history') {
      view = historyView(app, main);
    } else if (head === 'transfer') {
      view = transferView(app, main);
    } else if (head === 'agent') {
      view = agentView(app, main);
    } else {
      view = homeView(app, main);
    }
    renderSidebar(app, sidebar, current);
    routeHash = location.hash;
  };

  // A view that renames its own route (a new note once saved) keeps the router informed.
  window.addEventListener('routereplaced', () => (routeHash = location.hash));

  window.addEventListener('hashchange', async () => {
    if (view?.dirty?.()) {
      const target = location.hash;
      history.replaceState(null, '', routeHash || '#/');
      if (!(await confirmDialog('Leave the editor? Your unsaved text will be lost.', 'Leave', true))) return;
      view?.dispose?.();
      view = null;
      location.hash = target;
      return;
    }
    route();
    main.focus({ preventScroll: true });
    window.scrollTo(0, 0);
  });

  app.addEventListener('data', () => {
    drawStatus();
    renderSidebar(app, sidebar, current);
    view?.refresh?.();
  });

  sidebarKeys(sidebar);
  setupSearch(app);
  drawStatus();
  route();
  const q = document.getElementById('q') as HTMLInputElement;
  q.disabled = false;
  document.body.dataset.ready = 'true';
  window.__notesPerf.interactive = performance.now();
  (window as unknown as { notes: App }).notes = app;
  // The engine builds its search index on the first search: build it while the page is idle,
  // so the first keystroke does not wait for it.
  const warm = () => void conn.search('warm').then(() => (window.__notesPerf.marks.searchReady = performance.now()));
  if ('requestIdleCallback' in window) requestIdleCallback(warm, { timeout: 2000 });
  else setTimeout(warm, 200);
}

start().catch((error) => {
  console.error(error);
  fill(main, h('h1', null, 'The notes could not open'), h('p', { class: 'banner error', role: 'alert' }, describe(error)));
  fill(sidebar);
  document.body.dataset.ready = 'error';
});

if ('serviceWorker' in navigator && import.meta.env.PROD) {
  navigator.serviceWorker.register('./sw.js').catch((e) => console.warn('service worker', e));
}
