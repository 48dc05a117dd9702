use super::*;
use crate::testdir::TestDir;
use langonrock_core::engine::Digest;
use std::time::Duration;

fn key(kind: Kind, bytes: &[u8]) -> Key {
    Key::of(kind, bytes)
}

/// `n` source records, `"<what> <i>"` each, with their keys.
fn sources(what: &str, n: usize) -> Vec<(Key, Vec<u8>)> {
    (0..n)
        .map(|i| {
            let b = format!("{what} {i}").into_bytes();
            (key(Kind::Source, &b), b)
        })
        .collect()
}

fn age(path: &Path, secs: u64) {
    let old = SystemTime::now() - Duration::from_secs(secs);
    File::options()
        .write(true)
        .open(path)
        .and_then(|f| f.set_modified(old))
        .expect("age the file");
}

fn packs(d: &TestDir, tenant: &str) -> Vec<String> {
    let mut v: Vec<String> = fs::read_dir(d.path().join("tenants").join(tenant).join("packs"))
        .map(|rd| {
            rd.flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    v.sort();
    v
}

#[test]
fn nothing_is_created_before_the_first_put() {
    let d = TestDir::new("fs-nothing");
    let s = FileStore::new(d.path(), "acme");
    let k = key(Kind::Source, b"hello");
    assert_eq!(s.read_head(), Ok(None));
    assert_eq!(s.get(&k), Ok(None));
    assert_eq!(s.head_generation(), Ok(0));
    assert_eq!(s.keys(), Ok(Vec::new()));
    assert!(!d.path().join("tenants").exists());
    s.put(&k, b"hello").expect("put");
    assert_eq!(s.get(&k), Ok(Some(b"hello".to_vec())));
    assert_eq!(packs(&d, "acme").len(), 1);
    assert!(!d.path().join("tenants/acme/sources").exists());
    // The staged file was renamed away.
    assert_eq!(
        fs::read_dir(d.path().join("tenants/acme/staging"))
            .map(|r| r.count())
            .ok(),
        Some(0)
    );
}

#[test]
fn a_commit_is_one_pack() {
    let d = TestDir::new("fs-pack");
    let s = FileStore::new(d.path(), "t");
    let recs = sources("document", 50);
    let items: Vec<(Key, &[u8])> = recs.iter().map(|(k, b)| (*k, b.as_slice())).collect();
    s.put_many(&items).expect("put");
    assert_eq!(packs(&d, "t").len(), 1);
    // Another reader of the same folder finds every record.
    let other = FileStore::new(d.path(), "t");
    let keys: Vec<Key> = recs.iter().map(|r| r.0).collect();
    let got = other.get_many(&keys).expect("get");
    assert!(got
        .iter()
        .zip(&recs)
        .all(|(g, r)| g.as_deref() == Some(&r.1[..])));
    // Putting them again writes nothing new.
    s.put_many(&items).expect("again");
    assert_eq!(packs(&d, "t").len(), 1);
    assert_eq!(s.keys().expect("keys").len(), 50);
}

#[test]
fn puts_are_idempotent_and_refresh_the_put_time() {
    let d = TestDir::new("fs-put");
    let s = FileStore::new(d.path(), "t");
    let k = key(Kind::Record, b"one");
    s.put(&k, b"one").expect("put");
    let pack = d.path().join("tenants/t/packs").join(&packs(&d, "t")[0]);
    age(&pack, 7200);
    let old = SystemTime::now() - Duration::from_secs(3600);
    s.put(&k, b"one").expect("same bytes again");
    let mtime = fs::metadata(&pack)
        .and_then(|m| m.modified())
        .expect("mtime");
    assert!(mtime > old, "put time refreshed");
    assert_eq!(
        s.put(&k, b"two"),
        Err(FileError(format!(
            "database corruption: records/{} holds different bytes than its key",
            k.digest
        )))
    );
    assert_eq!(s.get(&k), Ok(Some(b"one".to_vec())));
    // Derived records are replaced, each a file of its own.
    let dk = Key::new(Kind::Derived, Digest::of(b"d1"));
    s.put(&dk, b"a").expect("derived");
    s.put(&dk, b"b").expect("derived replaced");
    assert_eq!(s.get(&dk), Ok(Some(b"b".to_vec())));
    assert!(s.record_path(&dk).is_file());
}

#[test]
fn records_of_the_layout_before_packs_are_read_refreshed_and_collected() {
    let d = TestDir::new("fs-legacy");
    let s = FileStore::new(d.path(), "t");
    let k = key(Kind::Source, b"old text");
    let path = d.path().join("tenants/t").join(layout::record_path(&k));
    fs::create_dir_all(path.parent().unwrap()).unwrap();
    fs::write(&path, b"old text").unwrap();
    assert_eq!(s.get(&k), Ok(Some(b"old text".to_vec())));
    age(&path, 7200);
    s.put(&k, b"old text").expect("refresh");
    assert!(packs(&d, "t").is_empty(), "a refresh writes no pack");
    assert_eq!(s.keys().unwrap().len(), 1);
    let before = SystemTime::now() - Duration::from_secs(3600);
    assert_eq!(s.remove(&[k], before), Ok(Vec::new()), "recent: kept");
    age(&path, 7200);
    assert_eq!(s.remove(&[k], before), Ok(vec![k]));
    assert_eq!(s.get(&k), Ok(None));
}

#[test]
fn a_bad_pack_is_corruption_naming_it() {
    let d = TestDir::new("fs-badpack");
    let s = FileStore::new(d.path(), "t");
    let k = key(Kind::Source, b"text");
    s.put(&k, b"text").expect("put");
    let name = packs(&d, "t")[0].clone();
    let path = d.path().join("tenants/t/packs").join(&name);
    let bytes = fs::read(&path).unwrap();
    fs::write(&path, &bytes[..bytes.len() - 1]).unwrap();
    let fresh = FileStore::new(d.path(), "t");
    assert_eq!(
        fresh.get(&k),
        Err(FileError(format!(
            "database corruption: packs/{name} is truncated"
        )))
    );
    assert!(fresh.keys().unwrap_err().0.contains(&name));
}

#[test]
fn small_packs_merge_as_commits_add_them() {
    let d = TestDir::new("fs-merge");
    let s = FileStore::new(d.path(), "t");
    let mut all = Vec::new();
    for i in 0..40 {
        let b = format!("commit {i}").into_bytes();
        let k = key(Kind::Source, &b);
        s.put(&k, &b).expect("put");
        all.push((k, b));
        assert!(packs(&d, "t").len() < pack::MERGE_AT, "{i}");
    }
    let fresh = FileStore::new(d.path(), "t");
    for (k, b) in &all {
        assert_eq!(fresh.get(k).unwrap().as_deref(), Some(&b[..]));
        assert_eq!(s.get(k).unwrap().as_deref(), Some(&b[..]));
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
    let (o, n) = (key(Kind::Source, b"o"), key(Kind::Source, b"n"));
    let (k1, k2) = (key(Kind::Source, b"keep"), key(Kind::Source, b"drop"));
    s.put(&o, b"o").expect("put");
    s.put(&n, b"n").expect("put");
    s.put_many(&[(k1, b"keep"), (k2, b"drop")]).expect("put");
    let names = packs(&d, "t");
    assert_eq!(names.len(), 3);
    for name in &names {
        age(&d.path().join("tenants/t/packs").join(name), 7200);
    }
    // `n` was put again just now.
    s.put(&n, b"n").expect("refresh");
    let before = SystemTime::now() - Duration::from_secs(3600);
    let gone = key(Kind::Source, b"gone");
    let mut removed = s.remove(&[o, n, k2, gone], before).expect("remove");
    removed.sort();
    let mut want = vec![o, k2];
    want.sort();
    assert_eq!(removed, want);
    assert_eq!(s.get(&o), Ok(None));
    assert_eq!(s.get(&k2), Ok(None));
    assert_eq!(s.get(&n), Ok(Some(b"n".to_vec())));
    assert_eq!(
        s.get(&k1),
        Ok(Some(b"keep".to_vec())),
        "compaction keeps the rest"
    );
    let keys: Vec<Key> = s
        .keys()
        .unwrap_or_default()
        .into_iter()
        .map(|k| k.0)
        .collect();
    let mut want = vec![n, k1];
    want.sort();
    assert_eq!(keys, want);
    // Another process's view agrees.
    let fresh = FileStore::new(d.path(), "t");
    assert_eq!(fresh.get(&k1), Ok(Some(b"keep".to_vec())));
    assert_eq!(fresh.get(&k2), Ok(None));
}

#[test]
fn staging_leftovers_are_collected() {
    let d = TestDir::new("fs-staging");
    let s = FileStore::new(d.path(), "t");
    s.put(&key(Kind::Source, b"x"), b"x").expect("put");
    let staging = d.path().join("tenants/t/staging");
    fs::write(staging.join("pack-1-2-3"), b"a killed writer's pack").unwrap();
    fs::write(staging.join("collect-1-2-3"), b"moved aside").unwrap();
    fs::write(staging.join("head-9-9-9"), b"fresh").unwrap();
    age(&staging.join("pack-1-2-3"), 1800);
    age(&staging.join("collect-1-2-3"), 1800);
    // Collection with an hour of grace still removes the leftover, not the file moved aside
    // (its owner may still move it back) nor a fresh one.
    let before = SystemTime::now() - Duration::from_secs(3600);
    assert_eq!(s.clean_staging(before), Ok((1, 22)));
    assert!(staging.join("collect-1-2-3").exists() && staging.join("head-9-9-9").exists());
}

#[test]
fn writer_lock_excludes_a_second_holder() {
    let d = TestDir::new("fs-lock");
    let s = FileStore::new(d.path(), "t");
    // Before the first commit there is no tenant directory, and locking creates none.
    drop(s.lock_writer().expect("lock"));
    assert!(!d.path().join("tenants").exists());
    std::fs::create_dir_all(d.path().join("tenants/t")).expect("tenant dir");
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

#[test]
fn records_are_found_in_every_pack_whatever_the_order_asked() {
    let d = TestDir::new("fs-find");
    let s = FileStore::new(d.path(), "t");
    // A large pack, then a few small ones (fewer than merge): the walk and the binary
    // search both meet several packs.
    let recs = sources("record", 300);
    let items: Vec<(Key, &[u8])> = recs[..200]
        .iter()
        .map(|(k, b)| (*k, b.as_slice()))
        .collect();
    s.put_many(&items).expect("put");
    for chunk in recs[200..].chunks(50) {
        let items: Vec<(Key, &[u8])> = chunk.iter().map(|(k, b)| (*k, b.as_slice())).collect();
        s.put_many(&items).expect("put");
    }
    assert!(packs(&d, "t").len() >= 2);
    let absent = key(Kind::Source, b"never put");
    let want = |k: &Key| recs.iter().find(|r| r.0 == *k).map(|r| r.1.clone());
    // Sorted and many (one walk per pack), with repeats and an absent key among them.
    let mut sorted: Vec<Key> = recs.iter().map(|r| r.0).collect();
    sorted.push(recs[7].0);
    sorted.push(absent);
    sorted.sort();
    // Unsorted, and sorted but few (each searched for).
    let mut unsorted = sorted.clone();
    unsorted.reverse();
    let few = vec![recs[3].0, recs[250].0, absent];
    let mut few_sorted = few.clone();
    few_sorted.sort();
    for keys in [sorted, unsorted, few, few_sorted] {
        let fresh = FileStore::new(d.path(), "t");
        let got = fresh.get_many(&keys).expect("get");
        let shared = fresh.get_shared(&keys).expect("get shared");
        for ((k, g), sh) in keys.iter().zip(&got).zip(&shared) {
            assert_eq!(g, &want(k), "{k}");
            assert_eq!(sh.as_ref().map(|b| b.to_vec()), want(k), "{k}");
        }
        // Found in the first look, not by the listing again that an absent record causes.
        let set = fresh.pack_set().expect("packs");
        let found = set.find_many(&keys);
        for (k, f) in keys.iter().zip(&found) {
            assert_eq!(f.map(|(_, e)| e.key), want(k).map(|_| *k), "{k}");
        }
    }
}
