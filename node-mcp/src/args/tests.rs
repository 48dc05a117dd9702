use super::*;

fn env_with<'a>(vars: &'a [(&'a str, &'a str)]) -> impl Fn(&str) -> Option<String> + 'a {
    move |k: &str| {
        vars.iter()
            .find(|(n, _)| *n == k)
            .map(|(_, v)| v.to_string())
    }
}

fn parse_with(args: &[&str], vars: &[(&str, &str)]) -> Result<Command, ArgError> {
    let env = env_with(vars);
    parse(args.iter().map(OsString::from).collect(), &env)
}

fn p(args: &[&str]) -> Result<Command, ArgError> {
    parse_with(args, &[("LANGONROCK_DATA", "/data")])
}

fn e(args: &[&str]) -> String {
    match p(args) {
        Err(ArgError(m)) => m,
        Ok(c) => panic!("{args:?} parsed as {c:?}"),
    }
}

fn t(tenant: &str) -> Target {
    Target {
        data: Root::Files(PathBuf::from("/data")),
        tenant: tenant.into(),
    }
}

#[test]
fn argument_errors_of_cli_md_1_2() {
    let cases: &[(&[&str], &str)] = &[
        (&["frobnicate"], "unknown command \"frobnicate\""),
        (&["--nope"], "unknown flag \"--nope\""),
        (&["manifest", "--tenant", "a", "--nope"], "unknown flag \"--nope\""),
        (&["manifest", "--tenant", "a", "-x"], "unknown flag \"-x\""),
        (&["compile", "--data", "/d", "x"], "unknown flag \"--data\""),
        (&["mcp", "okf://?tenant=a", "--tenant", "a"], "unknown flag \"--tenant\""),
        (&["compile"], "missing directory"),
        (&["import", "--tenant", "a"], "missing directory"),
        (&["export", "--tenant", "a"], "missing directory"),
        (&["read", "--tenant", "a"], "missing bundle"),
        (&["read", "b", "--tenant", "a"], "missing path"),
        (&["write", "--tenant", "a", "--create"], "missing bundle"),
        (&["delete", "b", "--tenant", "a", "--force"], "missing path"),
        (&["delete-bundle", "--tenant", "a"], "missing bundle"),
        (&["mcp"], "missing dsn"),
        (&["manifest"], "--tenant is required"),
        (&["import", "dir"], "--tenant is required"),
        (&["get", "--tenant", "a"], "get requires at least one concept id"),
        (&["search", "--tenant", "a"], "search requires a query"),
        (&["search", "", "--tenant", "a"], "search requires a query"),
        (&["get", "x", "--tenant", "a", "--offset", "-1"], "--offset must be a non-negative integer, got \"-1\""),
        (&["get", "x", "--tenant", "a", "--limit", "10abc"], "--limit must be a non-negative integer, got \"10abc\""),
        (&["get", "x", "--tenant", "a", "--limit", ""], "--limit must be a non-negative integer, got \"\""),
        (&["history", "--tenant", "a", "--limit", "+5"], "--limit must be a non-negative integer, got \"+5\""),
        (&["gc", "--grace", "1h"], "--grace must be a non-negative integer, got \"1h\""),
        (&["compile", "d", "--summary-width", "0"], "--summary-width must be a positive integer, got \"0\""),
        (&["search", "q", "--tenant", "a", "--k", "0"], "--k must be a positive integer, got \"0\""),
        (&["search", "q", "--tenant", "a", "--k", "3.5"], "--k must be a positive integer, got \"3.5\""),
        (&["gc", "--keep", "x"], "--keep must be a positive integer, got \"x\""),
        (&["repair", "--tenant", "a", "abc"], "repair requires a revision and --expected-head <digest|missing>"),
        (&["repair", "--tenant", "a", "--expected-head", "missing"], "repair requires a revision and --expected-head <digest|missing>"),
        (&["restore", "--tenant", "a", "abc"], "restore requires a revision and --expected-revision <current revision>"),
        (&["restore", "--tenant", "a", "--expected-revision", "abc"], "restore requires a revision and --expected-revision <current revision>"),
        (&["write", "b", "p.md", "--tenant", "a"], "a write needs --replaces <hash> to update, --create for a new concept, or --force to overwrite whatever is there"),
        (&["write", "b", "p.md", "--tenant", "a", "--create", "--force"], "a write needs --replaces <hash> to update, --create for a new concept, or --force to overwrite whatever is there"),
        (&["delete", "b", "p.md", "--tenant", "a"], "delete needs --replaces <hash> or --force"),
        (&["delete", "b", "p.md", "--tenant", "a", "--force", "--replaces", "x"], "delete needs --replaces <hash> or --force"),
        (&["manifest", "--tenant", "a", "extra"], "unexpected argument \"extra\""),
        (&["manifest", "--tenant", "bad tenant"], "invalid tenant id \"bad tenant\": expected 1-64 chars of [a-z0-9_-]"),
        (&["manifest", "--tenant", "COM1"], "invalid tenant id \"COM1\": a reserved device name on Windows"),
        (&["manifest", "--tenant"], "missing value for --tenant"),
        (&["snapshot", "--tenant", "a", "--source"], "unknown flag \"--source\""),
        (&["get", "x", "--tenant", "a", "--source=yes"], "--source takes no value, got \"yes\""),
    ];
    for (args, want) in cases {
        assert_eq!(e(args), *want, "{args:?}");
    }
}

