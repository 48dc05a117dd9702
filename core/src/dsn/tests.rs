use super::*;

fn remote(s: &str) -> RemoteDsn {
    match parse_dsn(s, false) {
        Ok(Dsn::Remote(r)) => r,
        other => panic!("{s}: {other:?}"),
    }
}

fn message(s: &str) -> String {
    match parse_dsn(s, false) {
        Err(e) => e.message(),
        Ok(d) => panic!("{s} parsed: {d:?}"),
    }
}

#[test]
fn unix_socket_dsns() {
    let r = remote("okf+unix:///run/lr%20x/langonrock.sock?tenant=Acme");
    assert_eq!(
        r.endpoint,
        Endpoint::Unix("/run/lr x/langonrock.sock".into())
    );
    assert_eq!(r.tenant.as_deref(), Some("acme"));
    assert_eq!(r.token, None);
    assert_eq!(r.origin(), "http://langonrock");
    assert_eq!(r.authority(), "langonrock");
    assert_eq!(r.prefix(), "/v1/acme");
    assert_eq!(r.port(), None);
    // No tenant: the prefix is /v1 and the server takes the tenant from the token.
    let r = remote("okf+unix:///s.sock?token=abc&tenant=");
    assert_eq!(r.tenant, None);
    assert_eq!(r.token.as_deref(), Some("abc"));
    assert_eq!(r.prefix(), "/v1");
    assert_eq!(
        remote("OKF+UNIX:///s.sock").endpoint,
        Endpoint::Unix("/s.sock".into())
    );
}

#[test]
fn tcp_dsns() {
    let r = remote("okf+http://127.0.0.1:7777?tenant=t&token=s3cret&other=1");
    assert_eq!(
        r.endpoint,
        Endpoint::Tcp {
            tls: false,
            host: "127.0.0.1".into(),
            port: Some(7777)
        }
    );
    assert_eq!(r.origin(), "http://127.0.0.1:7777");
    assert_eq!(r.prefix(), "/v1/t");
    assert_eq!(r.token.as_deref(), Some("s3cret"));
    // Any path is ignored; the default ports are the scheme's.
    let r = remote("okf+https://kb.example.com/some/path?token=x");
    assert_eq!(r.origin(), "https://kb.example.com");
    assert_eq!(r.port(), Some(443));
    assert_eq!(r.tenant, None);
    assert_eq!(remote("okf+http://h").port(), Some(80));
    let r = remote("okf+https://[::1]:8443/?tenant=a%2Db");
    assert_eq!(r.origin(), "https://[::1]:8443");
    assert_eq!(r.authority(), "[::1]:8443");
    assert_eq!(r.tenant.as_deref(), Some("a-b"));
    // Empty values count as absent; the last one wins.
    let r = remote("okf+http://h:1?token=&tenant=x&token=t2");
    assert_eq!(r.token.as_deref(), Some("t2"));
    assert_eq!(r.port(), Some(1));
}

#[test]
fn bad_remote_dsns() {
    let invalid = [
        "okf+unix://",
        "okf+unix://?tenant=t",
        "okf+unix://host/s.sock",
        "okf+unix:/s.sock",
        "okf+unix:///s%zz.sock",
        "okf+unix:///s%00.sock",
        "okf+http://",
        "okf+http://?tenant=t",
        "okf+http:h:7777",
        "okf+http://user@h:7777",
        "okf+http://h:",
        "okf+http://h:0",
        "okf+http://h:65536",
        "okf+http://h:+80",
        "okf+http://h:8x",
        "okf+http://h%20x",
        "okf+https://[::1",
        "okf+https://[]:1",
        "okf+https://[::1]x",
        "okf+https://[zz]",
        "okf+http://h?tenant=%zz",
    ];
    for dsn in invalid {
        // Each names the form it failed to be.
        let form = match &dsn[..dsn.find(':').unwrap()] {
            "okf+unix" => UNIX_FORM,
            "okf+http" => HTTP_FORM,
            _ => HTTPS_FORM,
        };
        assert_eq!(
            message(dsn),
            format!("invalid dsn \"{dsn}\": expected {form}"),
            "{dsn}"
        );
    }
    assert_eq!(
        message("okf+http://h:7777?tenant=a/b"),
        "invalid tenant id \"a/b\": expected 1-64 chars of [a-z0-9_-]"
    );
    assert_eq!(
        message("okf+unix:///s?tenant=NUL"),
        "invalid tenant id \"NUL\": a reserved device name on Windows"
    );
    // A drive letter is not a host.
    assert_eq!(
        message("okf+http://c:/x"),
        "invalid dsn \"okf+http://c:/x\": expected okf+http://<host>[:<port>]?tenant=<name>&token=<token>"
    );
}

#[test]
fn embedded_dsns_still_parse() {
    assert_eq!(
        parse_dsn("okf:///srv/k?tenant=T&token=x", false),
        Ok(Dsn::Embedded(EmbeddedDsn {
            data: Some("/srv/k".into()),
            tenant: "t".into()
        }))
    );
}

#[test]
fn banner_redacts_remote_tokens() {
    assert_eq!(
        redact_dsn("okf+https://h:1?tenant=t&token=s3cret"),
        "okf+https://h:1?tenant=t&token=***"
    );
}
