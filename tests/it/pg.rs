//! A real PostgreSQL server for the tests (`langonrock_postgres::test_server`), fresh
//! schemas on it, and the proxy that cuts connections (`test_server::Proxy`).

use langonrock_core::dsn::{parse_postgres_dsn, PostgresDsn};
use langonrock_postgres::{Options, PgStore};
use std::sync::atomic::{AtomicU64, Ordering};

pub use langonrock_postgres::test_server::{server, Cut, Proxy, Server};

static NEXT: AtomicU64 = AtomicU64::new(0);

/// A schema name no other case uses.
pub fn fresh_schema(tag: &str) -> String {
    format!(
        "t_{tag}_{}_{}",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    )
}

/// The parsed DSN of `schema` on `server`, with an optional tenant.
pub fn dsn(server: &Server, schema: &str, tenant: Option<&str>) -> PostgresDsn {
    let mut params = format!("schema={schema}");
    if let Some(t) = tenant {
        params.push_str(&format!("&tenant={t}"));
    }
    parse_postgres_dsn(&server.dsn_with(&params)).expect("a valid dsn")
}

/// A store on a fresh schema of the shared server.
pub fn fresh_store(tag: &str) -> PgStore {
    store_on(server(), &fresh_schema(tag))
}

/// A store on `schema` of `server`, creating the schema when needed.
pub fn store_on(server: &Server, schema: &str) -> PgStore {
    PgStore::connect(&dsn(server, schema, None), &Options::default()).expect("the store connects")
}
