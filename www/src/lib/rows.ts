// What the page builds on top of the package's structured rows (`manifestRows`, `searchRows`
// and `concept`, with titles, whole descriptions and section ranges): the outline, whose
// entries are the engine's sections with each heading as a person reads it. The page parses
// no manifest or search TSV and reads no frontmatter for titles, and where a link goes is the
// package's answer too (`linkTargets`). It runs in the engine worker.

import { lineOf, plainHeading } from './markdown.js';
import type { OutlineEntry } from '../engine/types.js';

/**
 * The outline of a body from the engine's sections (offsets into the body): each heading's
 * text and level from the section's first lines; the `body` section (the text before the
 * first heading) is left out.
 */
export function outlineOf(body: string, sections: ReadonlyArray<{ name: string; start: number; end: number }>): OutlineEntry[] {
  const out: OutlineEntry[] = [];
  for (const s of sections) {
    const [first, second] = body.slice(s.start, Math.min(s.end, s.start + 2000)).split(/\r\n|\r|\n/, 2);
    const heading = plainHeading(first ?? '', second, '');
    if (!heading) continue;
    out.push({ name: s.name, text: heading.text || s.name, level: heading.level, line: lineOf(body, s.start) });
  }
  return out;
}