#[test]
fn commands_parse() {
    assert_eq!(p(&["-h"]), Ok(Command::Help));
    assert_eq!(p(&["--version"]), Ok(Command::Version));
    assert_eq!(
        p(&[
            "get",
            "a",
            "b c",
            "--tenant",
            "Acme",
            "--limit=0",
            "--offset",
            "007",
            "--source"
        ]),
        Ok(Command::Get {
            target: t("acme"),
            ids: vec!["a".into(), "b c".into()],
            section: None,
            offset: Some(7),
            limit: Some(0),
            find: None,
            source: true
        })
    );
    assert_eq!(
        p(&[
            "search",
            "replay",
            "export",
            "--tenant",
            "a",
            "--k",
            "3",
            "--no-expand"
        ]),
        Ok(Command::Search {
            target: t("a"),
            query: "replay export".into(),
            k: Some(3),
            bundle: None,
            expand: false
        })
    );
    assert_eq!(
        p(&[
            "write",
            "b",
            "p.md",
            "--tenant",
            "a",
            "--replaces",
            "h",
            "--from",
            "f.md"
        ]),
        Ok(Command::Write {
            target: t("a"),
            bundle: "b".into(),
            path: "p.md".into(),
            mode: WriteMode::Replaces("h".into()),
            from: Some("f.md".into())
        })
    );
    assert_eq!(
        p(&["delete", "b", "p.md", "--tenant", "a", "--force"]),
        Ok(Command::Delete {
            target: t("a"),
            bundle: "b".into(),
            path: "p.md".into(),
            replaces: None
        })
    );
    assert_eq!(
        p(&["repair", "r", "--expected-head", "missing", "--tenant", "a"]),
        Ok(Command::Repair {
            target: t("a"),
            revision: "r".into(),
            expected_head: None
        })
    );
    assert_eq!(
        p(&["gc", "--dry-run", "--keep", "2", "--grace", "0"]),
        Ok(Command::Gc {
            data: Root::Files("/data".into()),
            tenant: None,
            keep: Some(2),
            grace_ms: Some(0),
            dry_run: true
        })
    );
    assert_eq!(
        p(&["verify", "--tenant", "X", "--data", "/d2"]),
        Ok(Command::Verify {
            data: Root::Files("/d2".into()),
            tenant: Some("x".into())
        })
    );
    assert_eq!(
        p(&[
            "compile",
            "dir",
            "--summary-width",
            "40",
            "--strict",
            "--tenant",
            "T"
        ]),
        Ok(Command::Compile {
            dir: "dir".into(),
            bundle: None,
            tenant: Some("t".into()),
            summary_width: Some(40),
            strict: true
        })
    );
    assert_eq!(
        p(&[
            "mcp",
            "okf:///srv/k?tenant=Acme",
            "--read-only",
            "--database-tools"
        ]),
        Ok(Command::Mcp {
            dsn: "okf:///srv/k?tenant=Acme".into(),
            target: Some(Target {
                data: Root::Files("/srv/k".into()),
                tenant: "acme".into()
            }),
            database_tools: true,
            read_only: true
        })
    );
}

