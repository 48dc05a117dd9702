//! DSNs (docs/cli.md, docs/remote.md, docs/postgres.md): the embedded `okf:` form, the
//! remote `okf+unix:`, `okf+http:` and `okf+https:` forms, shared by the native binary, the
//! library and the JS package, and `postgres:` DSNs naming a PostgreSQL store, which only the
//! native binary and the library open.

use crate::error::{Error, Result};
use crate::validate;

/// A parsed DSN.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Dsn {
    /// `okf:`: a data root on this machine.
    Embedded(EmbeddedDsn),
    /// `okf+unix:`, `okf+http:`, `okf+https:`: a `langonrock serve` to talk to.
    Remote(RemoteDsn),
}

/// A parsed embedded DSN.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EmbeddedDsn {
    /// The data root as written (percent-decoded), or `None` for the default
    /// (`okf://?tenant=…`).
    pub data: Option<String>,
    /// The tenant, validated and lower-cased.
    pub tenant: String,
}

/// Where a remote connection sends its requests.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Endpoint {
    /// A unix socket: the percent-decoded path. Requests go to origin `http://langonrock`.
    Unix(String),
    /// A TCP host, with TLS for `okf+https:`.
    Tcp {
        /// Whether the scheme is `okf+https:`.
        tls: bool,
        /// The host as written: a name, an IPv4 address or a bracketed IPv6 address.
        host: String,
        /// The port, when the DSN names one (else the scheme's: 80 or 443).
        port: Option<u16>,
    },
}

/// A parsed remote DSN (docs/remote.md).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RemoteDsn {
    /// Where the server listens.
    pub endpoint: Endpoint,
    /// The tenant, validated and lower-cased, when the DSN names one; otherwise the server
    /// takes it from the token.
    pub tenant: Option<String>,
    /// The bearer token, when the DSN carries one.
    pub token: Option<String>,
}

impl RemoteDsn {
    /// The origin requests go to: `http://langonrock` over a socket, else
    /// `http(s)://host[:port]`.
    pub fn origin(&self) -> String {
        match &self.endpoint {
            Endpoint::Unix(_) => "http://langonrock".into(),
            Endpoint::Tcp { tls, .. } => {
                format!(
                    "{}://{}",
                    if *tls { "https" } else { "http" },
                    self.authority()
                )
            }
        }
    }

    /// The `Host` header's value: `langonrock` over a socket, else `host[:port]`.
    pub fn authority(&self) -> String {
        match &self.endpoint {
            Endpoint::Unix(_) => "langonrock".into(),
            Endpoint::Tcp {
                host,
                port: Some(p),
                ..
            } => format!("{host}:{p}"),
            Endpoint::Tcp { host, .. } => host.clone(),
        }
    }

    /// The TCP port to connect to: the DSN's, else 443 with TLS and 80 without. `None` for a
    /// socket.
    pub fn port(&self) -> Option<u16> {
        match &self.endpoint {
            Endpoint::Unix(_) => None,
            Endpoint::Tcp { tls, port, .. } => Some(port.unwrap_or(if *tls { 443 } else { 80 })),
        }
    }

    /// The path every request starts with: `/v1/<tenant>`, or `/v1` when the tenant comes
    /// from the token.
    pub fn prefix(&self) -> String {
        match &self.tenant {
            Some(t) => format!("/v1/{t}"),
            None => "/v1".into(),
        }
    }
}

/// The embedded form, as DSN errors show it (docs/cli.md, "DSN").
pub const OKF_FORM: &str = "okf:///absolute/path?tenant=<name>";
/// The unix-socket form, as its errors show it (docs/remote.md).
pub const UNIX_FORM: &str = "okf+unix:///<socket path>?tenant=<name>";
/// The TCP forms, as their errors show them (docs/remote.md).
pub const HTTP_FORM: &str = "okf+http://<host>[:<port>]?tenant=<name>&token=<token>";
/// The TLS form.
pub const HTTPS_FORM: &str = "okf+https://<host>[:<port>]?tenant=<name>&token=<token>";

fn invalid_dsn(dsn: &str) -> Error {
    invalid_as(dsn, OKF_FORM)
}

