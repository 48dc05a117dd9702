//! The one native integration test binary of langonrock.
