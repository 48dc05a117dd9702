use super::*;
use crate::testdir::TestDir;
use std::time::Duration;

#[test]
fn nothing_is_created_before_the_first_put() {
    let d = TestDir::new("fs-nothing");
    let s = FileStore::new(d.path(), "acme");
    assert_eq!(s.read_head(), Ok(None));
    assert_eq!(s.get(Kind::Source, "abc"), Ok(None));
    assert_eq!(s.head_generation(), Ok(0));
    assert_eq!(s.keys(), Ok(Vec::new()));
    assert!(!d.path().join("tenants").exists());
    s.put(Kind::Source, "abc", b"hello").expect("put");
    assert_eq!(s.get(Kind::Source, "abc"), Ok(Some(b"hello".to_vec())));
    assert!(d.path().join("tenants/acme/sources/abc").is_file());
    // The staged file was renamed away.
    assert_eq!(
        fs::read_dir(d.path().join("tenants/acme/staging"))
            .map(|r| r.count())
            .ok(),
        Some(0)
    );
}

#[test]
fn puts_are_idempotent_and_refresh_the_put_time() {
    let d = TestDir::new("fs-put");
    let s = FileStore::new(d.path(), "t");
    s.put(Kind::Record, "r1", b"one").expect("put");
    let path = s.record_path(Kind::Record, "r1");
    let old = SystemTime::now() - Duration::from_secs(7200);
    File::options()
        .write(true)
        .open(&path)
        .and_then(|f| f.set_modified(old))
        .expect("age the record");
    s.put(Kind::Record, "r1", b"one").expect("same bytes again");
    let mtime = fs::metadata(&path)
        .and_then(|m| m.modified())
        .expect("mtime");
    assert!(
        mtime > old + Duration::from_secs(3600),
        "put time refreshed"
    );
    assert_eq!(
        s.put(Kind::Record, "r1", b"two"),
        Err(FileError(
            "database corruption: records/r1 holds different bytes than its key".into()
        ))
    );
    assert_eq!(s.get(Kind::Record, "r1"), Ok(Some(b"one".to_vec())));
    // Derived records are replaced.
    s.put(Kind::Derived, "d1", b"a").expect("derived");
    s.put(Kind::Derived, "d1", b"b").expect("derived replaced");
    assert_eq!(s.get(Kind::Derived, "d1"), Ok(Some(b"b".to_vec())));
    // Names that are not digests never reach the file system.
    for bad in ["../x", "a/b", "", ".hidden", "A"] {
        assert_eq!(
            s.put(Kind::Record, bad, b"x"),
            Err(FileError(format!("invalid record name \"{bad}\"")))
        );
    }
}

#[test]
fn head_generations_compare_and_swap() {
    let d = TestDir::new("fs-heads");
    let s = FileStore::new(d.path(), "t");
    assert_eq!(s.swap_head(Some(b"x"), b"h1"), SwapOutcome::Conflict);
    assert_eq!(s.swap_head(None, b"h1"), SwapOutcome::Swapped);
    assert_eq!(s.read_head_at(), Ok(Some((1, b"h1".to_vec()))));
    assert_eq!(s.swap_head(None, b"h2"), SwapOutcome::Conflict);
    assert_eq!(s.swap_head(Some(b"h0"), b"h2"), SwapOutcome::Conflict);
    assert_eq!(s.swap_head(Some(b"h1"), b"h2"), SwapOutcome::Swapped);
    assert_eq!(s.read_head_at(), Ok(Some((2, b"h2".to_vec()))));
    assert_eq!(
        fs::read(d.path().join("tenants/t/heads/hint")).ok(),
        Some(b"2".to_vec())
    );
    // A stale hint is probed upward from; a missing one makes a listing.
    fs::write(d.path().join("tenants/t/heads/hint"), b"1").expect("hint");
    assert_eq!(s.head_generation(), Ok(2));
    fs::remove_file(d.path().join("tenants/t/heads/hint")).expect("rm hint");
    assert_eq!(s.head_generation(), Ok(2));
    // Collection: floor 2, generation 1 removed; the head still reads.
    s.write_floor(2).expect("floor");
    s.write_floor(1).expect("floor never decreases");
    assert_eq!(
        fs::read(d.path().join("tenants/t/heads/floor")).ok(),
        Some(b"2".to_vec())
    );
    assert_eq!(s.remove_generations_below(2), Ok(1));
    fs::write(d.path().join("tenants/t/heads/hint"), b"1").expect("hint names a collected one");
    assert_eq!(s.read_head_at(), Ok(Some((2, b"h2".to_vec()))));
    assert_eq!(s.swap_head(Some(b"h2"), b"h3"), SwapOutcome::Swapped);
    assert_eq!(s.read_head(), Ok(Some(b"h3".to_vec())));
}