#[test]
fn data_root_resolution() {
    let data = |vars: &[(&str, &str)], extra: &[&str]| {
        let mut args = vec!["snapshot", "--tenant", "a"];
        args.extend_from_slice(extra);
        match parse_with(&args, vars) {
            Ok(Command::Snapshot { target }) => Ok(target.data.files().unwrap().to_path_buf()),
            Ok(other) => panic!("{other:?}"),
            Err(ArgError(m)) => Err(m),
        }
    };
    assert_eq!(
        data(&[("LANGONROCK_DATA", "/x")], &["--data", "/y"]),
        Ok("/y".into())
    );
    assert_eq!(
        data(&[("LANGONROCK_DATA", "/x"), ("HOME", "/h")], &[]),
        Ok("/x".into())
    );
    if cfg!(all(unix, not(target_os = "macos"))) {
        // An empty LANGONROCK_DATA counts as unset.
        assert_eq!(
            data(
                &[
                    ("LANGONROCK_DATA", ""),
                    ("XDG_DATA_HOME", "/xdg"),
                    ("HOME", "/h")
                ],
                &[]
            ),
            Ok("/xdg/langonrock".into())
        );
        assert_eq!(
            data(&[("XDG_DATA_HOME", ""), ("HOME", "/h")], &[]),
            Ok("/h/.local/share/langonrock".into())
        );
    }
    assert_eq!(
        data(&[], &[]),
        Err("cannot find the data directory: pass --data or set LANGONROCK_DATA".into())
    );
    // The mcp DSN without a path takes the same default.
    let env = env_with(&[("LANGONROCK_DATA", "/env")]);
    match parse(vec!["mcp".into(), "okf://?tenant=t".into()], &env) {
        Ok(Command::Mcp {
            target: Some(target),
            ..
        }) => assert_eq!(target.data, Root::Files(PathBuf::from("/env"))),
        other => panic!("{other:?}"),
    }
}

#[test]
fn tilde_in_a_dsn_is_the_home_directory() {
    let env = |k: &str| match k {
        "HOME" => Some("/home/me".to_string()),
        "USERPROFILE" => Some("C:\\Users\\me".to_string()),
        _ => None,
    };
    match parse(vec!["mcp".into(), "okf://~/kb?tenant=acme".into()], &env) {
        Ok(Command::Mcp {
            target: Some(target),
            ..
        }) => {
            let want = if cfg!(windows) {
                "C:/Users/me/kb"
            } else {
                "/home/me/kb"
            };
            assert_eq!(
                (target.data, target.tenant.as_str()),
                (Root::Files(PathBuf::from(want)), "acme")
            );
        }
        other => panic!("{other:?}"),
    }
    let no_home = |_: &str| None;
    assert_eq!(
        parse(vec!["mcp".into(), "okf://~/kb?tenant=acme".into()], &no_home),
        Err(ArgError("cannot expand ~ in dsn \"okf://~/kb?tenant=acme\": no home directory is known; expected okf:///absolute/path?tenant=<name>".into()))
    );
    // Errors name the DSN as written, not the expanded one.
    assert_eq!(
        parse(vec!["mcp".into(), "okf://~/kb".into()], &env),
        Err(ArgError(
            "dsn \"okf://~/kb\" names no tenant: expected okf:///absolute/path?tenant=<name>"
                .into()
        ))
    );
    // `~user` is not expanded: it reads as a host.
    assert_eq!(
        parse(vec!["mcp".into(), "okf://~bob/kb?tenant=a".into()], &env),
        Err(ArgError(
            "invalid dsn \"okf://~bob/kb?tenant=a\": expected okf:///absolute/path?tenant=<name>"
                .into()
        ))
    );
}

