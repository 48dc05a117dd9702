// What a view gives the router: a refresh when the tenant changed, a clean-up, what it shows
// (for the sidebar and the command palette), and whether leaving would lose work.

import type { Current } from '../palette.js';

export interface View {
  /** The tenant changed (a commit here or in another tab). */
  refresh?(): void;
  /** The route moved on. */
  dispose?(): void;
  /** Whether leaving would lose unsaved work. */
  dirty?(): boolean;
  /** The note on view and the commands that act on it; a view says `currentchange` when it changes. */
  current?(): Current;
}

/** Tells the router that the view's `current()` changed. */
export function currentChanged(): void {
  window.dispatchEvent(new Event('currentchange'));
}
