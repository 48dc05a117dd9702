//! The files layout of a data root (docs/records.md "Files layout", engine.md §9.2 rules 2
//! and 4), defined once: the native files store (`langonrock::files`) and the package's
//! Node files store (`pkg/src/stores/files.js`, through the wasm bindings) both follow it, so
//! both runtimes commit to one tenant at once. A change of the layout (pack files, say) goes
//! here first.
//!
//! A tenant lives in `<data>/tenants/<tenant>/`:
//!
//! ```text
//! packs/<hex>    a commit's sources, revisions and records in one file (docs/records.md
//!                "Packs", `crate::pack`); <hex> is the SHA-256 of its head
//! derived/<hex>  recovery/<hex>
//! sources/<hex>  revisions/<hex>  records/<hex>
//!                the records of data roots written before packs, one file each: read,
//!                collected, never written any more
//! heads/<g>      the head record of generation g (decimal, from 1, no leading zeros);
//!                the greatest g is the head, none means no head
//! heads/floor    generations below it may have been collected (decimal)
//! heads/hint     a recent generation, where finding the head starts (decimal)
//! staging/       every file is written here first under a unique name, and fsynced
//! writer.lock    an OS lock a native writer may hold from refresh to swap
//! HEAD           the reference implementation's head: read only to refuse it
//! ```
//!
//! The protocol: a file is staged (written in `staging/` and fsynced), renamed into place and
//! its folder fsynced. A commit's records are one pack; a derived or recovery record is a
//! file of its own. A file's modification time is the put time of every record it holds,
//! which a put of a record it holds refreshes. The head moves
//! by hard-linking a staged file to `heads/<g+1>` (the link fails when the name exists: the
//! compare-and-swap needs no lock), then fsyncing `heads/`. A link whose generation is below
//! the floor lost a race with collection: it is undone and reported as a conflict.
//! Collection raises the floor to the current generation before it removes the generations
//! below it. Nothing is created for a tenant before its first commit.

use crate::engine::{Digest, Key, Kind};

/// The folder of every tenant under the data root.
pub const TENANTS: &str = "tenants";
/// The folder of the head generations, `floor` and `hint`.
pub const HEADS: &str = "heads";
/// The file of the lowest generation collection keeps, in `heads/`.
pub const FLOOR: &str = "floor";
/// The file of a recent generation, in `heads/`.
pub const HINT: &str = "hint";
/// The folder of the packs.
pub const PACKS: &str = "packs";
/// The folder where every file is written first.
pub const STAGING: &str = "staging";
/// The OS lock file of a native writer.
pub const WRITER_LOCK: &str = "writer.lock";
/// The head file of the reference implementation, handed to the engine only to be refused
/// as another format.
pub const LEGACY_HEAD: &str = "HEAD";

/// Every record kind, in the order the stores list them.
pub const KINDS: [Kind; 5] = [
    Kind::Source,
    Kind::Revision,
    Kind::Record,
    Kind::Derived,
    Kind::Recovery,
];

/// The folder of a record kind: `sources`, `revisions`, `records`, `derived`, `recovery`.
pub fn kind_dir(kind: Kind) -> &'static str {
    match kind {
        Kind::Source => "sources",
        Kind::Revision => "revisions",
        Kind::Record => "records",
        Kind::Derived => "derived",
        Kind::Recovery => "recovery",
    }
}

/// The tenant's folder, relative to the data root: `tenants/<tenant>`.
pub fn tenant_dir(tenant: &str) -> String {
    format!("{TENANTS}/{tenant}")
}

/// A record's file name in its kind's folder: the digest's 64 hex characters.
pub fn record_name(key: &Key) -> String {
    key.digest.to_hex()
}

/// A record's file, relative to the tenant's folder: `<kind folder>/<hex>`.
pub fn record_path(key: &Key) -> String {
    format!("{}/{}", kind_dir(key.kind), record_name(key))
}

/// A pack's file, relative to the tenant's folder: `packs/<name>`.
pub fn pack_path(name: &str) -> String {
    format!("{PACKS}/{name}")
}

/// Whether a file name in `packs/` names a pack: 64 lowercase hex characters.
pub fn is_pack_name(name: &str) -> bool {
    Digest::from_hex(name).is_some()
}

/// The key of a file found in a kind's folder, or `None` for a name that is not a record
/// (leftovers, other files).
pub fn record_key(kind: Kind, name: &str) -> Option<Key> {
    Digest::from_hex(name).map(|d| Key::new(kind, d))
}

/// Whether a file name may name a record: 1–200 characters of `[a-z0-9._-]`, not starting
/// with a dot. Keys come from digests, so anything else is refused before it names a path.
pub fn valid_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 200
        && !name.starts_with('.')
        && name
            .bytes()
            .all(|b| matches!(b, b'a'..=b'z' | b'0'..=b'9' | b'.' | b'_' | b'-'))
}

/// A generation's file name in `heads/`.
pub fn generation_name(g: u64) -> String {
    g.to_string()
}

