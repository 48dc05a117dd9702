//! langonrock's core: compiles OKF Markdown documents into a read model for agents, ranks
//! search, renders the agent-facing text, and prepares revisions as plain data.
//!
//! The core does no IO, reads no clock and has no randomness: the host passes the read date
//! (`today`) and commit times in, and stores the records the core prepares.
//!
//! ```
//! use langonrock_core::compile::{compile, SourceDoc, SUMMARY_WIDTH};
//! let docs = vec![SourceDoc::new("sales", "orders.md", "---\ntype: table\n---\nOrders placed online.\n")];
//! let model = compile(&docs, SUMMARY_WIDTH).unwrap();
//! let tsv = langonrock_core::manifest::manifest(&model, "acme", None, "2026-01-01").unwrap();
//! assert_eq!(tsv, "# tenant: acme\n# bundles: sales\nid\tbundle\tkind\tstatus\tgrain\tsummary\tlinks\norders\tsales\ttable\t-\t-\tOrders placed online.\t-\n");
//! ```
#![deny(missing_docs)]

pub mod bounds;
pub mod bytes;
pub mod compile;
pub mod conformance;
pub mod connection;
pub mod dsn;
pub mod engine;
pub mod error;
pub mod folder;
pub mod hash;
pub mod http_api;
pub mod layout;
pub mod lazy_list;
pub mod manifest;
pub mod pack;
pub mod par;
pub mod read;
pub mod rows;
pub mod search;
pub mod snapshot;
pub mod text;
pub mod tools;
pub mod validate;
pub mod wire;

#[cfg(test)]
mod testutil;

pub use error::{Error, Result};
