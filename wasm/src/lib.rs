//! WebAssembly bindings of langonrock's core: thin, with no behaviour of their own.
//!
//! - [`engine`]: `WasmEngine` (one tenant: synchronous reads, operations as step machines),
//!   `WasmOp` (a raw engine op: the refresh a host runs), `WasmConnOp` (a library operation
//!   under the core's connection policy), `WasmDerivedTimer` and `WasmToolCall` (the core's
//!   tool op).
//! - [`convert`]: every conversion between JS values and the core's types.
//! - [`error`]: `core::Error` as a real JS `Error` with `code`.
//! - [`hash`]: a host's SHA-256 for the core (Node's `crypto`).
//! - [`heap`]: the heap grown ahead, geometrically (V8 makes every `memory.grow` costly).
//! - [`store`]: what the JS stores take from the core: the files layout and the memory
//!   store's head check.
//!
//! This file holds the free exported functions, and `LinkTargets` (the core's rule of where
//! a link goes, for a host that follows one).

pub mod convert;
pub mod engine;
pub mod error;
pub mod hash;
pub mod heap;
pub mod remote;
pub mod store;

pub use engine::{
    WasmConnOp, WasmDerivedTimer, WasmEngine, WasmFolderPlan, WasmOp, WasmSources, WasmToolCall,
};

use langonrock_core::{folder, tools, validate};
use wasm_bindgen::prelude::*;

/// The package version.
#[wasm_bindgen]
pub fn version() -> String {
    env!("CARGO_PKG_VERSION").to_string()
}

/// Registers the package's error class, constructed as `new Class(code, message, extra)`.
#[wasm_bindgen(js_name = setErrorClass)]
pub fn set_error_class(class: js_sys::Function) {
    error::set_error_class(class);
}

/// The tools of a mode (agent.md §2), in order, as `tools/list` entries `{name, title,
/// description, inputSchema}`; the manifest's description ends with `advice` when given.
#[wasm_bindgen(js_name = toolList)]
pub fn tool_list(
    database_tools: bool,
    read_only: bool,
    advice: Option<String>,
) -> Result<JsValue, JsValue> {
    let list: Vec<serde_json::Value> = tools::tool_set(database_tools, read_only)
        .into_iter()
        .map(|t| t.list_entry(advice.as_deref()))
        .collect();
    convert::to_js(&list).map_err(|e| error::to_js(&e))
}

/// The `okf://manifest` resource of agent.md §7.1: `{uri, name, title, description,
/// mimeType}`.
#[wasm_bindgen(js_name = manifestResource)]
pub fn manifest_resource(advice: Option<String>) -> Result<JsValue, JsValue> {
    let description = tools::tool("manifest")
        .map(|t| t.description_with(advice.as_deref()))
        .unwrap_or_default();
    let v = serde_json::json!({
        "uri": tools::MANIFEST_URI,
        "name": tools::MANIFEST_RESOURCE_NAME,
        "title": tools::MANIFEST_RESOURCE_TITLE,
        "description": description,
        "mimeType": tools::MANIFEST_MIME,
    });
    convert::to_js(&v).map_err(|e| error::to_js(&e))
}

/// How long commits must pause before the head's derived record is written, in milliseconds
/// (the core's one delay, docs/connection.md).
#[wasm_bindgen(js_name = derivedDelayMs)]
pub fn derived_delay_ms() -> f64 {
    langonrock_core::connection::DERIVED_DELAY_MS as f64
}

/// The advice sentence for a whole tenant manifest (agent.md §7.2).
#[wasm_bindgen]
pub fn advice(manifest: &str) -> String {
    tools::advice(manifest)
}

/// Validates a tool call's arguments (agent.md §1.5). Throws the tool error text as a
/// string (`unknown tool "<name>"`, `k must be an integer from 1 to 50`, …).
#[wasm_bindgen(js_name = parseToolCall)]
pub fn parse_tool_call(name: &str, args: JsValue) -> Result<WasmToolCall, JsValue> {
    WasmToolCall::parse(name, &args).map_err(|m| JsValue::from_str(&m))
}

/// The tool error for a tool name outside the served set: `unknown tool "<name>"`, the name
/// quoted as every error quotes a value (at most 120 units).
#[wasm_bindgen(js_name = unknownTool)]
pub fn unknown_tool(name: &str) -> String {
    tools::unknown_tool(name)
}

/// The error message for a resource URI other than the manifest's.
#[wasm_bindgen(js_name = noResource)]
pub fn no_resource(uri: &str) -> String {
    tools::no_resource(uri)
}

/// A string in Unicode normalization form C.
#[wasm_bindgen]
pub fn nfc(s: &str) -> String {
    validate::nfc(s)
}

/// A tenant's documents, indexed to follow links as the compiler resolves them (core
/// `compile::LinkTargets`, docs/compile.md §6.2–§6.3): built from `listSource`'s entries,
/// each answer `{kind: "external", href} | {kind: "anchor", fragment} | {kind: "concept",
/// id} | {kind: "document", bundle, path} | {kind: "unresolved", create?: {bundle, path,
/// title}}`.
#[wasm_bindgen(js_name = LinkTargets)]
pub struct WasmLinkTargets(langonrock_core::compile::LinkTargets);

