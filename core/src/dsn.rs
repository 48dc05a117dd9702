//! DSNs of cli.md §5, shared by the native binary and the JS package's `langonrock mcp`:
//! embedded `okf:` DSNs, and `postgres:` DSNs naming a PostgreSQL store
//! (`docs/postgres.md`), which only the native binary opens.

use crate::error::{Error, Result};
use crate::validate;

/// A parsed embedded DSN.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Dsn {
    /// The data root as written (percent-decoded), or `None` for the default
    /// (`okf://?tenant=…`).
    pub data: Option<String>,
    /// The tenant, validated and lower-cased.
    pub tenant: String,
}

/// The embedded form, as DSN errors show it (docs/cli.md, "DSN").
pub const OKF_FORM: &str = "okf:///absolute/path?tenant=<name>";

fn invalid_dsn(dsn: &str) -> Error {
    Error::Invalid(format!("invalid dsn \"{dsn}\": expected {OKF_FORM}"))
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

/// Parses a DSN of cli.md §5 (the first milestone: embedded `okf:` only). `windows`: the
/// host takes `okf:///C:/…` as the drive path `C:/…`.
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
        "okf+unix" | "okf+http" | "okf+https" => {
            return Err(Error::Invalid(format!(
                "dsn scheme \"{scheme}\" is planned but not available in this version"
            )))
        }
        _ => {
            return Err(Error::Invalid(format!(
                "unsupported dsn scheme \"{scheme}\", expected one of okf:, okf+unix:, okf+http:, okf+https:, postgres:"
            )))
        }
    }
    let rest = &s[colon + 1..];
    let rest = rest.strip_prefix("//").ok_or_else(|| invalid_dsn(dsn))?;
    let (hier, query) = match rest.find('?') {
        Some(i) => (&rest[..i], Some(&rest[i + 1..])),
        None => (rest, None),
    };
    // The authority runs to the first `/`: it must be empty.
    let path = match hier.find('/') {
        Some(0) => hier,
        Some(_) => return Err(invalid_dsn(dsn)),
        None if hier.is_empty() => "",
        None => return Err(invalid_dsn(dsn)),
    };
    let data = if path.is_empty() {
        None
    } else {
        let decoded = percent_decode(path).ok_or_else(|| invalid_dsn(dsn))?;
        if decoded.contains('\0') {
            return Err(invalid_dsn(dsn));
        }
        let b = decoded.as_bytes();
        let drive = b.len() >= 3 && b[1].is_ascii_alphabetic() && b[2] == b':';
        Some(if windows && drive {
            decoded[1..].to_string()
        } else {
            decoded
        })
    };
    let mut tenant = None;
    for pair in query.unwrap_or("").split('&') {
        let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
        let k = percent_decode(k).ok_or_else(|| invalid_dsn(dsn))?;
        if k == "tenant" {
            let v = percent_decode(v).ok_or_else(|| invalid_dsn(dsn))?;
            tenant = Some(v).filter(|v| !v.is_empty());
        }
    }
    let tenant = tenant.ok_or_else(|| {
        Error::Invalid(format!(
            "dsn \"{dsn}\" names no tenant: expected {OKF_FORM}"
        ))
    })?;
    Ok(Dsn {
        data,
        tenant: validate::tenant_id(&tenant)?,
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
pub use postgres::{is_postgres, parse_postgres_dsn, schema_name, PostgresDsn, DEFAULT_SCHEMA};
