//! Where tenants live: a files data root or a PostgreSQL database (`--data` of docs/cli.md
//! §2, which also takes a `postgres://` DSN, docs/postgres.md).

use crate::connection::Options;
use crate::Connection;
use langonrock_core::Error;
use std::path::{Path, PathBuf};

/// A data root: a directory of the files store, or a PostgreSQL database and schema.
#[derive(Clone, PartialEq, Eq)]
pub enum Root {
    /// A files data root.
    Files(PathBuf),
    /// A PostgreSQL database (its DSN may name a tenant).
    #[cfg(feature = "postgres")]
    Postgres(langonrock_core::dsn::PostgresDsn),
}

impl std::fmt::Debug for Root {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Root({self})")
    }
}

/// The directory, or the DSN with its password hidden: for messages and banners.
impl std::fmt::Display for Root {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Root::Files(p) => write!(f, "{}", p.display()),
            #[cfg(feature = "postgres")]
            Root::Postgres(d) => {
                let url = d.redacted();
                if d.schema == langonrock_core::dsn::DEFAULT_SCHEMA {
                    f.write_str(&url)
                } else {
                    let sep = if url.contains('?') { '&' } else { '?' };
                    write!(f, "{url}{sep}schema={}", d.schema)
                }
            }
        }
    }
}

impl Root {
    /// The value of `--data`: a `postgres:`/`postgresql:` DSN, else a directory.
    pub fn from_data(value: &str) -> Result<Root, Error> {
        if langonrock_core::dsn::is_postgres(value) {
            #[cfg(feature = "postgres")]
            return Ok(Root::Postgres(langonrock_core::dsn::parse_postgres_dsn(
                value,
            )?));
            #[cfg(not(feature = "postgres"))]
            return Err(Error::Invalid(
                "a postgres: dsn needs langonrock built with the `postgres` feature".into(),
            ));
        }
        Ok(Root::Files(PathBuf::from(value)))
    }

    /// The tenant the root names itself (a DSN's `?tenant=`).
    pub fn tenant(&self) -> Option<&str> {
        match self {
            Root::Files(_) => None,
            #[cfg(feature = "postgres")]
            Root::Postgres(d) => d.tenant.as_deref(),
        }
    }

    /// The directory of a files root.
    pub fn files(&self) -> Option<&Path> {
        match self {
            Root::Files(p) => Some(p),
            #[cfg(feature = "postgres")]
            Root::Postgres(_) => None,
        }
    }

    /// Every tenant of the root, sorted: the tenant directories of a files root, the
    /// tenants with a head in a database.
    pub fn tenants(&self) -> Result<Vec<String>, Error> {
        match self {
            #[cfg(feature = "files")]
            Root::Files(p) => crate::files::Files::new(p).tenants().map_err(Error::from),
            #[cfg(not(feature = "files"))]
            Root::Files(p) => Err(no_files(p)),
            #[cfg(feature = "postgres")]
            Root::Postgres(d) => crate::postgres::database(d, true)?.tenants(),
        }
    }
}

#[cfg(not(feature = "files"))]
fn no_files(p: &Path) -> Error {
    Error::Invalid(format!(
        "{} is a files data root, and this build has no `files` feature",
        p.display()
    ))
}

impl Options {
    /// Opens `tenant` of `root`.
    pub fn open_root(&self, root: &Root, tenant: &str) -> Result<Connection, Error> {
        match root {
            #[cfg(feature = "files")]
            Root::Files(p) => self.open_files(p, tenant),
            #[cfg(not(feature = "files"))]
            Root::Files(p) => {
                let _ = tenant;
                Err(no_files(p))
            }
            #[cfg(feature = "postgres")]
            Root::Postgres(d) => {
                let db = crate::postgres::database(d, self.is_read_only())?;
                self.open_postgres(&db, tenant)
            }
        }
    }
}
