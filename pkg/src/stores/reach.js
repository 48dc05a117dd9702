// What a head reaches, read from the stored records' JSON encodings (core's
// engine/records.rs): the strict memory store uses it to refuse a head that references a
// record never put (engine.md §9.2 rule 1). Records of an unknown format reach nothing here.

const decoder = new TextDecoder('utf-8', { fatal: true });

function parse(bytes) {
  try {
    const v = JSON.parse(decoder.decode(bytes));
    return v !== null && typeof v === 'object' && !Array.isArray(v) ? v : null;
  } catch {
    return null;
  }
}

const missing = (key) => `head references ${key}, which was never put`;
const digestOf = (v) => (typeof v === 'string' ? v : null);
const list = (v) => (Array.isArray(v) ? v : []);

/**
 * Why the head `headBytes` cannot be swapped in, or null: it is not a head record, or it
 * reaches a record that `lookup(keyText)` does not find (`lookup` returns a record's bytes
 * or undefined). Walks the retained chain from the head revision down to `retainedFrom` (to
 * the first revision when it is null), each revision's bundle records and their sources, and
 * the import baseline records. `known` caches revisions already checked as `id → parent`.
 * The messages are those of core's MemoryStore.
 *
 * @param {Uint8Array} headBytes
 * @param {(key: string) => Uint8Array | undefined} lookup
 * @param {Map<string, string | null>} known
 * @returns {string | null}
 */
export function firstMissing(headBytes, lookup, known) {
  const head = parse(headBytes);
  if (!head || head.format !== 'langonrock/head' || head.version !== 1) return 'new head is not a head record';
  const need = (key) => {
    const bytes = lookup(key);
    return bytes === undefined ? null : bytes;
  };
  for (const b of list(head.baselines)) {
    const key = `record/${digestOf(b?.record)}`;
    if (!need(key)) return missing(key);
  }
  let rev = digestOf(head.revision);
  const stop = digestOf(head.retainedFrom);
  const seen = new Set();
  while (rev && !seen.has(rev)) {
    seen.add(rev);
    let parent;
    if (known.has(rev)) {
      parent = known.get(rev);
    } else {
      const key = `revision/${rev}`;
      const bytes = need(key);
      if (!bytes) return missing(key);
      const record = parse(bytes);
      for (const b of list(record?.bundles)) {
        const bkey = `record/${digestOf(b?.record)}`;
        const bbytes = need(bkey);
        if (!bbytes) return missing(bkey);
        for (const doc of list(parse(bbytes)?.documents)) {
          const src = `source/${digestOf(list(doc)[1])}`;
          if (!need(src)) return missing(src);
        }
      }
      parent = digestOf(record?.parent);
      known.set(rev, parent);
    }
    if (rev === stop) break;
    rev = parent;
  }
  return null;
}