#[test]
fn dsn_grammar_of_cli_md_5() {
    let ok = |s: &str| parse_dsn(s).map(Option::unwrap).map_err(|ArgError(m)| m);
    assert_eq!(
        ok("okf:///srv/knowledge?tenant=acme"),
        Ok(Dsn {
            data: Some("/srv/knowledge".into()),
            tenant: "acme".into()
        })
    );
    assert_eq!(
        ok("okf://?tenant=Acme"),
        Ok(Dsn {
            data: None,
            tenant: "acme".into()
        })
    );
    assert_eq!(
        ok("okf:///my%20data/x?other=1&tenant=t&token=s"),
        Ok(Dsn {
            data: Some("/my data/x".into()),
            tenant: "t".into()
        })
    );
    assert_eq!(
        ok("okf:///d?tenant=&tenant=b"),
        Ok(Dsn {
            data: Some("/d".into()),
            tenant: "b".into()
        })
    );
    // Windows drive forms are rewritten to okf:///C:/…
    let drive = ok("okf:C:\\data\\k?tenant=t").map(|d| d.data);
    let want = if cfg!(windows) {
        "C:/data/k"
    } else {
        "/C:/data/k"
    };
    assert_eq!(drive, Ok(Some(want.into())));
    assert_eq!(
        ok("okf://C:/data?tenant=t").map(|d| d.data),
        Ok(Some(
            if cfg!(windows) { "C:/data" } else { "/C:/data" }.into()
        ))
    );
    let errors: &[(&str, &str)] = &[
        ("okf://data/x?tenant=t", "invalid dsn \"okf://data/x?tenant=t\": expected okf:///absolute/path?tenant=<name>"),
        ("okf://host?tenant=t", "invalid dsn \"okf://host?tenant=t\": expected okf:///absolute/path?tenant=<name>"),
        ("okf:/abs?tenant=t", "invalid dsn \"okf:/abs?tenant=t\": expected okf:///absolute/path?tenant=<name>"),
        ("nothing", "invalid dsn \"nothing\": expected okf:///absolute/path?tenant=<name>"),
        ("1okf:///x?tenant=t", "invalid dsn \"1okf:///x?tenant=t\": expected okf:///absolute/path?tenant=<name>"),
        ("okf:///x%zz?tenant=t", "invalid dsn \"okf:///x%zz?tenant=t\": expected okf:///absolute/path?tenant=<name>"),
        ("okf:///x%ff?tenant=t", "invalid dsn \"okf:///x%ff?tenant=t\": expected okf:///absolute/path?tenant=<name>"),
        ("okf:///x", "dsn \"okf:///x\" names no tenant: expected okf:///absolute/path?tenant=<name>"),
        ("okf:///x?tenant=", "dsn \"okf:///x?tenant=\" names no tenant: expected okf:///absolute/path?tenant=<name>"),
        ("okf://", "dsn \"okf://\" names no tenant: expected okf:///absolute/path?tenant=<name>"),
        ("okf:///x?tenant=a/b", "invalid tenant id \"a/b\": expected 1-64 chars of [a-z0-9_-]"),
        ("postgres://h/db", "dsn scheme \"postgres:\" names a PostgreSQL store, which only the native langonrock binary opens"),
        ("okf+npipe:///p?tenant=t", "unsupported dsn scheme \"okf+npipe:\", expected one of okf:, okf+unix:, okf+http:, okf+https:, postgres:"),
    ];
    for (dsn, want) in errors {
        assert_eq!(ok(dsn), Err(want.to_string()), "{dsn}");
    }
}

#[test]
fn banner_hides_token() {
    assert_eq!(
        redact_dsn("okf:///d?tenant=t&token=s3cret&x=1"),
        "okf:///d?tenant=t&token=***&x=1"
    );
    assert_eq!(redact_dsn("okf:///d?tenant=t"), "okf:///d?tenant=t");
    assert_eq!(redact_dsn("okf:///d"), "okf:///d");
    assert_eq!(
        redact_dsn("okf://?token=a&token=b"),
        "okf://?token=***&token=***"
    );
}

#[test]
fn strict_integers() {
    assert_eq!(positive("--k", "12"), Ok(12));
    assert_eq!(non_negative("--offset", "0"), Ok(0));
    assert_eq!(
        non_negative("--offset", "1e3"),
        Err(ArgError(
            "--offset must be a non-negative integer, got \"1e3\"".into()
        ))
    );
    assert_eq!(
        positive("--keep", " 1"),
        Err(ArgError(
            "--keep must be a positive integer, got \" 1\"".into()
        ))
    );
    assert_eq!(
        non_negative("--grace", "99999999999999999999999999"),
        Ok(usize::MAX)
    );
}

