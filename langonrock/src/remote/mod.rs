//! A connection to one tenant of a `langonrock serve` (docs/remote.md): the operations of a
//! local connection, each one request of the HTTP API, with the same results and the same
//! errors (rebuilt from the server's JSON error bodies by `langonrock_core::http_api`).

pub mod http;

use self::http::{Limits, Transport};
use langonrock_core::dsn::RemoteDsn;
use langonrock_core::engine::{
    DeleteResult, HistoryPage, HistoryRequest, RestoreRequest, RevisionResult, SourceContent,
    SourceEntry, WriteResult,
};
use langonrock_core::http_api::{self as wire, ManifestAnswer, OwnedSlice};
use langonrock_core::read::GetOptions;
use langonrock_core::search::SearchOptions;
use langonrock_core::snapshot::Snapshot;
use langonrock_core::Error;
use std::collections::HashMap;
use std::sync::Mutex;

/// The most manifests (one per bundle key) a connection keeps for revalidation.
const MAX_CACHED_MANIFESTS: usize = 64;

/// A remote connection. `Send + Sync`; calls from many threads run concurrently.
#[derive(Debug)]
pub struct Remote {
    dsn: RemoteDsn,
    prefix: String,
    http: Transport,
    /// Bundle key → (ETag, manifest text).
    manifests: Mutex<HashMap<Option<String>, (String, String)>>,
}

impl Remote {
    /// A connection to the server a remote DSN names, with the default [`Limits`]. Nothing is
    /// sent until the first call.
    pub fn open(dsn: &RemoteDsn) -> Result<Remote, Error> {
        Remote::open_with(dsn, Limits::default())
    }

    /// [`Remote::open`] with other limits.
    pub fn open_with(dsn: &RemoteDsn, limits: Limits) -> Result<Remote, Error> {
        Ok(Remote {
            prefix: dsn.prefix(),
            http: Transport::new(dsn, limits)?,
            dsn: dsn.clone(),
            manifests: Mutex::new(HashMap::new()),
        })
    }

    /// The DSN's tenant, when it names one (else the server takes it from the token).
    pub fn tenant(&self) -> Option<&str> {
        self.dsn.tenant.as_deref()
    }

    /// The server as messages name it: the socket path or the origin.
    pub fn server(&self) -> &str {
        self.http.server()
    }

    /// Sends one request of the HTTP API and reads its whole answer.
    pub fn send(&self, req: wire::Request) -> Result<http::Answer, Error> {
        self.http.send(req)
    }

    /// The request prefix: `/v1/<tenant>`, or `/v1` when the token names the tenant.
    pub fn prefix(&self) -> &str {
        &self.prefix
    }

    /// The manifest TSV (or one bundle's slice) rendered for the server's date. A cached
    /// copy is revalidated with its ETag and reused on 304.
    pub fn manifest(&self, bundle: Option<&str>) -> Result<String, Error> {
        let key = bundle.map(str::to_string);
        let cached = self
            .manifests
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(&key)
            .cloned();
        let answer = self.send(wire::manifest(
            &self.prefix,
            bundle,
            cached.as_ref().map(|(e, _)| e.as_str()),
        ))?;
        match wire::manifest_answer(&answer.response(), cached.as_ref().map(|(_, t)| t.as_str()))? {
            ManifestAnswer::Cached(text) => Ok(text),
            ManifestAnswer::Fresh { text, etag } => {
                if let Some(etag) = etag {
                    let mut m = self.manifests.lock().unwrap_or_else(|p| p.into_inner());
                    if m.len() >= MAX_CACHED_MANIFESTS && !m.contains_key(&key) {
                        m.clear();
                    }
                    m.insert(key, (etag, text.clone()));
                }
                Ok(text)
            }
        }
    }

    /// `{snapshot, concepts}`.
    pub fn snapshot(&self) -> Result<Snapshot, Error> {
        self.send(wire::snapshot(&self.prefix))?
            .response()
            .json(200)
    }

    /// The found ids and their slices, in result order.
    pub fn get<S: AsRef<str>>(
        &self,
        ids: &[S],
        opts: &GetOptions,
    ) -> Result<Vec<(String, OwnedSlice)>, Error> {
        let a = self.send(wire::get(&self.prefix, ids, opts))?;
        let r = a.response();
        r.expect(200)?;
        wire::get_answer(r.body).ok_or_else(|| wire::unexpected(r.status, r.body))
    }

    /// The search TSV.
    pub fn search(&self, query: &str, opts: &SearchOptions) -> Result<String, Error> {
        self.send(wire::search(&self.prefix, query, opts))?
            .response()
            .tsv(200)
    }

    /// Every document: `{bundle, path, hash, bytes, id?}`.
    pub fn list_source(&self) -> Result<Vec<SourceEntry>, Error> {
        self.send(wire::list_source(&self.prefix))?
            .response()
            .json(200)
    }

    /// One document's exact text and hash, or `None` when there is no such document.
    pub fn read_source(&self, bundle: &str, path: &str) -> Result<Option<SourceContent>, Error> {
        let a = self.send(wire::read_source(&self.prefix, bundle, path))?;
        Ok(wire::read_source_answer(&a.response())?
            .map(|(content, hash)| SourceContent { content, hash }))
    }

    /// `write`: creates without `replaces`, else replaces the version with that hash.
    pub fn write(
        &self,
        bundle: &str,
        path: &str,
        content: &str,
        replaces: Option<&str>,
    ) -> Result<WriteResult, Error> {
        self.send(wire::write(&self.prefix, bundle, path, content, replaces))?
            .response()
            .json(200)
    }

    /// `delete` of the version with hash `replaces`.
    pub fn delete(
        &self,
        bundle: &str,
        path: &str,
        replaces: Option<&str>,
    ) -> Result<DeleteResult, Error> {
        // The change is checked as a local delete checks it (a delete without `replaces`
        // included), so a refusal has the local text and sends nothing.
        let hash = replaces
            .map(langonrock_core::engine::request::parse_hash)
            .transpose();
        langonrock_core::engine::request::check_change("delete", bundle, path, None, hash)?;
        self.send(wire::delete(&self.prefix, bundle, path, replaces))?
            .response()
            .json(200)
    }

    /// `deleteBundle`.
    pub fn delete_bundle(&self, bundle: &str) -> Result<RevisionResult, Error> {
        self.send(wire::delete_bundle(&self.prefix, bundle))?
            .response()
            .json(200)
    }

    /// `transact` of a request as engine.md §5.1 shapes it.
    pub fn transact(&self, request: &serde_json::Value) -> Result<RevisionResult, Error> {
        self.send(wire::transact(&self.prefix, request))?
            .response()
            .json(200)
    }

    /// A page of `history`.
    pub fn history(&self, req: &HistoryRequest) -> Result<HistoryPage, Error> {
        self.send(wire::history(&self.prefix, req))?
            .response()
            .json(200)
    }

    /// `restore`.
    pub fn restore(&self, req: &RestoreRequest) -> Result<RevisionResult, Error> {
        self.send(wire::restore(&self.prefix, req))?
            .response()
            .json(200)
    }
}
