//! Starting up: the refusals, the banner, `langonrock token`, TLS with a self-signed
//! certificate made in the test.

use crate::util::{doc, run, temp, token, Server};
use std::process::Command;

#[test]
fn startup_refusals_are_exact() {
    let dir = temp("refusals");
    let data = dir.join("data");
    let refusal = |args: &[&str]| match Server::try_start(&data, args, &[]) {
        Ok(_) => panic!("serve {args:?} started"),
        Err((code, err)) => {
            assert_eq!(code, 1, "{args:?}: {err}");
            err
        }
    };
    assert_eq!(
        refusal(&["--port", "0"]),
        "error: refusing to listen on TCP without tokens: pass tokens or use a unix socket"
    );
    assert_eq!(
        refusal(&["--tls-cert", "c.pem"]),
        "error: --tls-cert and --tls-key must be given together"
    );
    assert_eq!(
        refusal(&["--tls-key", "k.pem", "--port", "0"]),
        "error: --tls-cert and --tls-key must be given together"
    );
    assert_eq!(
        refusal(&["--tls-cert", "c.pem", "--tls-key", "k.pem"]),
        "error: --tls-cert needs --host or --port: a unix socket has no tls"
    );
    token(&data, "acme", false);
    for host in ["0.0.0.0", "192.168.1.20", "example.com"] {
        assert_eq!(
            refusal(&["--host", host, "--port", "0"]),
            format!("error: refusing to serve {host} without tls: every request would carry its token in cleartext. Pass tls, or bind 127.0.0.1 and terminate tls in a proxy in front")
        );
    }
    assert_eq!(
        refusal(&["--port", "70000"]),
        "error: --port must be an integer from 0 to 65535, got \"70000\""
    );
    assert_eq!(
        refusal(&["--tenant", "x"]),
        "error: unknown flag \"--tenant\""
    );
    // A tokens file that is not an object mapping tokens to grants.
    std::fs::write(data.join("tokens.json"), "[1]").unwrap();
    assert_eq!(
        refusal(&[]),
        format!(
            "error: {} must be a JSON object mapping each token to its grant",
            data.join("tokens.json").display()
        )
    );
    std::fs::write(
        data.join("tokens.json"),
        r#"{"abc": {"tenant": "Bad Name"}}"#,
    )
    .unwrap();
    assert_eq!(
        refusal(&[]),
        format!(
            "error: {}: grant #1 must be a tenant id or {{\"tenant\": \"<t>\", \"write\": true}}",
            data.join("tokens.json").display()
        )
    );
    // Nothing refused wrote anything but the tokens file.
    let names: Vec<String> = std::fs::read_dir(&data)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n != "tokens.json.lock")
        .collect();
    assert_eq!(names, ["tokens.json"]);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn banner_and_socket() {
    let dir = temp("banner");
    let data = dir.join("data");
    let srv = Server::start(&data, &[], &[]);
    let sock = data.join("langonrock.sock");
    assert_eq!(
        srv.banner,
        format!(
            "langonrock serving {} on {} (0 tokens, 0 writable tenants)",
            data.display(),
            sock.display()
        )
    );
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(&sock).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600, "the socket is the owner's only");
    // A second server on the same socket is refused while the first one lives.
    match Server::try_start(&data, &[], &[]) {
        Ok(_) => panic!("a second server started on a live socket"),
        Err((code, err)) => {
            assert_eq!(code, 1);
            assert_eq!(
                err,
                format!("error: another server is listening on {}", sock.display())
            );
        }
    }
    srv.stop();
    assert!(!sock.exists(), "a stopped server removes its socket");
    // A socket left by a killed server is replaced.
    let srv = Server::start(&data, &[], &[]);
    srv.kill();
    assert!(sock.exists());
    let srv = Server::start(&data, &[], &[]);
    assert_eq!(srv.req("GET", "/v1/t/snapshot").send().status, 200);
    drop(srv);

    // Counts: tokens, and tenants some token may write; a read-only server writes none.
    let data2 = dir.join("data2");
    token(&data2, "a", true);
    let srv = Server::start(&data2, &["--port", "0"], &[]);
    assert!(
        srv.banner.ends_with(" (1 token, 1 writable tenant)"),
        "{}",
        srv.banner
    );
    assert!(srv.banner.contains(" on 127.0.0.1:"), "{}", srv.banner);
    drop(srv);
    token(&data2, "a", false);
    token(&data2, "b", true);
    let srv = Server::start(&data2, &["--host", "localhost", "--port", "0"], &[]);
    assert!(
        srv.banner.ends_with(" (3 tokens, 2 writable tenants)"),
        "{}",
        srv.banner
    );
    assert!(srv.banner.contains(" on localhost:"), "{}", srv.banner);
    drop(srv);
    let srv = Server::start(&data2, &["--port", "0", "--read-only"], &[]);
    assert!(
        srv.banner.ends_with(" (3 tokens, 0 writable tenants)"),
        "{}",
        srv.banner
    );
    drop(srv);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn token_mints_and_records_grants() {
    use std::os::unix::fs::PermissionsExt;
    let dir = temp("token");
    let data = dir.join("fresh");
    let (code, out, err) = run(&data, &["token", "--tenant", "Acme"], b"");
    assert_eq!(code, 0, "{err}");
    let t1 = out.strip_suffix('\n').unwrap().to_string();
    assert!(
        t1.len() == 64
            && t1
                .bytes()
                .all(|b| b.is_ascii_hexdigit() && !b.is_ascii_uppercase()),
        "{out:?}"
    );
    let file = data.join("tokens.json");
    assert_eq!(
        err,
        format!("recorded a read-only grant for acme in {}. A running server reads that file only at startup, so restart it before the token works\n", file.display())
    );
    let (code, out, err) = run(&data, &["token", "--tenant", "acme", "--write"], b"");
    assert_eq!(code, 0, "{err}");
    let t2 = out.trim_end().to_string();
    assert_ne!(t1, t2, "tokens are random");
    assert!(
        err.starts_with("recorded a read-write grant for acme in "),
        "{err}"
    );
    let mode = std::fs::metadata(&file).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600);
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    assert_eq!(v[&t1], "acme");
    assert_eq!(v[&t2], serde_json::json!({"tenant": "acme", "write": true}));
    // A looser mode on an existing file is tightened by the next mint.
    std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o644)).unwrap();
    token(&data, "other", false);
    let mode = std::fs::metadata(&file).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600);
    assert_eq!(
        run(&data, &["token"], b"").2,
        "error: --tenant is required\n"
    );
    assert_eq!(
        run(&data, &["token", "--tenant", "a b"], b"").2,
        "error: invalid tenant id \"a b\": expected 1-64 chars of [a-z0-9_-]\n"
    );
    // Only the server started after the mint knows the token.
    let srv = Server::start(&data, &["--port", "0"], &[]);
    let t3 = token(&data, "acme", false);
    assert_eq!(srv.req("GET", "/v1/snapshot").token(&t1).send().status, 200);
    srv.req("GET", "/v1/snapshot").token(&t3).send().error(
        401,
        "UNAUTHORIZED",
        "invalid or missing bearer token",
    );
    drop(srv);
    let _ = std::fs::remove_dir_all(&dir);
}

