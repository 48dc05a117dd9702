// The page's state: the engine worker (src/engine/client.ts), the summary it last sent (the
// bundles and their counts), the bundle listings the sidebar asked for, and the notes this
// person opened recently (for the quick switcher). Views ask the worker for what they draw
// and listen to the `data` event, which follows every commit, here or in another tab.

import type { Engine } from './engine/client.js';
import type { BundleListing, EngineApi, Method, Summary } from './engine/types.js';

const RECENT_KEY = 'langonrock-notes:recent';

export class App extends EventTarget {
  summary: Summary;
  private listings = new Map<string, Promise<BundleListing>>();

  constructor(
    readonly engine: Engine,
    readonly database: string,
    readonly tenant: string,
    summary: Summary,
  ) {
    super();
    this.summary = summary;
    engine.addEventListener('data', (e) => {
      const { summary: s, cause } = (e as CustomEvent<{ summary: Summary; cause: string }>).detail;
      this.summary = s;
      this.listings.clear();
      this.dispatchEvent(new CustomEvent('data', { detail: { cause } }));
    });
  }

  /** One request to the engine worker. */
  call<M extends Method>(method: M, ...args: Parameters<EngineApi[M]>): Promise<Awaited<ReturnType<EngineApi[M]>>> {
    return this.engine.call(method, ...args);
  }

  get bundles(): string[] {
    return this.summary.bundles.map((b) => b.name);
  }

  /** A bundle's notes (titles first) and navigation documents; cached until the next commit. */
  listing(bundle: string): Promise<BundleListing> {
    let l = this.listings.get(bundle);
    if (!l) {
      l = this.call('listing', bundle);
      this.listings.set(bundle, l);
      l.catch(() => this.listings.delete(bundle));
    }
    return l;
  }

  /** Ids of the notes opened most recently, newest first. */
  recent(): string[] {
    try {
      const v = JSON.parse(localStorage.getItem(`${RECENT_KEY}:${this.database}:${this.tenant}`) ?? '[]');
      return Array.isArray(v) ? v.filter((x) => typeof x === 'string') : [];
    } catch {
      return [];
    }
  }

  visited(id: string): void {
    const list = [id, ...this.recent().filter((x) => x !== id)].slice(0, 20);
    try {
      localStorage.setItem(`${RECENT_KEY}:${this.database}:${this.tenant}`, JSON.stringify(list));
    } catch {
      // Storage full or off: recents are a convenience.
    }
  }
}