#[test]
fn a_link_below_the_floor_is_undone() {
    let d = TestDir::new("fs-floor");
    let s = FileStore::new(d.path(), "t");
    assert_eq!(s.swap_head(None, b"h1"), SwapOutcome::Swapped);
    assert_eq!(s.swap_head(Some(b"h1"), b"h2"), SwapOutcome::Swapped);
    assert_eq!(s.swap_head(Some(b"h2"), b"h3"), SwapOutcome::Swapped);
    // Simulate a writer that read generation 1 just before collection removed 1 and 2 and
    // then the head generations 2 and 3 vanished from its view: it links generation 2,
    // which is below the floor, so it must report a conflict and undo the link.
    s.write_floor(3).expect("floor");
    assert_eq!(s.remove_generations_below(3), Ok(2));
    fs::remove_file(d.path().join("tenants/t/heads/3")).expect("hide 3");
    fs::write(d.path().join("tenants/t/heads/1"), b"h1").expect("old view");
    assert_eq!(s.swap_head(Some(b"h1"), b"late"), SwapOutcome::Conflict);
    assert!(!d.path().join("tenants/t/heads/2").exists());
}

#[test]
fn collection_keeps_recent_records() {
    let d = TestDir::new("fs-gc");
    let s = FileStore::new(d.path(), "t");
    s.put(Kind::Source, "old", b"o").expect("put");
    s.put(Kind::Source, "new", b"n").expect("put");
    let old = SystemTime::now() - Duration::from_secs(7200);
    File::options()
        .write(true)
        .open(s.record_path(Kind::Source, "old"))
        .and_then(|f| f.set_modified(old))
        .expect("age");
    let before = SystemTime::now() - Duration::from_secs(3600);
    assert_eq!(s.remove_if_older(Kind::Source, "old", before), Ok(Some(1)));
    assert_eq!(s.remove_if_older(Kind::Source, "new", before), Ok(None));
    assert_eq!(s.remove_if_older(Kind::Source, "gone", before), Ok(None));
    assert_eq!(s.get(Kind::Source, "old"), Ok(None));
    assert_eq!(s.get(Kind::Source, "new"), Ok(Some(b"n".to_vec())));
    let keys: Vec<String> = s
        .keys()
        .unwrap_or_default()
        .into_iter()
        .map(|k| k.1)
        .collect();
    assert_eq!(keys, ["new"]);
}

#[test]
fn writer_lock_excludes_a_second_holder() {
    let d = TestDir::new("fs-lock");
    let s = FileStore::new(d.path(), "t");
    let held = s.lock_writer().expect("lock");
    let path = d.path().join("tenants/t/writer.lock");
    let other = File::options()
        .read(true)
        .write(true)
        .open(&path)
        .expect("open");
    assert!(fs4::FileExt::try_lock(&other).is_err());
    drop(held);
    assert!(fs4::FileExt::try_lock(&other).is_ok());
}

#[test]
fn generations_parse_strictly() {
    assert_eq!(parse_generation("1"), Some(1));
    assert_eq!(parse_generation("120"), Some(120));
    for bad in ["0", "01", "", "-1", "1a", "hint"] {
        assert_eq!(parse_generation(bad), None, "{bad}");
    }
}
