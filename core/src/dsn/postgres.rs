//! `postgres:` DSNs (cli.md §5, `docs/postgres.md`): a libpq connection URI plus
//! langonrock's own `tenant` and `schema` parameters.

use super::{invalid_dsn, percent_decode, redact_dsn};
use crate::error::{Error, Result};
use crate::validate;

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

/// The form of a `postgres:` DSN, as its errors show it (docs/postgres.md).
pub const POSTGRES_FORM: &str = "postgres://<user>:<password>@<host>:<port>/<database>?tenant=<t>";

impl PostgresDsn {
    /// The connection URI with its password hidden, for banners and logs.
    pub fn redacted(&self) -> String {
        redact_dsn(&self.url)
    }

    /// The tenant, or the error a command that needs one reports.
    pub fn require_tenant(&self) -> Result<&str> {
        self.tenant.as_deref().ok_or_else(|| {
            Error::Invalid(format!(
                "dsn \"{}\" names no tenant: expected {POSTGRES_FORM}",
                self.redacted()
            ))
        })
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
        use crate::dsn::parse_dsn;
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
            "dsn \"postgres://h/db\" names no tenant: expected postgres://<user>:<password>@<host>:<port>/<database>?tenant=<t>"
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
