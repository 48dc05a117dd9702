//! The benchmark harness and the reference-corpus generator.
//!
//! - [`corpus`]: the reference-corpus generator (byte-identical to langonrock's `bench/corpus.ts`).
//! - [`questions`]: the 20 benchmark questions over a generated corpus.
//! - [`billing`]: the agent-session billing model and the strategy turn builders.
//! - [`store`]: store-side read costs over the compiled core model (bare text).
//! - [`rendered`]: store-side read costs priced on our MCP tools' rendered output.
//! - [`retrieval`]: hit@8 and MRR of our search; the retrieval benchmark's sets.
//! - [`baseline`]: the ranking before docs/search.md's, for the benchmark's "before".
//! - [`docset`]: the Django documentation as an OKF tenant.
//! - [`host`]: the engine over the memory store and the native files store.
//! - [`limits`]: bounded work: long histories and hostile documents.
//! - [`measure`]: timing, on-CPU time, peak RSS, median and p95.
//! - [`size`]: everything measured at one corpus size.
//! - [`binary`]: the real `langonrock` binary: CLI import, MCP over stdio, the token tax.
//! - [`all`]: the whole run (`langonrock-bench all`).
//! - [`report`]: `docs/benchmarks.md` from a run.

pub mod all;
pub mod baseline;
pub mod billing;
pub mod binary;
pub mod corpus;
pub mod docset;
pub mod host;
pub mod limits;
pub mod measure;
pub mod postgres;
pub mod questions;
pub mod remote;
pub mod rendered;
pub mod report;
pub mod retrieval;
pub mod size;
pub mod store;
