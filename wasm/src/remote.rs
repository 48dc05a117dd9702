//! The HTTP wire of a remote connection for the JS package (docs/remote.md): the request an
//! operation becomes and the result (or error) its answer stands for, both through
//! `langonrock_core::http_api`, with the arguments checked by the same conversions as a
//! local connection's. The package's pkg/src/remote.js only moves the bytes.

use crate::convert;
use crate::error::to_js;
use js_sys::{Array, Map, Object, Reflect, Uint8Array};
use langonrock_core::engine::{
    self, DeleteResult, HistoryPage, RestoreRequest, RevisionResult, SourceEntry, WriteResult,
};
use langonrock_core::http_api::{self as wire, ManifestAnswer, Response};
use langonrock_core::snapshot::Snapshot;
use langonrock_core::Error;
use wasm_bindgen::prelude::*;

type JsResult<T> = Result<T, JsValue>;

fn js<T>(r: Result<T, Error>) -> JsResult<T> {
    r.map_err(|e| to_js(&e))
}

fn set(o: &Object, key: &str, v: &JsValue) {
    let _ = Reflect::set(o, &JsValue::from_str(key), v);
}

fn arg(args: &Array, i: u32) -> JsValue {
    args.get(i)
}

fn opt_string(v: &JsValue) -> Option<String> {
    v.as_string()
}

/// The request of one operation: `{method, path, headers: [[name, value]…], body:
/// Uint8Array, read}`, `path` below `prefix` (`/v1/<tenant>` or `/v1`). `args` are the
/// operation's arguments as the connection received them; they are checked as a local
/// connection checks them, with the same errors.
#[wasm_bindgen(js_name = remoteRequest)]
pub fn remote_request(op: &str, prefix: &str, args: Array) -> JsResult<JsValue> {
    let a = |i| arg(&args, i);
    let req = match op {
        // manifest(bundle?, cachedEtag?)
        "manifest" => wire::manifest(
            prefix,
            opt_string(&a(0)).as_deref(),
            opt_string(&a(1)).as_deref(),
        ),
        "snapshot" => wire::snapshot(prefix),
        "get" => {
            let ids = js(convert::ids(&a(0)))?;
            let opts = js(convert::get_options(&a(1)))?;
            wire::get(prefix, &ids, &opts)
        }
        "search" => {
            let query = a(0)
                .as_string()
                .ok_or_else(|| to_js(&Error::Invalid("search query must be a string".into())))?;
            let opts = js(convert::search_options(&a(1)))?;
            wire::search(prefix, &query, &opts)
        }
        "listSource" => wire::list_source(prefix),
        "readSource" => wire::read_source(
            prefix,
            &a(0).as_string().unwrap_or_default(),
            &a(1).as_string().unwrap_or_default(),
        ),
        "write" => {
            // Checked whole, as the engine checks a change, so a malformed write fails
            // without a round trip.
            let (bundle, path, content, replaces) =
                js(convert::write_args(&a(0), &a(1), &a(2), &a(3)))?;
            let change = js(engine::request::check_change(
                "write",
                &bundle,
                &path,
                Some(content),
                convert::hash(&a(3)),
            ))?;
            let engine::Operation::Write(text) = &change.operation else {
                return Err(to_js(&Error::Invalid(
                    engine::request::BAD_OPERATION.into(),
                )));
            };
            wire::write(prefix, &bundle, &change.path, text, replaces.as_deref())
        }
        "delete" => {
            let (bundle, path, replaces) = js(convert::delete_args(&a(0), &a(1), &a(2)))?;
            wire::delete(prefix, &bundle, &path, replaces.as_deref())
        }
        "deleteBundle" => wire::delete_bundle(prefix, &a(0).as_string().unwrap_or_default()),
        "transact" => {
            let txn = js(convert::transaction(&a(0)))?;
            wire::transact(prefix, &wire::transaction_json(&txn))
        }
        "history" => {
            let req = js(engine::parse_history_request(&convert::json(&a(0))))?;
            wire::history(prefix, &req)
        }
        "restore" => {
            let v = convert::json(&a(0));
            js(engine::parse_restore_request(&v))?;
            let field = |k: &str| v.get(k).and_then(|x| x.as_str()).unwrap_or("").to_string();
            wire::restore(
                prefix,
                &RestoreRequest {
                    revision: field("revision"),
                    expected_revision: field("expectedRevision"),
                },
            )
        }
        other => {
            return Err(to_js(&Error::Invalid(format!(
                "{other} is not available over a remote connection"
            ))))
        }
    };
    Ok(request_js(&req))
}

fn value<T: serde::de::DeserializeOwned + serde::Serialize>(r: &Response<'_>) -> JsResult<JsValue> {
    let v: T = js(r.json(200))?;
    js(convert::to_js(&v))
}

