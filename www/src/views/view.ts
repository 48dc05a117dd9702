// What a view gives the router: a refresh when the tenant changed, and a clean-up.

export interface View {
  /** The tenant changed (a commit here or in another tab). */
  refresh?(): void;
  /** The route moved on. */
  dispose?(): void;
  /** Whether leaving would lose unsaved work. */
  dirty?(): boolean;
}
