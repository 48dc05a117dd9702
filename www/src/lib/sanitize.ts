// The page shows HTML the engine worker rendered (src/lib/markdown.ts) only after DOMPurify
// has sanitised it here, on the page, where the DOM it needs is.

import DOMPurify from 'dompurify';

/**
 * `html` sanitised, as a fragment ready to append. Code blocks and tables scroll sideways in
 * their own box on narrow screens, so each is a tab stop: the keyboard can scroll it too.
 */
export function sanitized(html: string): DocumentFragment {
  const fragment = DOMPurify.sanitize(html, { ADD_ATTR: ['target'], RETURN_DOM_FRAGMENT: true });
  for (const el of fragment.querySelectorAll('pre, table')) el.setAttribute('tabindex', '0');
  return fragment;
}