/// The result an answer stands for, shaped as a local connection's (a `Map` for `get`,
/// `null` for a missing document, `{text, etag?}` for a manifest, where `text` is `cached`
/// on 304 and `etag` absent), or the server's error rebuilt (code, message and extras). A
/// body that is not what the route answers is `STORE` `langonrock server returned …`.
#[wasm_bindgen(js_name = remoteAnswer)]
pub fn remote_answer(
    op: &str,
    status: u16,
    etag: Option<String>,
    body: &[u8],
    cached: Option<String>,
) -> JsResult<JsValue> {
    let r = Response {
        status,
        etag: etag.as_deref(),
        body,
    };
    match op {
        "manifest" => {
            let o = Object::new();
            match js(wire::manifest_answer(&r, cached.as_deref()))? {
                ManifestAnswer::Cached(text) => set(&o, "text", &JsValue::from_str(&text)),
                ManifestAnswer::Fresh { text, etag } => {
                    set(&o, "text", &JsValue::from_str(&text));
                    if let Some(e) = etag {
                        set(&o, "etag", &JsValue::from_str(&e));
                    }
                }
            }
            Ok(o.into())
        }
        "snapshot" => {
            let s: Snapshot = js(r.json(200))?;
            Ok(convert::snapshot(&s))
        }
        "get" => {
            js(r.expect(200))?;
            let entries =
                wire::get_answer(body).ok_or_else(|| to_js(&wire::unexpected(status, body)))?;
            let map = Map::new();
            for (id, slice) in entries {
                map.set(&JsValue::from_str(&id), &js(convert::to_js(&slice))?);
            }
            Ok(map.into())
        }
        "search" => Ok(JsValue::from_str(&js(r.tsv(200))?)),
        "listSource" => value::<Vec<SourceEntry>>(&r),
        "readSource" => match js(wire::read_source_answer(&r))? {
            None => Ok(JsValue::NULL),
            Some((content, hash)) => {
                let o = Object::new();
                set(&o, "content", &JsValue::from_str(&content));
                set(&o, "hash", &JsValue::from_str(&hash));
                Ok(o.into())
            }
        },
        "write" => value::<WriteResult>(&r),
        "delete" => value::<DeleteResult>(&r),
        "deleteBundle" | "transact" | "restore" => value::<RevisionResult>(&r),
        "history" => value::<HistoryPage>(&r),
        other => Err(to_js(&Error::Invalid(format!(
            "{other} is not available over a remote connection"
        )))),
    }
}

/// A tool call over a remote connection (docs/remote.md): the core's tool op with its needs
/// answered by the server's routes (`langonrock_core::http_api::RemoteTool`). The package
/// sends each request it hands out and passes the response back, so the replies are the
/// texts a local connection gives.
#[wasm_bindgen]
pub struct WasmRemoteTool {
    tool: Option<wire::RemoteTool>,
    refused: Option<String>,
}

fn request_js(req: &wire::Request) -> JsValue {
    let o = Object::new();
    set(&o, "method", &JsValue::from_str(req.method));
    set(&o, "path", &JsValue::from_str(&req.path));
    let headers = Array::new();
    for (k, v) in &req.headers {
        headers.push(&Array::of2(&JsValue::from_str(k), &JsValue::from_str(v)));
    }
    set(&o, "headers", &headers);
    set(&o, "body", &Uint8Array::from(req.body.as_slice()));
    set(&o, "read", &JsValue::from_bool(req.read));
    o.into()
}

#[wasm_bindgen]
impl WasmRemoteTool {
    /// A call of the tool `name` with `args` (checked against the tool's schema; a bad call
    /// replies with its error at once), under the request prefix `prefix`.
    #[wasm_bindgen(constructor)]
    pub fn new(name: &str, args: JsValue, read_only: bool, prefix: &str) -> WasmRemoteTool {
        let args = (!args.is_undefined()).then(|| convert::json(&args));
        match langonrock_core::tools::parse_call(name, args.as_ref()) {
            Ok(call) => WasmRemoteTool {
                tool: Some(wire::RemoteTool::new(call, read_only, prefix)),
                refused: None,
            },
            Err(m) => WasmRemoteTool {
                tool: None,
                refused: Some(m),
            },
        }
    }

    /// Whether the call changes the tenant: the package queues it with its other changes.
    #[wasm_bindgen(getter)]
    pub fn commits(&self) -> bool {
        self.tool.as_ref().is_some_and(wire::RemoteTool::commits)
    }

    /// The next step: `{request}` to send, or `{done: {text, isError}}`. Pass nothing to
    /// start, then each request's `{status, etag?, body}`, or `{error}` when the transport
    /// failed.
    pub fn step(&mut self, response: JsValue) -> JsValue {
        let o = Object::new();
        let done = |o: &Object, text: &str, is_error: bool| {
            set(o, "done", &convert::tool_answer(text, is_error));
        };
        if let Some(m) = self.refused.take() {
            done(&o, &m, true);
            return o.into();
        }
        let Some(tool) = self.tool.as_mut() else {
            done(&o, "the tool call already finished", true);
            return o.into();
        };
        let step = if response.is_undefined() {
            tool.resume(None)
        } else if let Some(error) = Some(Reflect::get(&response, &JsValue::from_str("error")))
            .and_then(Result::ok)
            .filter(|e| !e.is_undefined())
        {
            tool.resume(Some(Err(crate::error::from_js(&error))))
        } else {
            let status = Reflect::get(&response, &JsValue::from_str("status"))
                .ok()
                .and_then(|s| s.as_f64())
                .unwrap_or(0.0) as u16;
            let etag = Reflect::get(&response, &JsValue::from_str("etag"))
                .ok()
                .and_then(|e| e.as_string());
            let body = Reflect::get(&response, &JsValue::from_str("body"))
                .ok()
                .map(|b| Uint8Array::new(&b).to_vec())
                .unwrap_or_default();
            tool.resume(Some(Ok(Response {
                status,
                etag: etag.as_deref(),
                body: &body,
            })))
        };
        match step {
            wire::RemoteStep::Send(req) => set(&o, "request", &request_js(&req)),
            wire::RemoteStep::Done(reply) => {
                self.tool = None;
                done(&o, &reply.text, reply.is_error);
            }
        }
        o.into()
    }
}
