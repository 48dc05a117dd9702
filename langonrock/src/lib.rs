//! langonrock as a Rust library: a knowledge store for AI agents.
//!
//! People keep knowledge as Markdown with YAML frontmatter (the Open Knowledge Format, OKF);
//! langonrock compiles those documents into a read model built for agents — a byte-stable
//! manifest, sliced reads, deterministic search with a `pos` pointer into the text — and
//! keeps every committed revision. This crate is the way in from Rust: [`open`] a DSN and
//! call the operations of the [`Connection`] it gives. They are the npm package's operations
//! (in snake_case), with the same results and the same errors, and the `langonrock` binary
//! is built on them.
//!
//! # Opening a connection
//!
//! | DSN | Store | Feature |
//! |---|---|---|
//! | `okf:///srv/kb?tenant=acme` | the files store of a data root on this machine | `files` (default) |
//! | `okf://~/kb?tenant=acme` | the same, under the home directory | `files` |
//! | `okf://?tenant=acme` | the default data root (`$LANGONROCK_DATA`, else the platform's data directory) | `files` |
//! | `okf+unix:///run/kb.sock?tenant=acme` | a `langonrock serve` on a unix socket | `remote` |
//! | `okf+https://kb.example.com?tenant=acme&token=<token>` | a `langonrock serve` over TLS (`okf+http:` over TCP) | `remote` |
//! | `postgres://kb@db.example.com/kb?tenant=acme` | a PostgreSQL database, shared by every connection to it (docs/postgres.md) | `postgres` |
//!
//! [`Connection::memory`] opens a tenant in memory, for tests and examples. [`Options`]
//! opens read-only, without loading the tenant (for `verify` and `repair`), with another
//! clock, or over a store of your own. A DSN that does not parse is refused with `INVALID`
//! and a message that names it and the form expected:
//!
//! ```
//! let e = langonrock::open("okf://kb?tenant=acme").unwrap_err();
//! assert_eq!(e.code(), "INVALID");
//! assert_eq!(
//!     e.message(),
//!     "invalid dsn \"okf://kb?tenant=acme\": expected okf:///absolute/path?tenant=<name>"
//! );
//! ```
//!
//! # The operations
//!
//! | Operation | Method | Returns |
//! |---|---|---|
//! | manifest | [`Connection::manifest`] | the manifest TSV (one row per concept) |
//! | get | [`Connection::get`] | `(id, slice)` pairs in result order ([`OwnedSlice`]) |
//! | search | [`Connection::search`] | the search TSV, rows with a `pos` |
//! | snapshot | [`Connection::snapshot`] | [`Snapshot`] |
//! | listSource | [`Connection::list_source`] | [`SourceEntry`]s |
//! | readSource | [`Connection::read_source`] | [`SourceContent`] or `None` |
//! | write | [`Connection::write`] | [`WriteResult`] |
//! | delete | [`Connection::delete`] | [`DeleteResult`] |
//! | deleteBundle | [`Connection::delete_bundle`] | [`RevisionResult`] |
//! | transact | [`Connection::transact`] | [`RevisionResult`] |
//! | history | [`Connection::history`] | [`HistoryPage`] |
//! | restore | [`Connection::restore`] | [`RevisionResult`] |
//! | gc | [`Connection::gc`] | [`GcResult`] |
//! | verify | [`Connection::verify`] | [`VerifyResult`] |
//! | repair | [`Connection::repair`] | [`RepairResult`] |
//!
//! Results serialize (serde) to the spec's JSON, keys in its order. `gc`, `verify`, `repair`
//! and `import` need the store on this machine: a remote connection refuses them.
//!
//! # An agent's session
//!
//! The few round trips an agent needs: the manifest to see what exists, one batched `get`
//! for what looks relevant, a search whose `pos` says where to read, and a write that names
//! the version it replaces — refused with the hash to retry with when it names none.
//!
//! ```
//! use langonrock::{ConflictReason, Connection, Error, GetOptions, SearchOptions};
//!
//! let kb = Connection::memory("acme")?;
//! // A long table: its refund rules sit far down the body.
//! let columns: String = (1..=400).map(|i| format!("- column_{i}\n")).collect();
//! let orders = format!("---\ntype: table\ndescription: Orders placed online.\n---\n\
//!     # Orders\n\nOne row per order line; see [[customers]].\n\n## Columns\n\n{columns}\n\
//!     ## Refunds\n\nA refund is a negative order line, booked on the day it is paid.\n");
//! kb.write("sales", "orders.md", &orders, None)?;
//! kb.write("sales", "customers.md", "---\ntype: table\n---\n# Customers\n\nPeople who order.\n", None)?;
//!
//! // 1. The manifest: one row per concept (id, bundle, kind, status, grain, summary, links).
//! let manifest = kb.manifest(None)?;
//! assert!(manifest.contains("orders\tsales\ttable\t-\t-\tOrders placed online.\tcustomers\n"));
//!
//! // 2. One batched get for both tables, slices in result order.
//! let got = kb.get(&["orders", "customers"], &GetOptions::default())?;
//! let (id, slice) = &got[1];
//! assert_eq!((id.as_str(), slice.text.as_str()), ("customers", "# Customers\n\nPeople who order.\n"));
//!
//! // 3. A search; its `pos` column points at the densest cluster of the query's words…
//! let hits = kb.search("refund paid", &SearchOptions::default())?;
//! let row = hits.lines().find(|l| l.starts_with("orders\t")).unwrap();
//! let pos: u64 = row.rsplit('\t').next().unwrap().parse().unwrap();
//! assert!(pos > 0);
//! // …so the follow-up reads the 2,000 units around it, not the whole body.
//! let at_pos = GetOptions { offset: Some(pos), limit: Some(2000), ..GetOptions::default() };
//! let (_, passage) = &kb.get(&["orders"], &at_pos)?[0];
//! assert!(passage.text.contains("A refund is a negative order line"));
//! assert!(passage.start > 0 && passage.end == passage.total);
//!
//! // 4. A write that does not name the version it replaces is refused, nothing changes…
//! let edited = "---\ntype: table\n---\n# Customers\n\nPeople and firms who order.\n";
//! let refused = kb.write("sales", "customers.md", edited, None).unwrap_err();
//! assert!(matches!(refused, Error::Conflict { reason: Some(ConflictReason::Exists), .. }));
//! // …and the retry names the current hash.
//! let hash = kb.current_hash("sales", "customers.md");
//! let written = kb.write("sales", "customers.md", edited, hash.as_deref())?;
//! assert_eq!(kb.read_source("sales", "customers.md")?.unwrap().hash, written.hash);
//! # Ok::<(), langonrock::Error>(())
//! ```
//!
//! # An agent loop with no MCP process
//!
//! [`Connection::tools`] gives the MCP server's tool definitions (the manifest tool's
//! description ends with advice computed from this tenant) and [`Connection::call_tool`]
//! answers a model's tool call with exactly the text `langonrock mcp` would send — argument
//! checks, default limits and the retry lines of a refusal included. Over MCP the refusal
//! itself carries the hash:
//!
//! ```
//! use langonrock::{Connection, ToolMode};
//! use serde_json::json;
//!
//! let kb = Connection::memory("acme")?;
//! // Hand these to the model (name, description, JSON schema of the arguments).
//! let tools: Vec<serde_json::Value> = kb.tools(ToolMode::default())?.iter().map(|t| t.to_json()).collect();
//! assert_eq!(tools[0]["name"], "manifest");
//!
//! // Answer each tool call the model makes.
//! let write = json!({"bundle": "notes", "path": "idea.md", "content": "---\ntype: note\n---\nAn idea.\n"});
//! assert!(!kb.call_tool("write", Some(&write)).is_error);
//! let again = kb.call_tool("write", Some(&write));
//! assert!(again.is_error);
//! let hash = again.text.rsplit('"').nth(1).unwrap(); // retry with replaces: "<hash>"
//! let retry = json!({"bundle": "notes", "path": "idea.md", "replaces": hash,
//!                    "content": "---\ntype: note\n---\nA better idea.\n"});
//! let reply = kb.call_tool("write", Some(&retry));
//! assert!(!reply.is_error && reply.text.starts_with("wrote notes/idea.md"));
//! # Ok::<(), langonrock::Error>(())
//! ```
//!
//! # Errors
//!
//! Every failure is an [`Error`], a `#[non_exhaustive]` enum whose [`Error::code`] is
//! stable — `INVALID`, `NOT_FOUND`, `CONFLICT` (with the `reason`, or a transaction's
//! failing `changes`), `INDETERMINATE_COMMIT` (with the revision that may have landed),
//! `CORRUPT`, `STORE`, and over a remote connection `UNAUTHORIZED` and `FORBIDDEN` — and
//! whose [`Error::message`] is the exact text the spec gives. Content problems inside a
//! document are never errors: they are diagnostics on the results.
//!
//! # Threads, blocking and async
//!
//! A [`Connection`] is `Send + Sync` and every method takes `&self`: open one per tenant and
//! share it (`Arc<Connection>`). Reads run concurrently, also while a commit is in flight
//! (they answer from the last published revision, so no read waits for a disk or a server);
//! commits are serialized, and on the files store they also queue behind other processes'
//! under the store's writer lock.
//!
//! The API blocks. Its work is CPU-bound core work (compiling, ranking, hashing) around
//! store IO that is blocking by nature (files and `fsync`, a database pool), so a program
//! without an async runtime — a command, a test, a thread pool — pays for none. An async
//! service turns on the `async` feature and uses [`AsyncConnection`], which runs each call on
//! tokio's blocking pool (`spawn_blocking`), where that work belongs.
//!
//! # Features
//!
//! - `files` (default): the files store of a data root (`okf:` DSNs).
//! - `remote`: connections to a `langonrock serve` (`okf+unix:`, `okf+http:`, `okf+https:`):
//!   an HTTP/1.1 client (hyper) and TLS (rustls).
//! - `postgres`: the PostgreSQL store (`postgres:` DSNs, docs/postgres.md): a database shared
//!   by replicas, on the `postgres` driver.
//! - `async`: [`AsyncConnection`] (tokio).
//!
//! Without `remote` or `postgres`, such a DSN is refused with `INVALID` and the feature to
//! turn on; an embedded user compiles no HTTP client, TLS stack or database driver.

