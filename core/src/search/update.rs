//! Incremental maintenance of the index (docs/search.md, "Index lifetime"): a commit
//! re-indexes only the concepts whose indexed content changed, and a new read date only
//! the concepts whose rendered `status` flips. The result always equals a fresh build.

use super::index::{doc_tokens, Index, Lookup, Posting, Tally, FIELDS};
use crate::compile::{Concept, Model};
use crate::manifest::status_for;
use std::cmp::Ordering;
use std::collections::HashMap;
use std::sync::Arc;

/// A list key's unit and field.
fn split(key: u32) -> (usize, usize) {
    (
        (key / FIELDS as u32) as usize,
        (key % FIELDS as u32) as usize,
    )
}

/// Whether two concepts of one id index identically on any date.
fn same_indexed(a: &Concept, b: &Concept) -> bool {
    if a.bundle != b.bundle {
        return false;
    }
    let text_same = a.text == b.text;
    if Arc::ptr_eq(&a.parsed, &b.parsed) {
        return text_same;
    }
    let (p, q) = (&a.parsed, &b.parsed);
    text_same
        && p.body_start == q.body_start
        && p.title == q.title
        && p.kind == q.kind
        && p.status == q.status
        && p.grain == q.grain
        && p.summary == q.summary
        && p.summary_source == q.summary_source
        && p.stale_after == q.stale_after
}

impl Index {
    /// Brings the index from `old` (the model it was built or last updated for) to `new`
    /// on the date `today` (docs/search.md, "Index lifetime").
    ///
    /// Only concepts whose indexed content changed are re-tokenized. Both models list
    /// their concepts by (bundle, id), so one side-by-side walk pairs each concept with its
    /// old self; a pair is unchanged when it is the same `Arc` (the linker shares untouched
    /// concepts), or else when text, title and row cells are equal. A concept whose id
    /// changed (a rename, or a new shortest id) is a removal and an addition, so its
    /// `names` field follows. When `today` differs from the index's date, the concepts
    /// whose rendered `status` flips between `-` and `stale` are re-indexed too; only
    /// concepts with a `stale_after` date can flip.
    ///
    /// The index is rebuilt from `new` instead when more than about a quarter of the
    /// concepts change, or when `old` turns out not to be the indexed model. Either way
    /// the result equals [`Index::build`]`(new, today)`.
    pub fn update(&mut self, old: &Model, new: &Model, today: &str) {
        // Lists still encoded (an index from a derived record) stay so: a removal only
        // tombstones its slot and an addition appends to `extra`, and reads take a list's
        // encoded part and its appended part alike (docs/search.md §10, "Updates").
        if !self.try_update(old, new, today) {
            // Drop the old postings before building the new ones.
            *self = Index::empty(today);
            *self = Index::build(new, today);
            return;
        }
        self.today = today.to_string();
        if (self.extra_postings + self.dead_postings) * 4 > self.live_postings.max(64)
            && !self.compact()
        {
            // A list left encoded failed its check as the compaction read it.
            *self = Index::empty(today);
            *self = Index::build(new, today);
            return;
        }
        self.refresh_norms();
    }

    fn try_update(&mut self, old: &Model, new: &Model, today: &str) -> bool {
        if old.concepts().len() != self.live as usize {
            return false;
        }
        let date_changed = self.today != today;
        let flips = |a: &Concept, b: &Concept| {
            date_changed
                && b.parsed.stale_after.is_some()
                && status_for(a, &self.today) != status_for(b, today)
        };
        let mut gone: Vec<&Concept> = Vec::new();
        let mut added: Vec<&Concept> = Vec::new();
        let (mut i, mut j) = (0, 0);
        loop {
            match (old.concepts().get(i), new.concepts().get(j)) {
                (None, None) => break,
                (Some(a), None) => {
                    gone.push(a);
                    i += 1;
                }
                (None, Some(b)) => {
                    added.push(b);
                    j += 1;
                }
                (Some(a), Some(b)) => match if Arc::ptr_eq(a, b) {
                    Ordering::Equal
                } else {
                    a.place().cmp(&b.place())
                } {
                    Ordering::Less => {
                        gone.push(a);
                        i += 1;
                    }
                    Ordering::Greater => {
                        added.push(b);
                        j += 1;
                    }
                    Ordering::Equal => {
                        if !(Arc::ptr_eq(a, b) || same_indexed(a, b)) || flips(a, b) {
                            gone.push(a);
                            added.push(b);
                        }
                        i += 1;
                        j += 1;
                    }
                },
            }
        }
        // Re-indexing most of the tenant (a date that turns everything stale, a bulk
        // import) is cheaper as a fresh build.
        if (gone.len() + added.len()) * 4 > 2 * old.concepts().len() + 64 {
            return false;
        }
        let old_today = std::mem::take(&mut self.today);
        let mut tally = Tally::default();
        for c in gone {
            if !self.remove(c, &old_today, &mut tally) {
                return false;
            }
        }
        for c in added {
            if self.by_id.contains_key(c.id.as_str()) {
                return false;
            }
            self.add(c, today, &mut tally);
        }
        self.live as usize == new.concepts().len()
    }

