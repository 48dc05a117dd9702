//! The `langonrock` binary.
fn main() {}
