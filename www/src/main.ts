// The notes page: starts the engine worker (src/engine/worker.ts), which opens one langonrock
// connection on the package's IndexedDB store, then routes `#/…` to the views. The page's
// main thread draws; the worker does everything else. Every tab has its own worker; the
// store tells each of them when another moved the head, and they re-read.

import { engine, DATABASE, TENANT } from './boot.js';
import { App } from './app.js';
import { h, fill } from './lib/dom.js';
import { renderSidebar, sidebarKeys } from './sidebar.js';
import { setupSearch } from './search.js';
import { setupPalette, type Current } from './palette.js';
import { setupTheme } from './theme.js';
import { shortHash, confirmDialog, plural, showError } from './ui.js';
import { explain } from './lib/messages.js';
import { conceptView } from './views/concept.js';
import { historyView, revisionView, noteHistoryView } from './views/history.js';
import { transferView } from './views/transfer.js';
import { agentView } from './views/agent.js';
import { homeView, documentView } from './views/home.js';
import { currentChanged, type View } from './views/view.js';

declare global {
  interface Window {
    __notesPerf: {
      search: Array<{ query: string; total: number; engine: number; parts: { search: number; passages: number } }>;
      /** Milliseconds from navigation start: module evaluated, worker loaded, connection open, first data, search index ready. */
      marks: Record<string, number>;
      interactive?: number;
      /** The page's long tasks (over 50 ms on the main thread): start and duration. */
      longTasks: Array<{ start: number; duration: number }>;
      /** The open's early reads (src/engine/prefetch.ts): records named by the hint, and reads they answered. */
      early?: { hinted: number; served: number } | null;
    };
    notes?: App;
  }
}

window.__notesPerf = { search: [], marks: { module: performance.now() }, longTasks: [] };
try {
  new PerformanceObserver((list) => {
    for (const e of list.getEntries()) window.__notesPerf.longTasks.push({ start: e.startTime, duration: e.duration });
  }).observe({ type: 'longtask', buffered: true });
} catch {
  // No long task timing in this browser.
}

const main = document.getElementById('main')!;
const sidebar = document.getElementById('sidebar')!;
const status = document.getElementById('status')!;
const menu = document.getElementById('menu') as HTMLButtonElement;

setupTheme(document.getElementById('theme') as HTMLButtonElement);

// The list of notes is a drawer on phones.
const setMenu = (open: boolean) => {
  document.body.classList.toggle('menu-open', open);
  menu.setAttribute('aria-expanded', String(open));
  menu.setAttribute('aria-label', open ? 'Hide the list of notes' : 'Show the list of notes');
};
menu.addEventListener('click', () => {
  const open = !document.body.classList.contains('menu-open');
  setMenu(open);
  if (open) (sidebar.querySelector('a, button') as HTMLElement | null)?.focus();
});
document.addEventListener('keydown', (e) => {
  if (e.key === 'Escape' && document.body.classList.contains('menu-open')) {
    setMenu(false);
    menu.focus();
  }
});

/**
 * A view whose code loads when first shown (the editor and CodeMirror stay out of the
 * page's first load); until then it has nothing to lose and nothing to say.
 */
function lazy(load: () => Promise<View>): View {
  let inner: View | null = null;
  let gone = false;
  fill(main, h('p', { class: 'muted' }, 'Opening the editor…'));
  load().then(
    (v) => {
      if (gone) v.dispose?.();
      else {
        inner = v;
        currentChanged();
      }
    },
    (e) => showError(e, 'open the editor'),
  );
  return {
    refresh: () => inner?.refresh?.(),
    dispose: () => {
      gone = true;
      inner?.dispose?.();
    },
    dirty: () => inner?.dirty?.() ?? false,
    current: () => inner?.current?.() ?? {},
  };
}

