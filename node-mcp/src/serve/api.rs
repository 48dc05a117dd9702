//! The REST routes (docs/http.md, "Routes"): each verb's method rules, body shape and
//! reply. Work that may touch the store runs on tokio's blocking pool; reads of a state that
//! is still the head's run on the async worker (docs/http.md §7).

use super::reply::{
    body_error, closing, drain, engine_error, invalid, json, read_body, refuse, reply, Reply,
    MAX_BODY,
};
use super::route::{query_param, write_refusal, Access, Refusal, Route, Verb};
use super::tenants::Tenant;
use super::State;
use bytes::Bytes;
use http::header::{ETAG, IF_MATCH, IF_NONE_MATCH};
use http::request::Parts;
use http::{HeaderValue, Method, StatusCode};
use hyper::body::Incoming;
use langonrock::clock;
use langonrock_core::engine::request::parse_hash;
use langonrock_core::engine::{
    parse_history_request, parse_transaction_with, RestoreRequest, Served,
};
use langonrock_core::read::{count_from_number, GetOptions};
use langonrock_core::search::SearchOptions;
use langonrock_core::{manifest, tools, validate, wire, Error};
use serde_json::Value;
use std::sync::Arc;

const GET_SHAPE: &str =
    "body must be {\"ids\": [...], \"section\"?, \"offset\"?, \"limit\"?, \"find\"?, \"source\"?}";
const SEARCH_SHAPE: &str = "body must be {\"q\": \"...\", \"k\"?: n}";
const RESTORE_SHAPE: &str = "restore needs revision and expectedRevision in the connected tenant";

/// A refusal as a reply, after the unread body is drained.
pub(crate) async fn refused(state: &State, r: Refusal, body: Incoming) -> Reply {
    let drained = drain(body, state.limits.body_timeout).await;
    after_drain(refuse(r.0, r.1, &r.2), drained)
}

/// Runs `f` on the tenant on the blocking pool (opening the tenant first when needed).
pub(crate) async fn on_tenant(
    state: &Arc<State>,
    tenant: &str,
    f: impl FnOnce(&Tenant) -> Reply + Send + 'static,
) -> Reply {
    let (state, tenant) = (state.clone(), tenant.to_string());
    let joined = tokio::task::spawn_blocking(move || match state.tenants.get(&tenant) {
        Ok(t) => f(&t),
        Err(e) => engine_error(&e, false),
    })
    .await;
    joined.unwrap_or_else(|_| worker_failed())
}

/// The reply when a blocking task panicked.
fn worker_failed() -> Reply {
    refuse(
        StatusCode::INTERNAL_SERVER_ERROR,
        "STORE",
        "internal error: the request's worker failed",
    )
}

/// Runs a read on the tenant's served state. While the store's head has not moved since
/// the state was published, the read runs at once on the async worker: it is computation
/// over memory (one `stat` aside), and a hop to the blocking pool would cost more than the
/// read. Otherwise (a tenant not open yet, a head that moved, a derived record to check) it
/// goes to the blocking pool, where the connection may read the store.
pub(crate) async fn on_read(
    state: &Arc<State>,
    tenant: &str,
    f: impl Fn(&Tenant, &Served) -> Result<Reply, Error> + Send + Sync + 'static,
) -> Reply {
    if let Some(t) = state.tenants.open_now(tenant) {
        if let Some(s) = t.current() {
            match f(&t, &s) {
                Ok(r) => return r,
                Err(_) if s.derived_failed() => {}
                Err(e) => return engine_error(&e, false),
            }
        }
    }
    on_tenant(state, tenant, move |t| match t.read(|s| f(t, s)) {
        Ok(r) => r,
        Err(e) => engine_error(&e, false),
    })
    .await
}

