//! langonrock as a Rust library: a [`Connection`] to one tenant of a knowledge store.
//!
//! The behaviour lives in `langonrock-core` (compiler, read model, search, revisions, tool
//! texts, connection policy); this crate adds what does IO: the files store of a local data
//! root ([`files`]), the clock ([`clock`]) and the connection that drives the core against a
//! store ([`connection`]).
//!
//! - [`open`] takes a DSN (`okf:<data root>?tenant=<t>`, docs/cli.md §5) and opens its tenant;
//!   [`Options`] opens read-only, or without loading the tenant (for `verify` and `repair`).
//! - [`Connection::memory`] opens a tenant in memory, over the core's strict memory store
//!   (tests, examples).
//!
//! A [`Connection`] is `Send + Sync`, and every method takes `&self`: reads run at once from
//! the last published state, also while a commit is in flight; commits to the tenant are
//! serialized. The API blocks (core operations are CPU-bound, the files store does blocking
//! IO): an async host runs it on a blocking pool.
//!
//! Features: `files` (default) builds the files store. Later stores and transports come
//! behind their own flags (`remote`, `postgres`), so an embedded user compiles only what it
//! uses.

#[cfg(feature = "async")]
mod asynchronous;
pub mod clock;
pub mod connection;
pub mod data_root;
#[cfg(feature = "files")]
pub mod files;
mod handle;
#[cfg(feature = "remote")]
pub mod remote;

#[cfg(test)]
mod testdir;
mod tool_list;

#[cfg(feature = "async")]
pub use asynchronous::AsyncConnection;
pub use connection::{Options, READ_ONLY};
pub use handle::{not_remote, Connection};
pub use langonrock_core as core;
pub use langonrock_core::{Error, Result};
pub use tool_list::{ToolDefinition, ToolMode};

/// Opens the tenant a DSN names (docs/cli.md §5): `okf:<data root>?tenant=<t>`, or
/// `okf://?tenant=<t>` for the default data root (see [`data_root::default_root`]). A tenant
/// without a head opens empty; nothing is created before the first commit.
///
/// ```no_run
/// let conn = langonrock::open("okf:/srv/knowledge?tenant=acme")?;
/// println!("{}", conn.manifest(None)?);
/// # Ok::<(), langonrock::Error>(())
/// ```
pub fn open(dsn: &str) -> Result<Connection> {
    Options::default().open(dsn)
}