/// A generation from a file name or the text of `floor`/`hint` (surrounding white space
/// ignored): decimal, from 1, no leading zeros; anything else is `None`.
pub fn parse_generation(s: &str) -> Option<u64> {
    let s = s.trim();
    if s.is_empty() || s.starts_with('0') || !s.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    s.parse().ok()
}

/// The generation a swap links: one above the generation `expected` was read from (0: no
/// head).
pub fn next_generation(current: u64) -> u64 {
    current + 1
}

/// Whether a generation just linked lost a race with collection: its name was free only
/// because collection had removed it (it is below `floor`). The writer unlinks it and
/// reports a conflict. A later generation above it is not a conflict: another writer built
/// on it.
pub fn lost_to_collection(linked: u64, floor: Option<u64>) -> bool {
    floor.is_some_and(|f| linked < f)
}

/// The floor collection writes before it removes old generations, when `current` is the head
/// generation and `floor` the floor found: the current generation, when that raises it (the
/// floor never decreases, and a single generation needs none). `None`: leave it.
pub fn raised_floor(current: u64, floor: Option<u64>) -> Option<u64> {
    (current > 1 && floor.is_none_or(|f| current > f)).then_some(current)
}

/// Whether collection removes the generation `g` once the floor is `floor`.
pub fn collectable_generation(g: u64, floor: u64) -> bool {
    g < floor
}

/// A staged file's name: the tag of what it is (`record`, `head`, `hint`, `floor`,
/// `collect`), then a name unique to the host (a process id and a counter or random
/// digits; the core has no randomness).
pub fn staging_name(tag: &str, unique: &str) -> String {
    format!("{tag}-{unique}")
}

/// How old a staging file must be before collection takes it for a leftover of a writer
/// that died, whatever its grace period: a writer renames or links its staged files within
/// moments of writing them (and writing refreshes their modification time).
pub const STAGING_LEFTOVER_MS: u64 = 15 * 60 * 1000;

/// Whether collection removes the staging file `name`, last modified at `modified`, when it
/// removes what was put before `before`, at `now` (all in milliseconds since the epoch): a
/// file collection moved aside (`collect-…`, its owner may still move it back) once it is
/// older than `before`; any other once it is older than `before` or than
/// [`STAGING_LEFTOVER_MS`].
pub fn collectable_staging(name: &str, modified: u64, before: u64, now: u64) -> bool {
    let limit = if name.starts_with(&staging_name("collect", "")) {
        before
    } else {
        before.max(now.saturating_sub(STAGING_LEFTOVER_MS))
    };
    modified < limit
}

/// The corruption message of a put of different bytes under an existing content-addressed
/// record (both runtimes report it alike).
pub fn different_bytes(key: &Key) -> String {
    format!(
        "database corruption: {} holds different bytes than its key",
        record_path(key)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generations() {
        assert_eq!(parse_generation("1"), Some(1));
        assert_eq!(parse_generation(" 120\n"), Some(120));
        for bad in [
            "",
            "0",
            "01",
            "-1",
            "1a",
            "floor",
            "99999999999999999999999",
        ] {
            assert_eq!(parse_generation(bad), None, "{bad}");
        }
        assert_eq!(next_generation(0), 1);
        assert!(lost_to_collection(3, Some(5)));
        assert!(!lost_to_collection(5, Some(5)));
        assert!(!lost_to_collection(3, None));
        assert_eq!(raised_floor(1, None), None);
        assert_eq!(raised_floor(4, None), Some(4));
        assert_eq!(raised_floor(4, Some(4)), None);
        assert_eq!(raised_floor(6, Some(4)), Some(6));
        assert!(collectable_generation(3, 4) && !collectable_generation(4, 4));
    }

    #[test]
    fn names_and_paths() {
        let k = Key::of(Kind::Source, b"x");
        assert_eq!(record_path(&k), format!("sources/{}", k.digest));
        assert_eq!(record_key(Kind::Source, &record_name(&k)), Some(k));
        assert_eq!(record_key(Kind::Source, "staging-1"), None);
        assert_eq!(tenant_dir("acme"), "tenants/acme");
        assert!(valid_name(&record_name(&k)));
        assert!(!valid_name(".hidden") && !valid_name("A") && !valid_name("a/b"));
        assert_eq!(staging_name("head", "12-3"), "head-12-3");
        let (now, hour) = (100 * STAGING_LEFTOVER_MS, 4 * STAGING_LEFTOVER_MS);
        let old = now - 2 * STAGING_LEFTOVER_MS;
        assert!(collectable_staging("pack-1-2", old, now - hour, now));
        assert!(!collectable_staging("collect-1-2", old, now - hour, now));
        assert!(collectable_staging("collect-1-2", old, now, now));
        assert!(!collectable_staging(
            "pack-1-2",
            now - 1000,
            now - hour,
            now
        ));
        assert_eq!(pack_path("ab"), "packs/ab");
        assert!(is_pack_name(&record_name(&k)) && !is_pack_name("floor"));
        assert!(different_bytes(&k).starts_with("database corruption: sources/"));
        let dirs: Vec<&str> = KINDS.iter().map(|k| kind_dir(*k)).collect();
        assert_eq!(
            dirs,
            ["sources", "revisions", "records", "derived", "recovery"]
        );
    }
}
