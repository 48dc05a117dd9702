//! `sslmode` and TLS (`docs/postgres.md`, "TLS"): the modes of libpq, on rustls.
//!
//! - `disable`: plain TCP.
//! - `prefer` (the default, as in libpq) and `require`: TLS (`prefer` falls back to plain
//!   TCP when the server offers none), without checking the certificate, as libpq does
//!   when it has no root certificate. These protect against eavesdropping, not against an
//!   impostor.
//! - `verify-full`: TLS, the certificate chain checked against `sslrootcert=<file>` (PEM) or
//!   the system's roots, and the host name checked against the certificate.
//! - `verify-ca` and `allow` are refused with a message naming the modes above.

use langonrock_core::Error;
use postgres::config::SslMode;
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::pki_types::pem::PemObject as _;
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{ClientConfig, DigitallySignedStruct, RootCertStore, SignatureScheme};
use std::sync::Arc;
use tokio_postgres_rustls::MakeRustlsConnect;

/// What the DSN asked for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct TlsChoice {
    /// The mode handed to the driver (`disable`, `prefer` or `require`).
    pub(crate) mode: SslMode,
    /// Whether the certificate is checked (`verify-full`).
    pub(crate) verify: bool,
    /// `sslrootcert`: the PEM file of the roots to trust, for `verify-full`.
    pub(crate) root_cert: Option<String>,
}

/// Takes `sslmode` and `sslrootcert` out of the query of `url` (the driver knows neither
/// `verify-full` nor `sslrootcert`) and returns the rest of the URL with the choice.
pub(crate) fn take_tls_params(url: &str) -> Result<(String, TlsChoice), Error> {
    let (head, query) = match url.find('?') {
        Some(q) => (&url[..q], &url[q + 1..]),
        None => (url, ""),
    };
    let mut mode = "prefer".to_string();
    let mut root_cert = None;
    let mut kept = Vec::new();
    for pair in query.split('&').filter(|p| !p.is_empty()) {
        let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
        match k {
            "sslmode" => mode = decode(v),
            "sslrootcert" => root_cert = Some(decode(v)),
            _ => kept.push(pair),
        }
    }
    let (mode, verify) = match mode.as_str() {
        "disable" => (SslMode::Disable, false),
        "prefer" => (SslMode::Prefer, false),
        "require" => (SslMode::Require, false),
        "verify-full" => (SslMode::Require, true),
        other => {
            return Err(Error::Invalid(format!(
                "unsupported sslmode \"{other}\": use disable, prefer, require or verify-full"
            )))
        }
    };
    let rest = if kept.is_empty() {
        head.to_string()
    } else {
        format!("{head}?{}", kept.join("&"))
    };
    Ok((
        rest,
        TlsChoice {
            mode,
            verify,
            root_cert,
        },
    ))
}

fn decode(v: &str) -> String {
    // Parameter values here are plain words or file paths; `%xx` escapes are decoded.
    let b = v.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' {
            if let Some(x) = v
                .get(i + 1..i + 3)
                .and_then(|h| u8::from_str_radix(h, 16).ok())
            {
                out.push(x);
                i += 3;
                continue;
            }
        }
        out.push(b[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// The TLS connector for `choice`.
pub(crate) fn connector(choice: &TlsChoice) -> Result<MakeRustlsConnect, Error> {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let builder = ClientConfig::builder_with_provider(provider.clone())
        .with_safe_default_protocol_versions()
        .map_err(|e| Error::Store(format!("cannot set up tls: {e}")))?;
    let config = if choice.verify {
        let mut roots = RootCertStore::empty();
        match &choice.root_cert {
            Some(file) => {
                let certs = CertificateDer::pem_file_iter(file)
                    .and_then(|it| it.collect::<Result<Vec<_>, _>>())
                    .map_err(|e| {
                        Error::Invalid(format!(
                            "cannot read sslrootcert \"{file}\": {e}: give a PEM file of the certificates to trust"
                        ))
                    })?;
                roots.add_parsable_certificates(certs);
            }
            None => {
                roots.add_parsable_certificates(rustls_native_certs::load_native_certs().certs);
            }
        }
        if roots.is_empty() {
            return Err(Error::Invalid(
                "sslmode=verify-full found no root certificate: pass sslrootcert=<PEM file>".into(),
            ));
        }
        builder.with_root_certificates(roots).with_no_client_auth()
    } else {
        builder
            .dangerous()
            .with_custom_certificate_verifier(Arc::new(Unverified(provider)))
            .with_no_client_auth()
    };
    Ok(MakeRustlsConnect::new(config))
}

/// `prefer` and `require`: the handshake's signatures are checked (so the session key is
/// bound to the certificate presented), but not who issued that certificate.
#[derive(Debug)]
struct Unverified(Arc<rustls::crypto::CryptoProvider>);

impl ServerCertVerifier for Unverified {
    fn verify_server_cert(
        &self,
        _end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        _ocsp_response: &[u8],
        _now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        Ok(ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls12_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.0.signature_verification_algorithms.supported_schemes()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn modes() {
        let (url, c) = take_tls_params(
            "postgres://h/db?sslmode=verify-full&sslrootcert=%2Ftmp%2Fca.pem&application_name=x",
        )
        .unwrap();
        assert_eq!(url, "postgres://h/db?application_name=x");
        assert_eq!(
            c,
            TlsChoice {
                mode: SslMode::Require,
                verify: true,
                root_cert: Some("/tmp/ca.pem".into())
            }
        );
        let (url, c) = take_tls_params("postgres://h/db").unwrap();
        assert_eq!(
            (url.as_str(), c.mode, c.verify),
            ("postgres://h/db", SslMode::Prefer, false)
        );
        assert_eq!(
            take_tls_params("postgres://h/db?sslmode=verify-ca")
                .unwrap_err()
                .message(),
            "unsupported sslmode \"verify-ca\": use disable, prefer, require or verify-full"
        );
        let missing = TlsChoice {
            mode: SslMode::Require,
            verify: true,
            root_cert: Some("/nonexistent/ca.pem".into()),
        };
        assert!(connector(&missing)
            .err()
            .unwrap()
            .message()
            .starts_with("cannot read sslrootcert \"/nonexistent/ca.pem\": "));
    }
}