#[wasm_bindgen(js_class = LinkTargets)]
impl WasmLinkTargets {
    /// Indexes the entries whose JSON text is `entries` (`[{bundle, path, id?}]`); throws
    /// `INVALID` for another shape.
    #[wasm_bindgen(constructor)]
    pub fn new(entries: &str) -> Result<WasmLinkTargets, JsValue> {
        let docs = convert::link_documents(entries).map_err(|e| error::to_js(&e))?;
        Ok(WasmLinkTargets(langonrock_core::compile::LinkTargets::new(
            docs,
        )))
    }

    /// Where the Markdown link destination `destination`, written in `bundle`/`path`, goes.
    pub fn markdown(
        &self,
        bundle: &str,
        path: &str,
        destination: &str,
    ) -> Result<JsValue, JsValue> {
        convert::to_js(&self.0.markdown(bundle, path, destination)).map_err(|e| error::to_js(&e))
    }

    /// Where the wiki link whose text between `[[` and `]]` is `inner`, written in `bundle`,
    /// goes.
    pub fn wiki(&self, bundle: &str, inner: &str) -> Result<JsValue, JsValue> {
        convert::to_js(&self.0.wiki(bundle, inner)).map_err(|e| error::to_js(&e))
    }
}

/// Whether a file name ends in `.md` (any case), the documents a folder read takes.
#[wasm_bindgen(js_name = endsWithMd)]
pub fn ends_with_md(name: &str) -> bool {
    validate::ends_with_md(name)
}

/// Checks a bundle name (compile.md §10.2); throws the `INVALID` error.
#[wasm_bindgen(js_name = checkBundleName)]
pub fn check_bundle_name(name: &str) -> Result<(), JsValue> {
    validate::bundle_name(name).map_err(|e| error::to_js(&e))
}

/// Checks a document path (compile.md §10.3) and returns it in NFC; throws the `INVALID`
/// error.
#[wasm_bindgen(js_name = checkDocumentPath)]
pub fn check_document_path(path: &str) -> Result<String, JsValue> {
    validate::document_path(path).map_err(|e| error::to_js(&e))
}

/// Plans a folder import (docs/import.md): `entries` is `[{path, kind}]` as the host's walk
/// found them (relative paths with `/`, hidden names skipped, links not followed), `options`
/// `{bundle?, name?, shown}`. Returns the plan (`convert::folder_plan`); throws `INVALID`.
#[wasm_bindgen(js_name = planFolder)]
pub fn plan_folder(entries: JsValue, options: JsValue) -> Result<JsValue, JsValue> {
    let owned = convert::folder_entries(&entries).map_err(|e| error::to_js(&e))?;
    let list: Vec<folder::Entry<'_>> = owned
        .iter()
        .map(|(path, kind)| folder::Entry { path, kind: *kind })
        .collect();
    let plan = convert::plan_with_options(&list, &options).map_err(|e| error::to_js(&e))?;
    convert::folder_plan(&plan).map_err(|e| error::to_js(&e))
}

/// A folder walk's error (docs/import.md) as the `INVALID` error to throw: `problem` is
/// `notFound`, `notAFolder` or `unreadable` (with the system's `reason`).
#[wasm_bindgen(js_name = folderWalkError)]
pub fn folder_walk_error(problem: &str, path: &str, reason: &str) -> JsValue {
    let p = match problem {
        "notFound" => folder::WalkProblem::NotFound,
        "notAFolder" => folder::WalkProblem::NotAFolder,
        _ => folder::WalkProblem::Unreadable,
    };
    error::to_js(&folder::walk_error(p, path, reason))
}

/// Whether a folder walk skips an entry of this name (docs/import.md).
#[wasm_bindgen(js_name = hiddenName)]
pub fn hidden_name(name: &str) -> bool {
    folder::hidden(name)
}

/// Parses a DSN (docs/remote.md): `{kind: "embedded", data, tenant}` with `data` null for
/// the default data root, or `{kind: "remote", socket?, origin, authority, prefix, tenant?,
/// token?}` (`socket` for `okf+unix:`). `windows`: the host takes `okf:///C:/…` as the drive
/// path `C:/…`; `home`: the home directory that `~` in `okf://~/…` stands for.
#[wasm_bindgen(js_name = parseDsn)]
pub fn parse_dsn(dsn: &str, windows: bool, home: Option<String>) -> Result<JsValue, JsValue> {
    use langonrock_core::dsn::{Dsn, Endpoint};
    let d = langonrock_core::dsn::parse_dsn_home(dsn, windows, home.as_deref())
        .map_err(|e| error::to_js(&e))?;
    let v = match d {
        Dsn::Embedded(d) => {
            serde_json::json!({"kind": "embedded", "data": d.data, "tenant": d.tenant})
        }
        Dsn::Remote(r) => {
            let mut o = serde_json::json!({
                "kind": "remote",
                "origin": r.origin(),
                "authority": r.authority(),
                "prefix": r.prefix(),
            });
            if let Endpoint::Unix(path) = &r.endpoint {
                o["socket"] = path.as_str().into();
            }
            if let Some(t) = &r.tenant {
                o["tenant"] = t.as_str().into();
            }
            if let Some(t) = &r.token {
                o["token"] = t.as_str().into();
            }
            o
        }
    };
    convert::to_js(&v).map_err(|e| error::to_js(&e))
}

/// The DSN as the startup banner shows it: every `token` value as `***` (agent.md §1.1).
#[wasm_bindgen(js_name = redactDsn)]
pub fn redact_dsn(dsn: &str) -> String {
    langonrock_core::dsn::redact_dsn(dsn)
}