/// The tenant, opened on the blocking pool when needed.
pub(crate) async fn on_tenant_arc(state: &Arc<State>, tenant: &str) -> Result<Arc<Tenant>, Reply> {
    let (state, tenant) = (state.clone(), tenant.to_string());
    match tokio::task::spawn_blocking(move || state.tenants.get(&tenant)).await {
        Ok(Ok(t)) => Ok(t),
        Ok(Err(e)) => Err(engine_error(&e, false)),
        Err(_) => Err(worker_failed()),
    }
}

/// Whether a JSON route's body has an acceptable content type: none, or JSON.
fn json_type(parts: &Parts) -> Result<(), String> {
    let Some(v) = parts.headers.get(http::header::CONTENT_TYPE) else {
        return Ok(());
    };
    let t = v.to_str().unwrap_or("");
    let essence = t
        .split(';')
        .next()
        .unwrap_or("")
        .trim()
        .to_ascii_lowercase();
    if essence == "application/json" || essence.ends_with("+json") {
        Ok(())
    } else {
        Err(format!(
            "content-type must be application/json, got \"{}\"",
            t.chars().take(100).collect::<String>()
        ))
    }
}

/// Whether a document body's content type is acceptable: anything but a form encoding,
/// whose bytes are not the document's.
fn document_type(parts: &Parts) -> Result<(), String> {
    let t = parts
        .headers
        .get(http::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .to_ascii_lowercase();
    if t.starts_with("multipart/") || t.starts_with("application/x-www-form-urlencoded") {
        Err("a document is sent as its raw bytes: use content-type text/markdown, not a form encoding".into())
    } else {
        Ok(())
    }
}

/// Reads a JSON route's body (content type checked first).
async fn body_bytes(
    state: &State,
    parts: &Parts,
    body: Incoming,
    check: fn(&Parts) -> Result<(), String>,
) -> Result<Bytes, Reply> {
    if let Err(m) = check(parts) {
        let drained = drain(body, state.limits.body_timeout).await;
        let r = refuse(StatusCode::UNSUPPORTED_MEDIA_TYPE, "INVALID", &m);
        return Err(after_drain(r, drained));
    }
    read_body(body, MAX_BODY, state.limits.body_timeout)
        .await
        .map_err(body_error)
}

fn is_write(verb: Verb, method: &Method, rest: &[String]) -> bool {
    match verb {
        Verb::Source => !rest.is_empty() && (method == Method::PUT || method == Method::DELETE),
        Verb::Bundles | Verb::Transact | Verb::Restore => true,
        _ => false,
    }
}

/// The method rule of a route: `None` when the method is allowed, else the 405 message.
fn method_refusal(verb: Verb, method: &Method, rest: &[String]) -> Option<String> {
    let need = |m: Method, message: &str| (*method != m).then(|| message.to_string());
    match verb {
        Verb::Manifest => need(Method::GET, "manifest requires GET"),
        Verb::Snapshot => need(Method::GET, "snapshot requires GET"),
        Verb::History => need(Method::GET, "history requires GET"),
        Verb::Get => need(Method::POST, "get requires POST"),
        Verb::Search => need(Method::POST, "search requires POST"),
        Verb::Transact => need(Method::POST, "transact requires POST"),
        Verb::Restore => need(Method::POST, "restore requires POST"),
        Verb::Bundles => need(Method::DELETE, "only DELETE is allowed on a bundle"),
        Verb::Source if rest.is_empty() => need(Method::GET, "the source listing is read only"),
        Verb::Source => (![Method::GET, Method::PUT, Method::DELETE].contains(method))
            .then(|| format!("{method} is not allowed on a concept")),
    }
}

/// `reply`, closing the connection when the request's body could not be drained.
fn after_drain(reply: Reply, drained: bool) -> Reply {
    if drained {
        reply
    } else {
        closing(reply)
    }
}

/// Serves one REST request whose route and access are known.
pub(crate) async fn dispatch(
    state: &Arc<State>,
    parts: Parts,
    body: Incoming,
    route: Route,
    access: Access,
) -> Reply {
    if let Some(m) = method_refusal(route.verb, &parts.method, &route.rest) {
        return refused(
            state,
            Refusal(StatusCode::METHOD_NOT_ALLOWED, "INVALID", m),
            body,
        )
        .await;
    }
    if is_write(route.verb, &parts.method, &route.rest) && (!access.write || state.read_only) {
        return refused(state, write_refusal(state.read_only), body).await;
    }
    let tenant = access.tenant;
    let query = parts.uri.query().map(str::to_string);
    match route.verb {
        Verb::Manifest => {
            let drained = drain(body, state.limits.body_timeout).await;
            let bundle = query_param(query.as_deref(), "bundle");
            let inm = header(&parts, IF_NONE_MATCH);
            let r = on_read(state, &tenant, move |t, s| {
                manifest_reply(t, s, bundle.as_deref(), inm.as_deref())
            })
            .await;
            after_drain(r, drained)
        }
        Verb::Snapshot => {
            let drained = drain(body, state.limits.body_timeout).await;
            let r = on_read(state, &tenant, |_, s| {
                Ok(json(format!(
                    "{{\"snapshot\":\"{}\",\"concepts\":{}}}",
                    s.snapshot_id(),
                    s.concepts()
                )))
            })
            .await;
            after_drain(r, drained)
        }
        Verb::History => {
            let drained = drain(body, state.limits.body_timeout).await;
            let mut req = serde_json::Map::new();
            if let Some(l) = query_param(query.as_deref(), "limit").filter(|l| !l.is_empty()) {
                let n = l
                    .parse::<i64>()
                    .map(Value::from)
                    .unwrap_or(Value::String(l));
                req.insert("limit".into(), n);
            }
            if let Some(b) = query_param(query.as_deref(), "before").filter(|b| !b.is_empty()) {
                req.insert("before".into(), Value::String(b));
            }
            let req = match parse_history_request(&Value::Object(req)) {
                Ok(r) => r,
                Err(e) => return after_drain(engine_error(&e, false), drained),
            };
            let r = on_tenant(state, &tenant, move |t| match t.conn.history(req) {
                Ok(page) => json(serde_json::to_string(&page).unwrap_or_default()),
                Err(e) => engine_error(&e, false),
            })
            .await;
            after_drain(r, drained)
        }
        Verb::Get => {
            let bytes = match body_bytes(state, &parts, body, json_type).await {
                Ok(b) => b,
                Err(r) => return r,
            };
            let value = match parse_json(&bytes, false) {
                Ok(v) => v.map(|(v, _)| v),
                Err(m) => return invalid(&m),
            };
            let Some((ids, opts)) = value.as_ref().and_then(get_request) else {
                return invalid(GET_SHAPE);
            };
            if opts.source {
                on_tenant(state, &tenant, move |t| get_source_reply(t, ids, opts)).await
            } else {
                on_read(state, &tenant, move |_, s| {
                    Ok(json(s.get(&ids, &opts)?.to_json()))
                })
                .await
            }
        }
        Verb::Search => {
            let bytes = match body_bytes(state, &parts, body, json_type).await {
                Ok(b) => b,
                Err(r) => return r,
            };
            let value = match parse_json(&bytes, false) {
                Ok(v) => v.map(|(v, _)| v),
                Err(m) => return invalid(&m),
            };
            let Some((q, opts)) = value.as_ref().and_then(search_request) else {
                return invalid(SEARCH_SHAPE);
            };
            on_read(state, &tenant, move |t, s| {
                let text = s.search(t.id(), &q, &opts, &clock::today())?;
                Ok(reply(StatusCode::OK, "text/tab-separated-values", text))
            })
            .await
        }
        Verb::Source if route.rest.is_empty() => {
            let drained = drain(body, state.limits.body_timeout).await;
            let r = on_read(state, &tenant, |_, s| {
                Ok(json(
                    serde_json::to_string(&s.list_source()).unwrap_or_default(),
                ))
            })
            .await;
            after_drain(r, drained)
        }
        Verb::Source => concept(state, parts, body, &tenant, route.rest).await,
        Verb::Bundles => {
            let drained = drain(body, state.limits.body_timeout).await;
            let bundle = route.rest[0].clone();
            if let Err(e) = validate::bundle_name(&bundle) {
                return after_drain(engine_error(&e, false), drained);
            }
            let r = on_tenant(state, &tenant, move |t| {
                // The `RevisionResult` a local `deleteBundle` returns (docs/http.md: 200,
                // not the 204 of http.md §4, so a remote connection gets the same result).
                match t.conn.delete_bundle(&bundle) {
                    Ok(r) => json(serde_json::to_string(&r).unwrap_or_default()),
                    Err(e) => engine_error(&e, false),
                }
            })
            .await;
            after_drain(r, drained)
        }
        Verb::Transact => {
            let bytes = match body_bytes(state, &parts, body, json_type).await {
                Ok(b) => b,
                Err(r) => return r,
            };
            let (value, contents) = match parse_json(&bytes, true) {
                Ok(Some(v)) => v,
                Ok(None) => return invalid("body must be valid JSON"),
                Err(m) => return invalid(&m),
            };
            let txn = match parse_transaction_with(&value, &contents) {
                Ok(t) => t,
                Err(e) => return engine_error(&e, false),
            };
            on_tenant(state, &tenant, move |t| match t.conn.transact(txn) {
                Ok(r) => json(serde_json::to_string(&r).unwrap_or_default()),
                Err(e) => engine_error(&e, false),
            })
            .await
        }
        Verb::Restore => {
            let bytes = match body_bytes(state, &parts, body, json_type).await {
                Ok(b) => b,
                Err(r) => return r,
            };
            let value = match parse_json(&bytes, false) {
                Ok(v) => v.map(|(v, _)| v),
                Err(m) => return invalid(&m),
            };
            let Some(req) = value.as_ref().and_then(restore_request) else {
                return invalid(RESTORE_SHAPE);
            };
            if let Err(e) =
                parse_hash(&req.revision).and_then(|_| parse_hash(&req.expected_revision))
            {
                return engine_error(&e, false);
            }
            on_tenant(state, &tenant, move |t| match t.conn.restore(req) {
                Ok(r) => json(serde_json::to_string(&r).unwrap_or_default()),
                Err(e) => engine_error(&e, false),
            })
            .await
        }
    }
}

fn header(parts: &Parts, name: http::header::HeaderName) -> Option<String> {
    parts
        .headers
        .get(name)
        .and_then(|v| v.to_str().ok())
        .map(str::to_string)
}

fn with_etag(mut r: Reply, etag: &str) -> Reply {
    if let Ok(v) = HeaderValue::from_str(etag) {
        r.headers_mut().insert(ETAG, v);
    }
    r
}

/// Whether an `If-None-Match` value matches `etag` (a list, `*`, or a weak form).
fn none_match(value: &str, etag: &str) -> bool {
    value
        .split(',')
        .map(|v| v.trim().trim_start_matches("W/"))
        .any(|v| v == "*" || v == etag)
}

fn manifest_reply(
    t: &Tenant,
    s: &Served,
    bundle: Option<&str>,
    inm: Option<&str>,
) -> Result<Reply, Error> {
    let today = clock::today();
    let text = manifest::manifest(s.model(), t.id(), bundle, &today)?;
    let etag = match bundle {
        Some(b) => format!(
            "\"{}:{}:{today}\"",
            s.snapshot_id(),
            tools::stored_bundle(s.model(), b)
        ),
        None => format!("\"{}:{today}\"", s.snapshot_id()),
    };
    if inm.is_some_and(|v| none_match(v, &etag)) {
        let mut r = reply(
            StatusCode::NOT_MODIFIED,
            "text/tab-separated-values",
            Bytes::new(),
        );
        r.headers_mut().remove(http::header::CONTENT_TYPE);
        return Ok(with_etag(r, &etag));
    }
    Ok(with_etag(
        reply(StatusCode::OK, "text/tab-separated-values", text),
        &etag,
    ))
}

/// A JSON route's body as a value: `Ok(None)` when it is not JSON (each route has its
/// message for that). A string with a lone surrogate or a number a double cannot hold,
/// which `serde_json` alone refuses, is refused naming where it is (`q must contain
/// well-formed Unicode`; docs/limits.md, the rule the MCP tools and the CLI follow); with
/// `changes`, lone surrogates in `changes[i].content` are left to the engine, whose
/// refusal is `source must contain well-formed Unicode`, and their indexes come back.
fn parse_json(bytes: &[u8], changes: bool) -> Result<Option<(Value, Vec<usize>)>, String> {
    let Ok((value, found)) = wire::parse_repairing(bytes) else {
        return Ok(None);
    };
    wire::refuse_flaws(&found, &value, changes).map(|contents| Some((value, contents)))
}

/// Reads a number option as the library does: floored, negatives as 0. Any other type is
/// ignored.
fn count(o: &serde_json::Map<String, Value>, key: &str) -> Option<u64> {
    o.get(key)?.as_f64().map(count_from_number)
}

fn string(o: &serde_json::Map<String, Value>, key: &str) -> Option<String> {
    o.get(key)?.as_str().map(str::to_string)
}

/// `{"ids": [...], "section"?, "offset"?, "limit"?, "find"?, "source"?}`: non-string ids are
/// dropped, options of the wrong type ignored; `None` without an `ids` array.
fn get_request(v: &Value) -> Option<(Vec<String>, GetOptions)> {
    let o = v.as_object()?;
    let ids = o
        .get("ids")?
        .as_array()?
        .iter()
        .filter_map(|x| x.as_str().map(str::to_string))
        .collect();
    let opts = GetOptions {
        section: string(o, "section"),
        offset: count(o, "offset"),
        limit: count(o, "limit"),
        find: string(o, "find"),
        source: o.get("source").and_then(Value::as_bool).unwrap_or(false),
    };
    Some((ids, opts))
}

/// `{"q", "k"?, "expand"?, "bundle"?}`: `None` without a non-empty string `q`.
fn search_request(v: &Value) -> Option<(String, SearchOptions)> {
    let o = v.as_object()?;
    let q = string(o, "q").filter(|q| !q.is_empty())?;
    let mut opts = SearchOptions::default();
    if let Some(k) = count(o, "k") {
        opts.k = usize::try_from(k).unwrap_or(usize::MAX);
    }
    if let Some(b) = string(o, "bundle") {
        opts.bundle = Some(b);
    }
    if let Some(e) = o.get("expand").and_then(Value::as_bool) {
        opts.expand = e;
    }
    Some((q, opts))
}

/// `{"revision", "expectedRevision"}` as strings, and no `tenant` key.
fn restore_request(v: &Value) -> Option<RestoreRequest> {
    let o = v.as_object()?;
    if o.contains_key("tenant") {
        return None;
    }
    Some(RestoreRequest {
        revision: string(o, "revision")?,
        expected_revision: string(o, "expectedRevision")?,
    })
}

/// `get` with `source`: the source blobs are checked first when the state came from a
/// derived record (store reads, so on the blocking pool).
fn get_source_reply(t: &Tenant, ids: Vec<String>, opts: GetOptions) -> Reply {
    if let Err(e) = t
        .conn
        .read()
        .and_then(|_| t.conn.check_sources(Some(ids.clone())))
    {
        return engine_error(&e, false);
    }
    match t.read(|s| Ok(s.get(&ids, &opts)?.to_json())) {
        Ok(text) => json(text),
        Err(e) => engine_error(&e, false),
    }
}

/// A hash from `If-Match`, quotes stripped; it must be 64-hex.
fn if_match_hash(value: &str) -> Result<String, Error> {
    let h = value.trim().trim_start_matches("W/").trim_matches('"');
    parse_hash(h).map(|d| d.to_hex())
}

/// `/v1[/t]/source/<bundle>/<path>`: GET, PUT and DELETE of one document.
async fn concept(
    state: &Arc<State>,
    parts: Parts,
    body: Incoming,
    tenant: &str,
    rest: Vec<String>,
) -> Reply {
    let bundle = rest[0].clone();
    let path = rest[1..].join("/");
    // Names are checked before a commit takes the tenant's writer lock, which would create
    // the tenant's directory: a refused write leaves no trace.
    if parts.method != Method::GET {
        if let Err(e) = validate::bundle_name(&bundle).and_then(|()| validate::document_path(&path))
        {
            let drained = drain(body, state.limits.body_timeout).await;
            return after_drain(engine_error(&e, false), drained);
        }
    }
    let if_match = header(&parts, IF_MATCH);
    let create = header(&parts, IF_NONE_MATCH).is_some_and(|v| v.trim() == "*");
    match parts.method {
        Method::GET => {
            let drained = drain(body, state.limits.body_timeout).await;
            let r = on_tenant(state, tenant, move |t| {
                match t.conn.read_source(&bundle, &path) {
                    Ok(Some(src)) => with_etag(
                        reply(StatusCode::OK, "text/markdown; charset=utf-8", src.content),
                        &format!("\"{}\"", src.hash),
                    ),
                    Ok(None) => refuse(StatusCode::NOT_FOUND, "NOT_FOUND", "no such concept"),
                    Err(e) => engine_error(&e, false),
                }
            })
            .await;
            after_drain(r, drained)
        }
        Method::PUT => {
            let replaces = match (create, &if_match) {
                (true, _) => None,
                (false, Some(v)) => match if_match_hash(v) {
                    Ok(h) => Some(h),
                    Err(e) => {
                        let drained = drain(body, state.limits.body_timeout).await;
                        return after_drain(engine_error(&e, false), drained);
                    }
                },
                (false, None) => {
                    return refused(
                        state,
                        Refusal(
                            StatusCode::PRECONDITION_REQUIRED,
                            "INVALID",
                            "a write needs If-Match: \"<hash>\" to replace, or If-None-Match: * to create".into(),
                        ),
                        body,
                    )
                    .await
                }
            };
            let bytes = match body_bytes(state, &parts, body, document_type).await {
                Ok(b) => b,
                Err(r) => return r,
            };
            let Ok(content) = String::from_utf8(bytes.to_vec()) else {
                return invalid("source must contain valid UTF-8");
            };
            on_tenant(state, tenant, move |t| {
                match t.conn.write(&bundle, &path, &content, replaces.as_deref()) {
                    Ok(r) => {
                        let etag = format!("\"{}\"", r.hash);
                        with_etag(json(serde_json::to_string(&r).unwrap_or_default()), &etag)
                    }
                    Err(e) => engine_error(&e, true),
                }
            })
            .await
        }
        _ => {
            // DELETE (the method rule allowed nothing else).
            let drained = drain(body, state.limits.body_timeout).await;
            let Some(v) = if_match else {
                let r = refuse(
                    StatusCode::PRECONDITION_REQUIRED,
                    "INVALID",
                    "deleting needs If-Match: \"<hash>\"",
                );
                return after_drain(r, drained);
            };
            let replaces = match if_match_hash(&v) {
                Ok(h) => h,
                Err(e) => return after_drain(engine_error(&e, false), drained),
            };
            let r = on_tenant(state, tenant, move |t| {
                match t.conn.delete(&bundle, &path, Some(&replaces)) {
                    Ok(r) => json(serde_json::to_string(&r).unwrap_or_default()),
                    Err(e) => engine_error(&e, true),
                }
            })
            .await;
            after_drain(r, drained)
        }
    }
}
