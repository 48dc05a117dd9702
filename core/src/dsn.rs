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

fn invalid_dsn(dsn: &str) -> Error {
    Error::Invalid(format!("invalid dsn \"{dsn}\""))
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

fn percent_decode(s: &str) -> Option<String> {
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
    let tenant = tenant.ok_or_else(|| Error::Invalid("embedded dsn needs ?tenant=".into()))?;
    Ok(Dsn {
        data,
        tenant: validate::tenant_id(&tenant)?,
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

/// The schema a `postgres:` DSN uses when it names none.
pub const DEFAULT_SCHEMA: &str = "langonrock";

/// A parsed `postgres:` (or `postgresql:`) DSN (cli.md §5, `docs/postgres.md`): a libpq
/// connection URI plus langonrock's own `tenant` and `schema` parameters.
#[derive(Clone, PartialEq, Eq)]
pub struct PostgresDsn {
    /// The connection URI the driver gets: the DSN without `tenant` and `schema`, every other
    /// parameter (`sslmode` included) kept as written. It may hold a password: show
    /// [`PostgresDsn::redacted`] instead.
    pub url: String,
    /// The tenant, validated and lower-cased; `None` when the DSN names none (`serve
    /// --store` serves every tenant).
    pub tenant: Option<String>,
    /// The schema holding langonrock's tables (`?schema=`, default `langonrock`).
    pub schema: String,
}

impl std::fmt::Debug for PostgresDsn {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PostgresDsn")
            .field("url", &redact_dsn(&self.url))
            .field("tenant", &self.tenant)
            .field("schema", &self.schema)
            .finish()
    }
}

impl PostgresDsn {
    /// The connection URI with its password hidden, for banners and logs.
    pub fn redacted(&self) -> String {
        redact_dsn(&self.url)
    }

    /// The tenant, or the error a command that needs one reports.
    pub fn require_tenant(&self) -> Result<&str> {
        self.tenant
            .as_deref()
            .ok_or_else(|| Error::Invalid("postgres dsn needs ?tenant=".into()))
    }
}

/// Whether `dsn` has the scheme `postgres:` or `postgresql:` (any case).
pub fn is_postgres(dsn: &str) -> bool {
    let scheme = dsn.split(':').next().unwrap_or("");
    scheme.eq_ignore_ascii_case("postgres") || scheme.eq_ignore_ascii_case("postgresql")
}

/// Validates a schema name: 1-63 characters of `[a-z0-9_]`, not starting with a digit, and
/// not starting with `pg_` (PostgreSQL reserves those). It is the only identifier langonrock
/// puts into SQL text, so nothing else is allowed.
pub fn schema_name(s: &str) -> Result<String> {
    let ok = !s.is_empty()
        && s.len() <= 63
        && !s.as_bytes()[0].is_ascii_digit()
        && !s.starts_with("pg_")
        && s.bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_');
    if ok {
        Ok(s.to_string())
    } else {
        Err(Error::Invalid(format!(
            "invalid schema \"{s}\": expected 1-63 chars of [a-z0-9_], not starting with a digit or pg_"
        )))
    }
}

/// Parses a `postgres://<user>[:<password>]@<host>[:<port>]/<database>?tenant=<t>` DSN
/// (`postgresql://` too). `tenant` is optional here and validated when present; `schema`
/// defaults to `langonrock`; every other parameter is left for the driver, which refuses
/// the ones it does not know.
pub fn parse_postgres_dsn(dsn: &str) -> Result<PostgresDsn> {
    if !is_postgres(dsn) {
        return Err(invalid_dsn(dsn));
    }
    let colon = dsn.find(':').unwrap_or(0);
    let rest = &dsn[colon + 1..];
    if !rest.starts_with("//") {
        return Err(Error::Invalid(format!(
            "invalid dsn \"{}\": expected postgres://<user>:<password>@<host>:<port>/<database>?tenant=<t>",
            redact_dsn(dsn)
        )));
    }
    let (head, query) = match dsn.find('?') {
        Some(q) => (&dsn[..q], Some(&dsn[q + 1..])),
        None => (dsn, None),
    };
    let (mut tenant, mut schema) = (None, None);
    let mut kept = Vec::new();
    for pair in query.unwrap_or("").split('&').filter(|p| !p.is_empty()) {
        let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
        let key = percent_decode(k).ok_or_else(|| invalid_dsn(&redact_dsn(dsn)))?;
        let value = || percent_decode(v).ok_or_else(|| invalid_dsn(&redact_dsn(dsn)));
        match key.as_str() {
            "tenant" => tenant = Some(value()?).filter(|v| !v.is_empty()),
            "schema" => schema = Some(value()?).filter(|v| !v.is_empty()),
            _ => kept.push(pair),
        }
    }
    let url = if kept.is_empty() {
        head.to_string()
    } else {
        format!("{head}?{}", kept.join("&"))
    };
    Ok(PostgresDsn {
        url,
        tenant: tenant.map(|t| validate::tenant_id(&t)).transpose()?,
        schema: schema_name(schema.as_deref().unwrap_or(DEFAULT_SCHEMA))?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn msg<T: std::fmt::Debug>(r: Result<T>) -> String {
        r.unwrap_err().message().to_string()
    }

    #[test]
    fn postgres_dsns() {
        let d = parse_postgres_dsn(
            "postgres://app:s3cret@db.example:5433/kb?tenant=Acme&sslmode=require&schema=lr_2",
        )
        .unwrap();
        assert_eq!(
            d.url,
            "postgres://app:s3cret@db.example:5433/kb?sslmode=require"
        );
        assert_eq!(d.tenant.as_deref(), Some("acme"));
        assert_eq!(d.schema, "lr_2");
        assert_eq!(
            d.redacted(),
            "postgres://app:***@db.example:5433/kb?sslmode=require"
        );
        assert!(!format!("{d:?}").contains("s3cret"));
        let d = parse_postgresql_default();
        assert_eq!(d.url, "postgresql://localhost/kb");
        assert_eq!((d.tenant, d.schema.as_str()), (None, "langonrock"));
        assert_eq!(
            msg(parse_postgres_dsn(
                "postgres://h/db?tenant=x%27%3Bdrop%20table"
            )),
            "invalid tenant id \"x';drop table\": expected 1-64 chars of [a-z0-9_-]"
        );
        assert_eq!(
            msg(parse_postgres_dsn("postgres://h/db?tenant=t&schema=a\"b")),
            "invalid schema \"a\"b\": expected 1-63 chars of [a-z0-9_], not starting with a digit or pg_"
        );
        assert_eq!(
            msg(parse_postgres_dsn("postgres:u:pw@h/db")),
            "invalid dsn \"postgres:u:pw@h/db\": expected postgres://<user>:<password>@<host>:<port>/<database>?tenant=<t>"
        );
        assert_eq!(
            parse_postgres_dsn("postgres://h/db")
                .unwrap()
                .require_tenant()
                .unwrap_err()
                .message(),
            "postgres dsn needs ?tenant="
        );
        assert_eq!(
            msg(parse_dsn("postgres://h/db?tenant=t", false)),
            "dsn scheme \"postgres:\" names a PostgreSQL store, which only the native langonrock binary opens"
        );
    }

    fn parse_postgresql_default() -> PostgresDsn {
        parse_postgres_dsn("postgresql://localhost/kb?schema=&tenant=").unwrap()
    }

    #[test]
    fn passwords_are_hidden() {
        assert_eq!(
            redact_dsn("postgres://u:p%40ss@h:5432/db?password=x&tenant=t&token=y"),
            "postgres://u:***@h:5432/db?password=***&tenant=t&token=***"
        );
        assert_eq!(redact_dsn("postgres://u@h/db"), "postgres://u@h/db");
        assert_eq!(redact_dsn("okf:///d?tenant=t"), "okf:///d?tenant=t");
    }
}
