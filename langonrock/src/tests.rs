//! What the front door does in builds without a feature (scripts/features-test.sh runs
//! these with `--no-default-features`; with every feature on they check the other side).

#[test]
fn a_remote_dsn_needs_the_remote_feature() {
    let r = crate::open("okf+unix:///run/kb.sock?tenant=acme&token=s3cret");
    if cfg!(feature = "remote") {
        assert!(r.is_ok_and(|c| c.is_remote()));
    } else {
        let e = r.unwrap_err();
        assert_eq!(e.code(), "INVALID");
        assert_eq!(
            e.message(),
            "dsn \"okf+unix:///run/kb.sock?tenant=acme&token=***\" names a remote server, and \
             this build of langonrock has no `remote` feature: turn it on (features = [\"remote\"])"
        );
    }
}

#[test]
fn a_files_dsn_needs_the_files_feature() {
    let dir = crate::testdir::TestDir::new("front-door");
    let dsn = format!("okf://{}?tenant=acme", dir.path().display());
    let r = crate::open(&dsn);
    if cfg!(feature = "files") {
        assert_eq!(r.unwrap().data(), Some(dir.path()));
    } else {
        let e = r.unwrap_err();
        assert_eq!(e.code(), "INVALID");
        assert_eq!(
            e.message(),
            format!(
                "dsn \"{dsn}\" names a files store ({}), and this build of langonrock has no \
                 `files` feature: turn it on (features = [\"files\"])",
                dir.path().display()
            )
        );
    }
}

#[test]
fn memory_needs_no_feature() {
    let c = crate::Connection::memory("acme").unwrap();
    c.write("notes", "a.md", "A.\n", None).unwrap();
    assert_eq!(c.snapshot().unwrap().concepts, 1);
}

#[test]
fn a_postgres_dsn_needs_the_postgres_feature() {
    // Port 1 on loopback: nothing listens, so a build with the feature fails to connect.
    let r = crate::open("postgres://kb:s3cret@127.0.0.1:1/kb?tenant=acme");
    let e = r.expect_err("nothing listens on port 1");
    if cfg!(feature = "postgres") {
        assert_eq!(e.code(), "STORE", "{}", e.message());
    } else {
        assert_eq!(e.code(), "INVALID");
        assert_eq!(
            e.message(),
            "dsn \"postgres://kb:***@127.0.0.1:1/kb?tenant=acme\" names a PostgreSQL store, and \
             this build of langonrock has no `postgres` feature: turn it on (features = [\"postgres\"])"
        );
    }
}
