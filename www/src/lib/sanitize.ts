// The page shows HTML the engine worker rendered (src/lib/markdown.ts) only after DOMPurify
// has sanitised it here, on the page, where the DOM it needs is.

import DOMPurify from 'dompurify';

/** `html` sanitised, as a fragment ready to append. */
export function sanitized(html: string): DocumentFragment {
  return DOMPurify.sanitize(html, { ADD_ATTR: ['target'], RETURN_DOM_FRAGMENT: true });
}