/// Makes a self-signed certificate for `localhost` and 127.0.0.1 with openssl.
fn self_signed(dir: &std::path::Path) -> (std::path::PathBuf, std::path::PathBuf) {
    let (cert, key) = (dir.join("cert.pem"), dir.join("key.pem"));
    let status = Command::new("openssl")
        .args([
            "req",
            "-x509",
            "-newkey",
            "ec",
            "-pkeyopt",
            "ec_paramgen_curve:prime256v1",
            "-nodes",
            "-days",
            "2",
            "-subj",
            "/CN=localhost",
            "-addext",
            "subjectAltName=DNS:localhost,IP:127.0.0.1",
            "-keyout",
        ])
        .arg(&key)
        .arg("-out")
        .arg(&cert)
        .stderr(std::process::Stdio::null())
        .status()
        .expect("openssl runs (scripts/setup.sh installs it)");
    assert!(status.success());
    (cert, key)
}

#[test]
fn tls_with_a_self_signed_certificate() {
    let dir = temp("tls");
    let data = dir.join("data");
    let (cert, key) = self_signed(&dir);
    let w = token(&data, "acme", true);
    let (c, k) = (cert.display().to_string(), key.display().to_string());
    let srv = Server::start(
        &data,
        &["--port", "0", "--tls-cert", &c, "--tls-key", &k],
        &[],
    );
    let r = srv
        .req("PUT", "/v1/acme/source/notes/a.md")
        .token(&w)
        .header("If-None-Match", "*")
        .header("Content-Type", "text/markdown")
        .body(doc("note", "Over TLS."))
        .send();
    assert_eq!(r.status, 200, "{r:?}");
    let r = srv.req("GET", "/v1/manifest").token(&w).send();
    assert_eq!(r.status, 200);
    assert!(r.body.contains("\tOver TLS.\t"), "{}", r.body);
    // Plain HTTP to the TLS port gets no HTTP answer.
    let plain = Command::new("curl")
        .args([
            "-sS",
            "--max-time",
            "10",
            &format!("http://{}/v1/snapshot", srv.host_port()),
        ])
        .output()
        .unwrap();
    assert!(!String::from_utf8_lossy(&plain.stdout).contains("snapshot"));
    // A client that does not trust the certificate is refused by its own TLS check.
    let untrusted = Command::new("curl")
        .args([
            "-sS",
            "--max-time",
            "10",
            &format!("https://{}/v1/snapshot", srv.host_port()),
        ])
        .output()
        .unwrap();
    assert!(!untrusted.status.success());
    drop(srv);
    // Unreadable or mismatched PEM files are refused at startup.
    let missing = dir.join("missing.pem").display().to_string();
    match Server::try_start(
        &data,
        &["--port", "0", "--tls-cert", &missing, "--tls-key", &k],
        &[],
    ) {
        Ok(_) => panic!("started without a certificate"),
        Err((code, err)) => {
            assert_eq!(code, 1);
            assert!(
                err.starts_with(&format!("error: cannot read the certificate {missing}: ")),
                "{err}"
            );
        }
    }
    match Server::try_start(
        &data,
        &["--port", "0", "--tls-cert", &c, "--tls-key", &c],
        &[],
    ) {
        Ok(_) => panic!("started with a certificate as its key"),
        Err((code, err)) => {
            assert_eq!(code, 1);
            assert!(
                err.starts_with(&format!("error: cannot read the private key {c}: ")),
                "{err}"
            );
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}
