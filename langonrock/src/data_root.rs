//! The default data root (docs/cli.md §2): `$LANGONROCK_DATA` when set and non-empty, else
//! the platform data directory.

use langonrock_core::Error;
use std::path::PathBuf;

/// An environment lookup (`LANGONROCK_DATA`, `XDG_DATA_HOME`, `HOME`, `LOCALAPPDATA`,
/// `USERPROFILE`), so callers and tests can pin the variables.
pub type Env<'a> = &'a dyn Fn(&str) -> Option<String>;

/// The process environment, for [`Env`].
pub fn process_env(name: &str) -> Option<String> {
    std::env::var(name).ok()
}

fn non_empty(env: Env<'_>, name: &str) -> Option<String> {
    env(name).filter(|v| !v.is_empty())
}

/// The home directory that `~` in `okf://~/…` stands for (docs/cli.md, "DSN"): `$HOME`, or
/// `%USERPROFILE%` on Windows.
pub fn home_dir(env: Env<'_>) -> Option<String> {
    if cfg!(windows) {
        non_empty(env, "USERPROFILE")
    } else {
        non_empty(env, "HOME")
    }
}

/// The refusal when no data directory can be found.
pub const NO_DATA_DIR: &str = "cannot find the data directory: pass --data or set LANGONROCK_DATA";

/// The platform data directory: `%LOCALAPPDATA%\langonrock` on Windows,
/// `~/Library/Application Support/langonrock` on macOS, `$XDG_DATA_HOME/langonrock` or
/// `~/.local/share/langonrock` elsewhere.
pub fn platform_dir(env: Env<'_>) -> Result<PathBuf, Error> {
    let missing = || Error::Invalid(NO_DATA_DIR.into());
    if cfg!(windows) {
        if let Some(d) = non_empty(env, "LOCALAPPDATA") {
            return Ok(PathBuf::from(d).join("langonrock"));
        }
        let home = non_empty(env, "USERPROFILE").ok_or_else(missing)?;
        return Ok(PathBuf::from(home)
            .join("AppData")
            .join("Local")
            .join("langonrock"));
    }
    if cfg!(target_os = "macos") {
        let home = non_empty(env, "HOME").ok_or_else(missing)?;
        return Ok(PathBuf::from(home)
            .join("Library")
            .join("Application Support")
            .join("langonrock"));
    }
    if let Some(d) = non_empty(env, "XDG_DATA_HOME") {
        return Ok(PathBuf::from(d).join("langonrock"));
    }
    let home = non_empty(env, "HOME").ok_or_else(missing)?;
    Ok(PathBuf::from(home)
        .join(".local")
        .join("share")
        .join("langonrock"))
}

/// The default data root: `$LANGONROCK_DATA` when set and non-empty, else
/// [`platform_dir`].
pub fn default_root(env: Env<'_>) -> Result<PathBuf, Error> {
    match non_empty(env, "LANGONROCK_DATA") {
        Some(d) => Ok(PathBuf::from(d)),
        None => platform_dir(env),
    }
}