/// `invalid dsn "<dsn>": expected <form>`.
fn invalid_as(dsn: &str, form: &str) -> Error {
    Error::Invalid(format!("invalid dsn \"{dsn}\": expected {form}"))
}

/// Rewrites a Windows drive DSN (`okf:C:\data`, `okf://C:/data`) to `okf:///C:/…` with
/// forward slashes (cli.md §5.2).
fn rewrite_drive(dsn: &str) -> Option<String> {
    let (head, query) = match dsn.find('?') {
        Some(i) => (&dsn[..i], &dsn[i..]),
        None => (dsn, ""),
    };
    let colon = head.find(':')?;
    let scheme = &head[..=colon];
    let rest = head[colon + 1..].trim_start_matches(['/', '\\']);
    let b = rest.as_bytes();
    if b.len() >= 3 && b[0].is_ascii_alphabetic() && b[1] == b':' && (b[2] == b'\\' || b[2] == b'/')
    {
        Some(format!("{scheme}///{}{query}", rest.replace('\\', "/")))
    } else {
        None
    }
}

/// Percent-decodes `s` (`+` stays `+`); a bad escape or bytes that are not UTF-8 give
/// `None`. DSN paths and `serve`'s route segments both decode with it.
pub fn percent_decode(s: &str) -> Option<String> {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' {
            let hex = s.get(i + 1..i + 3)?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

/// Parses a DSN (docs/remote.md, docs/cli.md). `windows`: the host takes `okf:///C:/…` as
/// the drive path `C:/…`.
pub fn parse_dsn(dsn: &str, windows: bool) -> Result<Dsn> {
    let rewritten = rewrite_drive(dsn);
    let s = rewritten.as_deref().unwrap_or(dsn);
    let colon = s.find(':').ok_or_else(|| invalid_dsn(dsn))?;
    let scheme_name = &s[..colon];
    let valid_scheme = scheme_name
        .bytes()
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic())
        && scheme_name
            .bytes()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, b'+' | b'-' | b'.'));
    if !valid_scheme {
        return Err(invalid_dsn(dsn));
    }
    let scheme = &dsn[..=dsn.find(':').unwrap_or(colon)];
    match scheme_name.to_ascii_lowercase().as_str() {
        "okf" => {}
        "postgres" | "postgresql" => {
            return Err(Error::Invalid(format!(
                "dsn scheme \"{scheme}\" names a PostgreSQL store, which only the native langonrock binary opens"
            )))
        }
        "okf+unix" => {
            return parse_unix(dsn, s, colon, windows)
                .map(Dsn::Remote)
                .map_err(|e| as_form(e, dsn, UNIX_FORM))
        }
        // No drive rewriting here: the part after `//` is a host.
        "okf+http" => {
            return parse_tcp(dsn, &dsn[colon + 1..], false)
                .map(Dsn::Remote)
                .map_err(|e| as_form(e, dsn, HTTP_FORM))
        }
        "okf+https" => {
            return parse_tcp(dsn, &dsn[colon + 1..], true)
                .map(Dsn::Remote)
                .map_err(|e| as_form(e, dsn, HTTPS_FORM))
        }
        _ => {
            return Err(Error::Invalid(format!(
                "unsupported dsn scheme \"{scheme}\", expected one of okf:, okf+unix:, okf+http:, okf+https:, postgres:"
            )))
        }
    }
    let (path, query) = local_path(dsn, &s[colon + 1..], windows)?;
    let params = Params::parse(dsn, query)?;
    let tenant = params.tenant.ok_or_else(|| {
        Error::Invalid(format!(
            "dsn \"{dsn}\" names no tenant: expected {OKF_FORM}"
        ))
    })?;
    Ok(Dsn::Embedded(EmbeddedDsn {
        data: path,
        tenant: validate::tenant_id(&tenant)?,
    }))
}

/// A remote form's `invalid dsn` names that form, not the embedded one.
fn as_form(e: Error, dsn: &str, form: &str) -> Error {
    match e {
        Error::Invalid(m) if m == invalid_dsn(dsn).message() => invalid_as(dsn, form),
        other => other,
    }
}

