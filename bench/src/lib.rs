//! The benchmark harness and the reference-corpus generator.
//!
//! - [`corpus`]: the reference-corpus generator (byte-identical to langonrock's `bench/corpus.ts`).
//! - [`questions`]: the 20 benchmark questions over a generated corpus.
//! - [`billing`]: the agent-session billing model and the strategy turn builders.
//! - [`store`]: store-side read costs over the compiled core model (bare text).

pub mod billing;
pub mod corpus;
pub mod questions;
pub mod store;
