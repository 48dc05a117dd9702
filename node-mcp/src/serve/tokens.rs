//! Tokens (docs/http.md, "Tokens"): `<data>/tokens.json` maps each token to its grant, a
//! bare tenant id (read-only) or `{"tenant": "<t>", "write": true}`. The server reads the
//! file once, at startup; `langonrock token` mints a token and adds its grant.
//!
//! The server keeps only the SHA-256 of each token, so a lookup's timing tells nothing
//! about the tokens it holds, and no token ever reaches a log line or an error message.

use langonrock_core::engine::Digest;
use langonrock_core::validate;
use serde_json::{Map, Value};
use std::collections::{BTreeSet, HashMap};
use std::fs::{self, File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};

/// What a token grants.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Grant {
    /// The tenant, validated and lower-cased.
    pub(crate) tenant: String,
    /// Whether the token may write.
    pub(crate) write: bool,
}

/// The tokens of a data root, as read at startup.
#[derive(Debug, Default)]
pub(crate) struct Tokens {
    by_digest: HashMap<Digest, Grant>,
}

/// The tokens file of a data root.
pub(crate) fn path(data: &Path) -> PathBuf {
    data.join("tokens.json")
}

fn shape_error(file: &Path, n: usize) -> String {
    format!(
        "{}: grant #{n} must be a tenant id or {{\"tenant\": \"<t>\", \"write\": true}}",
        file.display()
    )
}

fn parse_grant(v: &Value) -> Option<Grant> {
    match v {
        Value::String(t) => Some(Grant {
            tenant: validate::tenant_id(t).ok()?,
            write: false,
        }),
        Value::Object(o) => {
            if o.keys().any(|k| k != "tenant" && k != "write") {
                return None;
            }
            let tenant = validate::tenant_id(o.get("tenant")?.as_str()?).ok()?;
            let write = match o.get("write") {
                None => false,
                Some(w) => w.as_bool()?,
            };
            Some(Grant { tenant, write })
        }
        _ => None,
    }
}

/// Reads the tokens file as a JSON object, or `None` when there is none.
fn read_object(file: &Path) -> Result<Option<Map<String, Value>>, String> {
    let bytes = match fs::read(file) {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(format!("cannot read {}: {e}", file.display())),
    };
    match serde_json::from_slice::<Value>(&bytes) {
        Ok(Value::Object(o)) => Ok(Some(o)),
        _ => Err(format!(
            "{} must be a JSON object mapping each token to its grant",
            file.display()
        )),
    }
}

impl Tokens {
    /// Reads `<data>/tokens.json`; no file means no tokens.
    pub(crate) fn load(data: &Path) -> Result<Tokens, String> {
        let file = path(data);
        let mut by_digest = HashMap::new();
        for (n, (token, grant)) in read_object(&file)?.unwrap_or_default().iter().enumerate() {
            let grant = parse_grant(grant).ok_or_else(|| shape_error(&file, n + 1))?;
            if token.is_empty() {
                return Err(format!(
                    "{}: grant #{} has an empty token",
                    file.display(),
                    n + 1
                ));
            }
            by_digest.insert(Digest::of(token.as_bytes()), grant);
        }
        Ok(Tokens { by_digest })
    }

    /// Whether no token exists (the server then listens on a socket only).
    pub(crate) fn is_empty(&self) -> bool {
        self.by_digest.is_empty()
    }

    /// The number of tokens.
    pub(crate) fn len(&self) -> usize {
        self.by_digest.len()
    }

    /// The number of tenants some token may write.
    pub(crate) fn writable_tenants(&self) -> usize {
        self.by_digest
            .values()
            .filter(|g| g.write)
            .map(|g| g.tenant.as_str())
            .collect::<BTreeSet<_>>()
            .len()
    }

    /// The grant of `token`, if it is known.
    pub(crate) fn grant(&self, token: &str) -> Option<&Grant> {
        self.by_digest.get(&Digest::of(token.as_bytes()))
    }
}

/// 32 bytes from the operating system's random source, as 64 lowercase hex characters.
fn new_token() -> Result<String, String> {
    let mut bytes = [0u8; 32];
    getrandom::fill(&mut bytes).map_err(|e| format!("cannot get random bytes: {e}"))?;
    Ok(Digest(bytes).to_hex())
}

/// Opens a new file readable and writable by its owner only (mode 0600 on Unix).
fn create_private(path: &Path) -> std::io::Result<File> {
    let mut o = OpenOptions::new();
    o.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        o.mode(0o600);
    }
    o.open(path)
}

/// `langonrock token --tenant <t> [--write]`: mints a token, adds its grant to
/// `<data>/tokens.json` (written whole to a private temporary file, then renamed over the
/// old one, so the file is never half written and stays at mode 0600) and returns the
/// token and the status line for stderr.
pub(crate) fn mint(data: &Path, tenant: &str, write: bool) -> Result<(String, String), String> {
    fs::create_dir_all(data).map_err(|e| format!("cannot create {}: {e}", data.display()))?;
    let file = path(data);
    // Two `token` runs at once must not lose a grant: one at a time per data root.
    let lock_path = data.join("tokens.json.lock");
    let lock_file = OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(false)
        .open(&lock_path)
        .map_err(|e| format!("cannot open {}: {e}", lock_path.display()))?;
    fs4::FileExt::lock(&lock_file)
        .map_err(|e| format!("cannot lock {}: {e}", lock_path.display()))?;
    let mut grants = read_object(&file)?.unwrap_or_default();
    let token = new_token()?;
    let grant = if write {
        serde_json::json!({"tenant": tenant, "write": true})
    } else {
        Value::String(tenant.to_string())
    };
    grants.insert(token.clone(), grant);
    let mut text = serde_json::to_string_pretty(&Value::Object(grants))
        .map_err(|e| format!("cannot encode {}: {e}", file.display()))?;
    text.push('\n');
    let staged = data.join(format!("tokens.json.tmp-{}", std::process::id()));
    let _ = fs::remove_file(&staged);
    let written = create_private(&staged)
        .and_then(|mut f| {
            f.write_all(text.as_bytes())?;
            f.sync_all()
        })
        .and_then(|()| fs::rename(&staged, &file));
    if let Err(e) = written {
        let _ = fs::remove_file(&staged);
        return Err(format!("cannot write {}: {e}", file.display()));
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let _ = fs::set_permissions(&file, fs::Permissions::from_mode(0o600));
        if let Ok(d) = File::open(data) {
            let _ = d.sync_all();
        }
    }
    drop(lock_file);
    let kind = if write { "read-write" } else { "read-only" };
    let line = format!(
        "recorded a {kind} grant for {tenant} in {}. A running server reads that file only at startup, so restart it before the token works",
        file.display()
    );
    Ok((token, line))
}