/// The percent-decoded path of a DSN with an empty authority (`okf:`, `okf+unix:`) and its
/// query. `rest` is what follows the scheme's colon.
fn local_path<'a>(
    dsn: &str,
    rest: &'a str,
    windows: bool,
) -> Result<(Option<String>, Option<&'a str>)> {
    let rest = rest.strip_prefix("//").ok_or_else(|| invalid_dsn(dsn))?;
    let (hier, query) = split_query(rest);
    // The authority runs to the first `/`: it must be empty.
    let path = match hier.find('/') {
        Some(0) => hier,
        Some(_) => return Err(invalid_dsn(dsn)),
        None if hier.is_empty() => "",
        None => return Err(invalid_dsn(dsn)),
    };
    if path.is_empty() {
        return Ok((None, query));
    }
    let decoded = percent_decode(path).ok_or_else(|| invalid_dsn(dsn))?;
    if decoded.contains('\0') {
        return Err(invalid_dsn(dsn));
    }
    let b = decoded.as_bytes();
    let drive = b.len() >= 3 && b[1].is_ascii_alphabetic() && b[2] == b':';
    Ok((
        Some(if windows && drive {
            decoded[1..].to_string()
        } else {
            decoded
        }),
        query,
    ))
}

fn split_query(s: &str) -> (&str, Option<&str>) {
    match s.find('?') {
        Some(i) => (&s[..i], Some(&s[i + 1..])),
        None => (s, None),
    }
}

/// The parameters a DSN's query may carry; empty values count as absent, others are
/// ignored.
struct Params {
    tenant: Option<String>,
    token: Option<String>,
}

impl Params {
    fn parse(dsn: &str, query: Option<&str>) -> Result<Params> {
        let mut p = Params {
            tenant: None,
            token: None,
        };
        for pair in query.unwrap_or("").split('&') {
            let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
            let slot = match percent_decode(k).ok_or_else(|| invalid_dsn(dsn))?.as_str() {
                "tenant" => &mut p.tenant,
                "token" => &mut p.token,
                _ => continue,
            };
            let v = percent_decode(v).ok_or_else(|| invalid_dsn(dsn))?;
            *slot = Some(v).filter(|v| !v.is_empty());
        }
        Ok(p)
    }

    fn remote(self, endpoint: Endpoint) -> Result<RemoteDsn> {
        Ok(RemoteDsn {
            endpoint,
            tenant: self
                .tenant
                .as_deref()
                .map(validate::tenant_id)
                .transpose()?,
            token: self.token,
        })
    }
}

/// `okf+unix:///<socket path>?tenant=<id>`: the path is required and percent-decoded.
fn parse_unix(dsn: &str, s: &str, colon: usize, windows: bool) -> Result<RemoteDsn> {
    let (path, query) = local_path(dsn, &s[colon + 1..], windows)?;
    let path = path.ok_or_else(|| invalid_dsn(dsn))?;
    Params::parse(dsn, query)?.remote(Endpoint::Unix(path))
}

/// `okf+http(s)://<host>[:<port>][/<ignored path>]?tenant=<id>&token=<token>`. The host is a
/// name or IPv4 address of `[A-Za-z0-9._~-]`, or a bracketed IPv6 address; user info, an
/// empty host and a port outside 1–65535 do not parse.
fn parse_tcp(dsn: &str, rest: &str, tls: bool) -> Result<RemoteDsn> {
    let rest = rest.strip_prefix("//").ok_or_else(|| invalid_dsn(dsn))?;
    let end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let authority = &rest[..end];
    let query = rest[end..]
        .split_once('?')
        .map(|(_, q)| q.split('#').next().unwrap_or(q));
    let (host, port) = if let Some(v6) = authority.strip_prefix('[') {
        let close = v6.find(']').ok_or_else(|| invalid_dsn(dsn))?;
        let inner = &v6[..close];
        if inner.is_empty()
            || !inner
                .bytes()
                .all(|c| c.is_ascii_hexdigit() || c == b':' || c == b'.')
        {
            return Err(invalid_dsn(dsn));
        }
        let after = &v6[close + 1..];
        let port = match after {
            "" => None,
            p => Some(p.strip_prefix(':').ok_or_else(|| invalid_dsn(dsn))?),
        };
        (&authority[..close + 2], port)
    } else {
        let (host, port) = match authority.split_once(':') {
            Some((h, p)) => (h, Some(p)),
            None => (authority, None),
        };
        let host_ok = !host.is_empty()
            && host
                .bytes()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, b'.' | b'-' | b'_' | b'~'));
        if !host_ok {
            return Err(invalid_dsn(dsn));
        }
        (host, port)
    };
    let port = match port {
        None => None,
        Some(p) => {
            let ok = !p.is_empty() && p.len() <= 5 && p.bytes().all(|c| c.is_ascii_digit());
            match p.parse::<u16>() {
                Ok(n) if ok && n > 0 => Some(n),
                _ => return Err(invalid_dsn(dsn)),
            }
        }
    };
    Params::parse(dsn, query)?.remote(Endpoint::Tcp {
        tls,
        host: host.to_string(),
        port,
    })
}