#[test]
fn query_takes_a_dsn_and_a_verb_with_its_flags() {
    let env = env_with(&[]);
    let p = |args: &[&str]| parse(args.iter().map(OsString::from).collect(), &env);
    match p(&[
        "query",
        "okf+unix:///s.sock?tenant=t",
        "get",
        "a",
        "b",
        "--limit",
        "5",
    ]) {
        Ok(Command::Query { dsn, verb }) => {
            assert_eq!(dsn, "okf+unix:///s.sock?tenant=t");
            match *verb {
                Command::Get { ids, limit, .. } => {
                    assert_eq!(ids, ["a", "b"]);
                    assert_eq!(limit, Some(5));
                }
                other => panic!("{other:?}"),
            }
        }
        other => panic!("{other:?}"),
    }
    let e = |args: &[&str]| match p(args) {
        Err(ArgError(m)) => m,
        Ok(c) => panic!("parsed {c:?}"),
    };
    assert_eq!(
        e(&["query", "okf+http://h:1?tenant=t", "gc"]),
        "unknown verb \"gc\": expected one of manifest, snapshot, search, get, source, read, write, delete, delete-bundle, transact, history, restore"
    );
    assert_eq!(e(&["query"]), "missing dsn");
    assert_eq!(e(&["query", "okf+http://h:1"]), "missing verb");
    assert_eq!(
        e(&["query", "okf+http://h:1", "manifest", "--tenant", "x"]),
        "unknown flag \"--tenant\""
    );
    assert_eq!(
        e(&["query", "okf+http://h:1", "manifest", "--data=/x"]),
        "unknown flag \"--data\""
    );
    assert_eq!(
        e(&["query", "mysql://x", "manifest"]),
        "unsupported dsn scheme \"mysql:\", expected one of okf:, okf+unix:, okf+http:, okf+https:, postgres:"
    );
    assert_eq!(
        e(&["query", "okf+http://h:1", "get"]),
        "get requires at least one concept id"
    );
    assert_eq!(
        e(&["query", "okf+http://h:1", "write", "b", "p"]),
        "a write needs --replaces <hash> to update, --create for a new concept, or --force to overwrite whatever is there"
    );
    // A postgres DSN is a query's DSN too; it must name its tenant.
    assert!(matches!(
        p(&["query", "postgres://db/kb?tenant=t", "manifest"]),
        Ok(Command::Query { .. })
    ));
    assert_eq!(
        e(&["query", "postgres://db/kb", "manifest"]),
        "dsn \"postgres://db/kb\" names no tenant: expected postgres://<user>:<password>@<host>:<port>/<database>?tenant=<t>"
    );
}

#[test]
fn postgres_data_roots() {
    let pg = |dsn: &str| Root::from_data(dsn).unwrap();
    let dsn = "postgres://app:pw@db:5432/kb?tenant=Acme&sslmode=require";
    match parse_with(&["snapshot", "--data", dsn], &[]) {
        Ok(Command::Snapshot { target }) => {
            assert_eq!(target.tenant, "acme");
            assert_eq!(target.data, pg(dsn));
            assert_eq!(
                target.data.to_string(),
                "postgres://app:***@db:5432/kb?sslmode=require"
            );
        }
        other => panic!("{other:?}"),
    }
    match parse_with(&["snapshot", "--data", dsn, "--tenant", "other"], &[]) {
        Ok(Command::Snapshot { target }) => assert_eq!(target.tenant, "other"),
        other => panic!("{other:?}"),
    }
    match parse_with(&["verify", "--data", "postgresql://db/kb"], &[]) {
        Ok(Command::Verify { data, tenant }) => {
            assert_eq!((data, tenant), (pg("postgresql://db/kb"), None));
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(
        parse_with(&["manifest", "--data", "postgres://db/kb"], &[]),
        Err(ArgError("--tenant is required".into()))
    );
    assert_eq!(
        parse_with(&["mcp", "postgres://db/kb"], &[]),
        Err(ArgError("dsn \"postgres://db/kb\" names no tenant: expected postgres://<user>:<password>@<host>:<port>/<database>?tenant=<t>".into()))
    );
    match parse_with(&["mcp", "postgres://db/kb?tenant=t"], &[]) {
        Ok(Command::Mcp {
            target: Some(target),
            ..
        }) => assert_eq!(target.tenant, "t"),
        other => panic!("{other:?}"),
    }
}