#[cfg(feature = "async")]
mod asynchronous;
pub mod clock;
// The local connection: public methods for `handle.rs`, reachable only through
// `Connection`, so users see one connection type.
#[allow(unreachable_pub)]
mod connection;
pub mod data_root;
#[cfg(feature = "files")]
pub mod files;
mod handle;
#[cfg(feature = "postgres")]
pub mod postgres;
#[cfg(feature = "remote")]
pub mod remote;
pub mod root;

#[cfg(test)]
mod testdir;
#[cfg(test)]
mod tests;
mod tool_list;

#[cfg(feature = "async")]
pub use asynchronous::AsyncConnection;
pub use connection::{Options, READ_ONLY};
pub use handle::{not_remote, Connection};
pub use langonrock_core as core;
pub use langonrock_core::connection::CLOSED;
pub use langonrock_core::engine::{
    parse_transaction, DeleteResult, DiagnosticInfo, GcRequest, GcResult, HistoryPage,
    HistoryRequest, RepairRequest, RepairResult, RestoreRequest, RevisionInfo, RevisionResult,
    SourceContent, SourceEntry, Transaction, VerifyResult, WriteResult,
};
pub use langonrock_core::error::{ChangeFailure, ConflictReason};
pub use langonrock_core::read::{GetOptions, OwnedSlice};
pub use langonrock_core::search::SearchOptions;
pub use langonrock_core::snapshot::Snapshot;
pub use langonrock_core::tools::Reply;
pub use langonrock_core::{Error, Result};
pub use root::Root;
pub use tool_list::{ToolDefinition, ToolMode};

/// Opens the tenant a DSN names (see the crate documentation for every form). A tenant
/// without a head opens empty; nothing is created before the first commit. A remote DSN
/// sends nothing until the first call.
///
/// ```no_run
/// let conn = langonrock::open("okf:///srv/knowledge?tenant=acme")?;
/// print!("{}", conn.manifest(None)?);
/// # Ok::<(), langonrock::Error>(())
/// ```
pub fn open(dsn: &str) -> Result<Connection> {
    Options::default().open(dsn)
}