/// The part after `~` of an `okf://~/…` DSN (`/kb?tenant=a`), or `None` for any other DSN.
fn after_tilde(dsn: &str) -> Option<&str> {
    let scheme = dsn.get(..8)?;
    if !scheme.eq_ignore_ascii_case("okf://~/") && !scheme.eq_ignore_ascii_case("okf://~?") {
        return None;
    }
    Some(&dsn[7..])
}

/// [`parse_dsn`], with `~` in `okf://~/<path>` standing for the home directory `home` (the
/// host's: core reads no environment). Messages show the DSN as written.
pub fn parse_dsn_home(dsn: &str, windows: bool, home: Option<&str>) -> Result<Dsn> {
    let Some(rest) = after_tilde(dsn) else {
        return parse_dsn(dsn, windows);
    };
    let home = home.filter(|h| !h.is_empty()).ok_or_else(|| {
        Error::Invalid(format!(
            "cannot expand ~ in dsn \"{dsn}\": no home directory is known; expected {OKF_FORM}"
        ))
    })?;
    // The home directory as a DSN path: forward slashes, a leading `/`, `%` and `?` encoded.
    let mut path = home
        .replace('%', "%25")
        .replace('?', "%3F")
        .replace('\\', "/");
    if !path.starts_with('/') {
        path.insert(0, '/');
    }
    let path = path.trim_end_matches('/');
    let expanded = format!("okf://{path}{rest}");
    parse_dsn(&expanded, windows).map_err(|e| match e {
        Error::Invalid(m) => Error::Invalid(m.replace(&expanded, dsn)),
        other => other,
    })
}

/// The DSN as shown in the startup banner and in log lines: the value of every `token` and
/// `password` parameter as `***` (agent.md §1.1), and the password of a `user:password@`
/// authority too.
pub fn redact_dsn(dsn: &str) -> String {
    let (head, query) = match dsn.find('?') {
        Some(q) => (&dsn[..q], Some(&dsn[q + 1..])),
        None => (dsn, None),
    };
    let head = redact_userinfo(head);
    let Some(query) = query else {
        return head;
    };
    let parts: Vec<String> = query
        .split('&')
        .map(|pair| match pair.split_once('=') {
            Some((k, _)) if matches!(percent_decode(k).as_deref(), Some("token" | "password")) => {
                format!("{k}=***")
            }
            _ => pair.to_string(),
        })
        .collect();
    format!("{head}?{}", parts.join("&"))
}

/// `scheme://user:secret@host/…` → `scheme://user:***@host/…`.
fn redact_userinfo(head: &str) -> String {
    let Some(start) = head.find("://").map(|i| i + 3) else {
        return head.to_string();
    };
    let end = head[start..].find('/').map_or(head.len(), |i| start + i);
    let authority = &head[start..end];
    let Some(at) = authority.rfind('@') else {
        return head.to_string();
    };
    let Some(colon) = authority[..at].find(':') else {
        return head.to_string();
    };
    format!(
        "{}{}:***{}",
        &head[..start],
        &authority[..colon],
        &head[start + at..]
    )
}

mod postgres;
pub use postgres::{
    is_postgres, parse_postgres_dsn, schema_name, PostgresDsn, DEFAULT_SCHEMA, POSTGRES_FORM,
};

#[cfg(test)]
mod tests;