async function start(): Promise<void> {
  const summary = await engine.opened;
  window.__notesPerf.marks.opened = performance.now();
  const app = new App(engine, DATABASE, TENANT, summary);
  Object.assign(window.__notesPerf.marks, engine.marks);
  window.__notesPerf.early = engine.early;
  engine.addEventListener('ready', () => Object.assign(window.__notesPerf.marks, engine.marks));

  let view: View | null = null;
  let current: Current = {};
  let routeHash = location.hash;

  const drawStatus = () => {
    const s = app.summary;
    fill(status, `${plural(s.concepts, 'note')} in ${plural(s.bundles.length, 'bundle')}`, s.snapshot ? ` · snapshot ${shortHash(s.snapshot)}` : '');
  };

  const route = () => {
    const hash = location.hash || '#/';
    const [pathPart, queryPart] = hash.slice(1).split('?');
    const query = new URLSearchParams(queryPart ?? '');
    const segments = pathPart.split('/').slice(1).map((s) => {
      try {
        return decodeURIComponent(s);
      } catch {
        return s;
      }
    });
    view?.dispose?.();
    view = null;
    current = {};
    const [head, ...rest] = segments;
    if (head === 'c' && rest.length) {
      const id = rest.join('/');
      current = { id };
      const pos = query.get('pos');
      view = conceptView(app, main, { id, q: query.get('q') ?? undefined, pos: pos !== null ? Number(pos) : undefined, anchor: query.get('anchor') ?? undefined, section: query.get('section') ?? undefined });
    } else if (head === 'd' && rest.length >= 2) {
      current = { bundle: rest[0], path: rest.slice(1).join('/') };
      view = documentView(app, main, rest[0], rest.slice(1).join('/'));
    } else if (head === 'edit' && rest.length >= 2) {
      current = { bundle: rest[0], path: rest.slice(1).join('/'), editing: true };
      const params = { bundle: rest[0], path: rest.slice(1).join('/') };
      view = lazy(() => import('./views/editor.js').then((m) => m.editorView(app, main, params)));
    } else if (head === 'new') {
      current = { editing: true };
      const fresh = { bundle: query.get('bundle') ?? undefined, path: query.get('path') ?? undefined, title: query.get('title') ?? undefined };
      view = lazy(() => import('./views/editor.js').then((m) => m.editorView(app, main, { fresh })));
    } else if (head === 'log' && rest.length >= 2) {
      current = { bundle: rest[0], path: rest.slice(1).join('/') };
      view = noteHistoryView(app, main, rest[0], rest.slice(1).join('/'));
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
    renderSidebar(app, sidebar, now());
    routeHash = location.hash;
    setMenu(false);
  };

  /** What is on screen: the route's note, and what the view has learnt since (its bundle). */
  const now = (): Current => ({ ...current, ...(view?.current?.() ?? {}) });
  window.addEventListener('currentchange', () => renderSidebar(app, sidebar, now()));

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
    renderSidebar(app, sidebar, now());
    view?.refresh?.();
  });

  sidebarKeys(sidebar);
  setupSearch(app);
  setupPalette(app, now);
  drawStatus();
  route();
  (document.getElementById('q') as HTMLInputElement).disabled = false;
  document.body.dataset.ready = 'true';
  window.__notesPerf.interactive = performance.now();
  window.notes = app;
  // After the first screen's reads (sent above): the search index and the first commit.
  setTimeout(() => void engine.call('warmUp').catch(() => undefined), 0);
}

start().catch((error) => {
  console.error(error);
  const { message, detail } = explain(error, 'open the notes');
  fill(main, h('h1', null, 'The notes could not open'), h('p', { class: 'banner error', role: 'alert' }, message, detail ? h('details', null, h('summary', null, 'Details'), h('code', null, detail)) : null));
  fill(sidebar);
  document.body.dataset.ready = 'error';
});

engine.addEventListener('failed', (e) => showError((e as CustomEvent).detail));

// A page being hidden may not come back: have the worker store the derived record now, so
// the next open decodes it instead of compiling every note.
document.addEventListener('visibilitychange', () => {
  if (document.visibilityState === 'hidden' && document.body.dataset.ready === 'true') void engine.call('flushDerived').catch(() => undefined);
});

if ('serviceWorker' in navigator && import.meta.env.PROD) {
  navigator.serviceWorker.register('./sw.js').catch((e) => console.warn('service worker', e));
}
