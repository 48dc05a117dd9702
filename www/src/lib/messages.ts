// Failures in words. Every error the page shows says what happened and what to do in a
// sentence; the package's code and its exact message go in the details, for a bug report.

export interface Explained {
  /** What happened and what to do, in words. */
  message: string;
  /** The code and the engine's own message, when there is one. */
  detail?: string;
}

interface ErrorLike {
  name?: string;
  code?: string;
  message?: string;
  reason?: string;
  quota?: boolean;
}

/**
 * `action` names what was being done, as a verb phrase that completes "Could not …"
 * ("save the note", "import the folder").
 */
export function explain(error: unknown, action?: string): Explained {
  const e: ErrorLike = error && typeof error === 'object' ? (error as ErrorLike) : { message: String(error) };
  const raw = e.message ?? String(error);
  const detail = e.code ? `${e.code}: ${raw}` : e.name && e.name !== 'Error' ? `${e.name}: ${raw}` : undefined;
  const could = action ? `Could not ${action}: ` : '';
  if (e.quota || e.name === 'QuotaExceededError') {
    return {
      message: `${action ? `Could not ${action}. ` : ''}This browser has no room left for these notes (its storage quota is full), so nothing was saved. Your text is still here: free some space (export the notes, delete some, or allow this site more storage), then try again.`,
      detail,
    };
  }
  switch (e.code) {
    case 'CONFLICT':
      if (e.reason === 'exists') return { message: `${could}a note with that name already exists.`, detail };
      if (e.reason === 'missing') return { message: `${could}the note was deleted meanwhile (in another tab or by an import).`, detail };
      if (/folder and database both changed/.test(raw)) {
        const which = /changed (.+?); reconcile/.exec(raw)?.[1] ?? 'a note';
        return { message: `${could}${which} changed both in the folder and here since the folder was last imported. Nothing was imported. Keep the stored versions, or bring the two in line first.`, detail };
      }
      return { message: `${could}the notes changed meanwhile (in another tab or by an import). Nothing was overwritten; look again and retry.`, detail };
    case 'STORE':
      return { message: `${could}the browser's storage refused it, so nothing was saved. Your text is still here; try again, and if it keeps failing, export your notes.`, detail };
    case 'INDETERMINATE_COMMIT':
      return { message: `${could}it is not known whether it was saved (the browser's storage stopped answering). Reload the page to see which version is stored.`, detail };
    case 'CORRUPT':
      return { message: `${could}the stored notes failed their integrity check. Nothing was changed. Export what you can and report the details below.`, detail };
    case 'NOT_FOUND':
      return { message: `${could}${sentence(raw)}`, detail };
    case 'INVALID':
      return { message: `${could}${sentence(raw)}`, detail };
  }
  return { message: `${could}${sentence(raw)}`, detail };
}

/** A message as a sentence: its first letter as written, a full stop at the end. */
function sentence(s: string): string {
  const t = s.trim();
  return /[.!?]$/.test(t) ? t : `${t}.`;
}
