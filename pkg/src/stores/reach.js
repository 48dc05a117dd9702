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

const digestOf = (v) => (typeof v === 'string' ? v : null);
const list = (v) => (Array.isArray(v) ? v : []);

/**
 * The first key that the head `headBytes` reaches and `lookup(keyText)` does not find, or
 * null when all are present. `lookup` returns a record's bytes or undefined. Walks the
 * retained chain from the head revision down to `retainedFrom` (to the first revision when
 * it is null), each revision's bundle records and their sources, and the import baselines
 * and their sources. `known` caches revisions already checked as `id → parent`.
 *
 * @param {Uint8Array} headBytes
 * @param {(key: string) => Uint8Array | undefined} lookup
 * @param {Map<string, string | null>} known
 * @returns {string | null}
 */
export function firstMissing(headBytes, lookup, known) {
  const head = parse(headBytes);
  if (!head || head.format !== 'langonrock/head') return null;
  const need = (key) => {
    const bytes = lookup(key);
    return bytes === undefined ? null : bytes;
  };
  for (const b of list(head.baselines)) {
    const key = `record/${digestOf(b?.record)}`;
    const bytes = need(key);
    if (!bytes) return key;
    const baseline = parse(bytes);
    for (const doc of list(baseline?.documents)) {
      const src = `source/${digestOf(list(doc)[2])}`;
      if (!need(src)) return src;
    }
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
      if (!bytes) return key;
      const record = parse(bytes);
      for (const b of list(record?.bundles)) {
        const bkey = `record/${digestOf(b?.record)}`;
        const bbytes = need(bkey);
        if (!bbytes) return bkey;
        for (const doc of list(parse(bbytes)?.documents)) {
          const src = `source/${digestOf(list(doc)[1])}`;
          if (!need(src)) return src;
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
