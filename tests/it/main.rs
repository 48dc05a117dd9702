//! The one native integration test binary of langonrock.
//! Integration tests live in `it/`.

mod conformance;
mod engine;
mod engine_props;
