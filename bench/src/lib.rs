//! The benchmark harness and the reference-corpus generator.
