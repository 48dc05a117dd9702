import { readFileSync } from 'node:fs';

// The values each entry's .d.ts declares, so types and runtime cannot drift apart.
export function declaredValues(...files) {
  const names = [];
  for (const f of files) {
    const src = readFileSync(new URL(`../src/${f}`, import.meta.url), 'utf8');
    for (const m of src.matchAll(/^export declare (?:function|const|class) (\w+)/gm)) names.push(m[1]);
  }
  return names.sort();
}

