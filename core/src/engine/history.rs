//! `history` (engine.md §6): pages of the retained revision chain, newest first.

use super::records::HeadRecord;
use super::request::{HistoryRequest, BAD_CURSOR, HISTORY_LIMIT};
use super::results::{HistoryPage, RevisionInfo};
use super::store::Digest;
use super::walk::ChainWalk;
use super::{foreign_format, Engine, Op, Progress};
use crate::error::{Error, Result};

/// `history cursor expired or is not committed; restart history pagination`.
pub const CURSOR_EXPIRED: &str =
    "history cursor expired or is not committed; restart history pagination";

const B64: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

/// base64url without padding.
pub(crate) fn base64url(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let n = chunk
            .iter()
            .enumerate()
            .fold(0u32, |n, (i, &b)| n | (b as u32) << (16 - 8 * i));
        for i in 0..=chunk.len() {
            out.push(B64[(n >> (18 - 6 * i) & 63) as usize] as char);
        }
    }
    out
}

/// Decodes base64url without padding; `None` for anything else (padding, other
/// characters, a dangling character, or non-zero trailing bits).
pub(crate) fn unbase64url(s: &str) -> Option<Vec<u8>> {
    let vals: Vec<u32> = s
        .bytes()
        .map(|c| B64.iter().position(|&b| b == c).map(|p| p as u32))
        .collect::<Option<_>>()?;
    if vals.len() % 4 == 1 {
        return None;
    }
    let mut out = Vec::with_capacity(vals.len() * 3 / 4);
    for chunk in vals.chunks(4) {
        let n = chunk
            .iter()
            .enumerate()
            .fold(0u32, |n, (i, &v)| n | v << (18 - 6 * i));
        let bytes = chunk.len() - 1;
        let all = [(n >> 16) as u8, (n >> 8) as u8, n as u8];
        if bytes < 3 && all[bytes..].iter().any(|&b| b != 0) {
            return None;
        }
        out.extend_from_slice(&all[..bytes]);
    }
    Some(out)
}

/// The cursor naming `before` (engine.md §6.4).
pub fn encode_cursor(tenant: &str, before: &Digest) -> String {
    base64url(
        format!("{{\"version\":1,\"tenant\":\"{tenant}\",\"before\":\"{before}\"}}").as_bytes(),
    )
}

/// Decodes a cursor for `tenant`: `INVALID` `invalid history cursor` when it does not decode,
/// is longer than 512 characters, or names another tenant.
pub fn decode_cursor(tenant: &str, cursor: &str) -> Result<Digest> {
    #[derive(serde::Deserialize)]
    #[serde(deny_unknown_fields)]
    struct Cursor {
        version: u64,
        tenant: String,
        before: String,
    }
    let bad = || Error::Invalid(BAD_CURSOR.into());
    if cursor.len() > 512 {
        return Err(bad());
    }
    let bytes = unbase64url(cursor).ok_or_else(bad)?;
    let c: Cursor = serde_json::from_slice(&bytes).map_err(|_| bad())?;
    if c.version != 1 || c.tenant != tenant {
        return Err(bad());
    }
    Digest::from_hex(&c.before).ok_or_else(bad)
}

/// Where a `history` op stands: the head it walks and the page so far. It lives in the op,
/// so each step resumes the walk instead of starting it again (engine/walk.rs).
struct Page {
    head: Vec<u8>,
    walk: ChainWalk,
    started: bool,
    revisions: Vec<RevisionInfo>,
    next: Option<Digest>,
}

impl Engine {
    /// `history({before?, limit?})` (engine.md §6): walks the store's current head chain.
    pub fn history(&self, req: HistoryRequest) -> Op<HistoryPage> {
        let tenant = self.tenant.clone();
        let mut page: Option<Page> = None;
        Op::new(move |eng, ctx| {
            let limit = match req.limit {
                None => 20,
                Some(l) if (1..=100).contains(&l) => l as usize,
                Some(_) => return Err(Error::Invalid(HISTORY_LIMIT.into()).into()),
            };
            let cursor = req
                .before
                .as_deref()
                .map(|c| decode_cursor(&tenant, c))
                .transpose()?;
            let Some(bytes) = ctx.head()? else {
                if cursor.is_some() {
                    return Err(Error::conflict(CURSOR_EXPIRED).into());
                }
                return Ok(Progress::Done(HistoryPage {
                    revisions: Vec::new(),
                    next: None,
                }));
            };
            if page.as_ref().is_none_or(|p| p.head != bytes) {
                let head = HeadRecord::decode(&bytes)?.ok_or_else(|| foreign_format(&tenant))?;
                page = Some(Page {
                    head: bytes,
                    walk: ChainWalk::new(head.revision, head.retained_from),
                    started: cursor.is_none(),
                    revisions: Vec::new(),
                    next: None,
                });
            }
            let Some(p) = page.as_mut() else {
                return Err(Error::Invalid("history lost its page".into()).into());
            };
            while p.next.is_none() {
                let Some((id, rev)) = p.walk.step(eng, ctx)? else {
                    break;
                };
                if !p.started {
                    p.started = Some(id) == cursor;
                    continue;
                }
                if p.revisions.len() == limit {
                    p.next = p
                        .revisions
                        .last()
                        .and_then(|r: &RevisionInfo| Digest::from_hex(&r.revision));
                    break;
                }
                p.revisions.push(RevisionInfo {
                    revision: id.to_hex(),
                    parent: rev.parent.map(|p| p.to_hex()),
                    snapshot: rev.snapshot.to_hex(),
                    created: rev.created.clone(),
                    concepts: rev.bundles.iter().map(|b| b.concepts).sum(),
                    bundles: rev.bundles.iter().map(|b| b.name.clone()).collect(),
                });
            }
            if !p.started {
                return Err(Error::conflict(CURSOR_EXPIRED).into());
            }
            Ok(Progress::Done(HistoryPage {
                revisions: std::mem::take(&mut p.revisions),
                next: p.next.map(|r| encode_cursor(&tenant, &r)),
            }))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64url_round_trips() {
        for n in 0..20 {
            let b: Vec<u8> = (0..n).map(|i| (i * 37 + 11) as u8).collect();
            let e = base64url(&b);
            assert!(!e.contains('='));
            assert_eq!(unbase64url(&e).unwrap(), b);
        }
        assert_eq!(base64url(b"\xfb\xff"), "-_8");
        assert_eq!(unbase64url("-_9"), None); // non-zero trailing bits
        assert_eq!(unbase64url("QQ=="), None);
        assert_eq!(unbase64url("Q"), None);
    }

    #[test]
    fn cursor_round_trip() {
        let d = Digest([7; 32]);
        let c = encode_cursor("acme", &d);
        assert_eq!(
            String::from_utf8(unbase64url(&c).unwrap()).unwrap(),
            format!("{{\"version\":1,\"tenant\":\"acme\",\"before\":\"{d}\"}}")
        );
        assert_eq!(decode_cursor("acme", &c).unwrap(), d);
        assert_eq!(
            decode_cursor("other", &c).unwrap_err().message(),
            BAD_CURSOR
        );
        assert_eq!(
            decode_cursor("acme", "!!").unwrap_err().message(),
            BAD_CURSOR
        );
        assert_eq!(
            decode_cursor("acme", &"A".repeat(513))
                .unwrap_err()
                .message(),
            BAD_CURSOR
        );
    }
}