    /// Tombstones the document of `c`, re-tokenizing it to find its units. Returns false
    /// when `c` is not what the index holds.
    fn remove(&mut self, c: &Concept, today: &str, tally: &mut Tally) -> bool {
        let Some(&slot) = self.by_id.get(c.id.as_str()) else {
            return false;
        };
        tally.fit(self.df.len());
        let mut sink = Lookup {
            vocab: &self.vocab,
            pairs: &self.pairs,
            tally,
            known: true,
        };
        doc_tokens(c, today, &mut sink);
        let known = sink.known;
        let doc = &self.docs[slot as usize];
        let ok = known
            && doc.len == tally.lens
            && *doc.names == *tally.names
            && doc.id_len == tally.id_len
            && tally.out.iter().all(|&(key, _)| {
                let (u, f) = split(key);
                self.df.get(u).is_some_and(|d| d[f] > 0)
            });
        if !ok {
            return false;
        }
        for &(key, _) in &tally.out {
            let (u, f) = split(key);
            self.df[u][f] -= 1;
        }
        let doc = &self.docs[slot as usize];
        for s in doc.name_seqs() {
            if let Some(list) = self.name_seqs.get_mut(s) {
                list.retain(|&x| x != slot);
                if list.is_empty() {
                    self.name_seqs.remove(s);
                }
            }
        }
        for (t, &l) in self.total_len.iter_mut().zip(&doc.len) {
            *t -= u64::from(l);
        }
        self.by_id.remove(c.id.as_str());
        self.alive[slot as usize] = false;
        self.live -= 1;
        let n = tally.postings();
        self.live_postings -= n;
        self.dead_postings += n;
        true
    }

    /// Indexes `c` under a new slot, its postings going to `extra`.
    fn add(&mut self, c: &Concept, today: &str, tally: &mut Tally) {
        self.count(c, today, tally);
        let slot = self.docs.len() as u32;
        for &(key, tf) in &tally.out {
            let (u, f) = split(key);
            self.df[u][f] += 1;
            self.extra
                .entry(key)
                .or_default()
                .push(Posting { slot, tf });
        }
        let n = tally.postings();
        self.extra_postings += n;
        self.live_postings += n;
        self.push_doc(c, tally);
    }

    /// Folds `extra` into the flat postings and drops dead slots, renumbering the live
    /// ones in slot order. `false` when a list left encoded failed its check as it was read
    /// (the index is then not one to keep).
    pub(crate) fn compact(&mut self) -> bool {
        let mut remap = vec![u32::MAX; self.docs.len()];
        let mut next = 0u32;
        for (slot, &a) in self.alive.iter().enumerate() {
            if a {
                remap[slot] = next;
                next += 1;
            }
        }
        let lists = self.df.len() * FIELDS;
        let mut off = Vec::with_capacity(lists + 1);
        let mut base = Vec::with_capacity(self.live_postings);
        off.push(0u32);
        for key in 0..lists {
            for p in self.postings(key as u32) {
                let s = remap[p.slot as usize];
                if s != u32::MAX {
                    base.push(Posting { slot: s, tf: p.tf });
                }
            }
            off.push(base.len() as u32);
        }
        let docs = std::mem::take(&mut self.docs);
        self.docs = docs
            .into_iter()
            .zip(self.alive.iter())
            .filter(|(_, &a)| a)
            .map(|(d, _)| d)
            .collect();
        for s in self.by_id.values_mut() {
            *s = remap[*s as usize];
        }
        for list in self.name_seqs.values_mut() {
            for s in list.iter_mut() {
                *s = remap[*s as usize];
            }
        }
        self.alive = vec![true; self.docs.len()];
        self.base_off = Arc::new(off);
        self.base = Arc::new(base);
        // Every list, the encoded ones included, is in `base` now, renumbered.
        let damaged = self.damaged();
        self.encoded = None;
        self.extra = HashMap::default();
        self.extra_postings = 0;
        self.dead_postings = 0;
        debug_assert!(damaged || self.base.len() == self.live_postings);
        !damaged
    }
}
