//! Routing and auth (docs/http.md, "Routing and auth"): a path into a verb and its tenant,
//! and a request's bearer token into what it may do.

use super::tokens::Tokens;
use http::StatusCode;
use langonrock_core::dsn::percent_decode;
use langonrock_core::validate;

/// The verbs of the REST routes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Verb {
    /// `manifest` (GET).
    Manifest,
    /// `get` (POST).
    Get,
    /// `snapshot` (GET).
    Snapshot,
    /// `search` (POST).
    Search,
    /// `history` (GET).
    History,
    /// `source`: the listing (GET) or, with `<bundle>/<path>`, one document.
    Source,
    /// `bundles/<bundle>` (DELETE).
    Bundles,
    /// `transact` (POST).
    Transact,
    /// `restore` (POST).
    Restore,
}

fn verb(segment: &str) -> Option<Verb> {
    Some(match segment {
        "manifest" => Verb::Manifest,
        "get" => Verb::Get,
        "snapshot" => Verb::Snapshot,
        "search" => Verb::Search,
        "history" => Verb::History,
        "source" => Verb::Source,
        "bundles" => Verb::Bundles,
        "transact" => Verb::Transact,
        "restore" => Verb::Restore,
        _ => return None,
    })
}

/// A parsed REST path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Route {
    /// The tenant segment as decoded, when the path names one.
    pub(crate) tenant: Option<String>,
    /// The verb.
    pub(crate) verb: Verb,
    /// The segments after the verb (only `source` and `bundles` take any).
    pub(crate) rest: Vec<String>,
}

/// A refusal: status, code and message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Refusal(
    pub(crate) StatusCode,
    pub(crate) &'static str,
    pub(crate) String,
);

fn no_route() -> Refusal {
    Refusal(StatusCode::NOT_FOUND, "NOT_FOUND", "no such route".into())
}

/// The path's segments: split on `/`, empty ones dropped, each percent-decoded.
pub(crate) fn segments(path: &str) -> Result<Vec<String>, Refusal> {
    path.split('/')
        .filter(|s| !s.is_empty())
        .map(|s| {
            percent_decode(s).ok_or_else(|| {
                Refusal(
                    StatusCode::BAD_REQUEST,
                    "INVALID",
                    "the path holds a bad percent-encoding or bytes that are not UTF-8".into(),
                )
            })
        })
        .collect()
}

/// Parses `/v1[/<tenant>]/<verb>[/…]`. A first segment after `v1` that is a verb makes the
/// tenant come from the token, so a tenant named like a verb cannot be addressed here.
pub(crate) fn parse(segs: &[String]) -> Result<Route, Refusal> {
    if segs.first().map(String::as_str) != Some("v1") {
        return Err(no_route());
    }
    let (tenant, at) = match segs.get(1).map(|s| verb(s)) {
        None => return Err(no_route()),
        Some(Some(_)) => (None, 1),
        Some(None) => (Some(segs[1].clone()), 2),
    };
    let v = segs.get(at).and_then(|s| verb(s)).ok_or_else(no_route)?;
    let rest: Vec<String> = segs[at + 1..].to_vec();
    let shape_ok = match v {
        Verb::Source => rest.is_empty() || rest.len() >= 2,
        Verb::Bundles => rest.len() == 1,
        _ => rest.is_empty(),
    };
    if !shape_ok {
        return Err(no_route());
    }
    Ok(Route {
        tenant,
        verb: v,
        rest,
    })
}

/// What a request may do: its tenant and whether it may write.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Access {
    /// The tenant, validated and lower-cased.
    pub(crate) tenant: String,
    /// Whether the caller may write (the grant's, or any caller when no tokens exist).
    pub(crate) write: bool,
}

/// The token of an `Authorization: Bearer <token>` header.
pub(crate) fn bearer(value: Option<&http::HeaderValue>) -> Option<&str> {
    let v = value?.to_str().ok()?.trim();
    let (scheme, token) = v.split_once(' ')?;
    scheme
        .eq_ignore_ascii_case("bearer")
        .then(|| token.trim())
        .filter(|t| !t.is_empty())
}

/// Applies the auth rules: with no tokens the path must name the tenant and the caller may
/// write; with tokens the bearer token must be known and the path tenant, if any, must be
/// its grant's.
pub(crate) fn authorize(
    tokens: &Tokens,
    path_tenant: Option<&str>,
    token: Option<&str>,
) -> Result<Access, Refusal> {
    let invalid =
        |e: langonrock_core::Error| Refusal(StatusCode::BAD_REQUEST, "INVALID", e.message());
    if tokens.is_empty() {
        let t = path_tenant.ok_or_else(|| {
            Refusal(
                StatusCode::UNAUTHORIZED,
                "UNAUTHORIZED",
                "tenant required in path when no tokens exist".into(),
            )
        })?;
        return Ok(Access {
            tenant: validate::tenant_id(t).map_err(invalid)?,
            write: true,
        });
    }
    let grant = token.and_then(|t| tokens.grant(t)).ok_or_else(|| {
        Refusal(
            StatusCode::UNAUTHORIZED,
            "UNAUTHORIZED",
            "invalid or missing bearer token".into(),
        )
    })?;
    if let Some(t) = path_tenant {
        if validate::tenant_id(t).map_err(invalid)? != grant.tenant {
            return Err(Refusal(
                StatusCode::FORBIDDEN,
                "FORBIDDEN",
                "token does not grant access to that tenant".into(),
            ));
        }
    }
    Ok(Access {
        tenant: grant.tenant.clone(),
        write: grant.write,
    })
}

/// The refusal of a write a caller may not make: a read grant, or a read-only server.
pub(crate) fn write_refusal(read_only_server: bool) -> Refusal {
    let m = if read_only_server {
        "this server is read-only"
    } else {
        "this token may read but not write"
    };
    Refusal(StatusCode::FORBIDDEN, "FORBIDDEN", m.into())
}

/// The value of query parameter `name` (percent-decoded, `+` as a space), the last one
/// when repeated.
pub(crate) fn query_param(query: Option<&str>, name: &str) -> Option<String> {
    query?
        .split('&')
        .filter_map(|kv| {
            let (k, v) = kv.split_once('=').unwrap_or((kv, ""));
            (percent_decode(&k.replace('+', " "))? == name)
                .then(|| percent_decode(&v.replace('+', " ")))
                .flatten()
        })
        .next_back()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn segs(p: &str) -> Vec<String> {
        segments(p).unwrap()
    }

    #[test]
    fn routes_split_decode_and_pick_the_tenant() {
        let r = parse(&segs("/v1/acme/manifest")).unwrap();
        assert_eq!(
            (r.tenant.as_deref(), r.verb),
            (Some("acme"), Verb::Manifest)
        );
        let r = parse(&segs("//v1//manifest/")).unwrap();
        assert_eq!((r.tenant, r.verb), (None, Verb::Manifest));
        // A tenant named like a verb is the verb.
        assert_eq!(parse(&segs("/v1/manifest/manifest")), Err(no_route()));
        let r = parse(&segs("/v1/t/source/b/a%2Fb.md")).unwrap();
        assert_eq!(r.rest, ["b", "a/b.md"]);
        let r = parse(&segs("/v1/%2E%2E/snapshot")).unwrap();
        assert_eq!(r.tenant.as_deref(), Some(".."));
        for bad in [
            "/",
            "/v2/t/manifest",
            "/v1",
            "/v1/t",
            "/v1/t/nope",
            "/v1/t/manifest/x",
            "/v1/t/bundles",
            "/v1/t/bundles/a/b",
            "/v1/t/source/b",
        ] {
            assert_eq!(parse(&segs(bad)), Err(no_route()), "{bad}");
        }
        assert!(segments("/v1/%zz/manifest").is_err());
        assert!(segments("/v1/%ff/manifest").is_err());
    }

    #[test]
    fn query_values_are_decoded() {
        assert_eq!(
            query_param(Some("a=1&bundle=x%20y&b"), "bundle").as_deref(),
            Some("x y")
        );
        assert_eq!(
            query_param(Some("bundle=a+b"), "bundle").as_deref(),
            Some("a b")
        );
        assert_eq!(
            query_param(Some("bundle=1&bundle=2"), "bundle").as_deref(),
            Some("2")
        );
        assert_eq!(query_param(None, "bundle"), None);
    }

    #[test]
    fn bearer_tokens_are_read_from_the_header() {
        let v = http::HeaderValue::from_static("Bearer  abc ");
        assert_eq!(bearer(Some(&v)), Some("abc"));
        let v = http::HeaderValue::from_static("Basic abc");
        assert_eq!(bearer(Some(&v)), None);
        assert_eq!(bearer(None), None);
    }
}
