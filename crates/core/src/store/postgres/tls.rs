//! TLS for Postgres connections, with libpq's `sslmode` meanings: `disable`
//! never encrypts; `prefer` (the default) encrypts when the server offers it;
//! `require` insists on encryption; neither checks the certificate — as libpq,
//! which only verifies for `verify-ca` / `verify-full`. Those two verify the
//! server against the Mozilla root set (webpki-roots) and its host name.

use std::sync::Arc;

use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::crypto::{verify_tls12_signature, verify_tls13_signature, CryptoProvider};
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{ClientConfig, DigitallySignedStruct, RootCertStore, SignatureScheme};
use tokio_postgres_rustls::MakeRustlsConnect;

/// The connector for a DSN; `verify` for `sslmode=verify-ca|verify-full`.
pub fn connector(verify: bool) -> MakeRustlsConnect {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let builder = ClientConfig::builder_with_provider(provider.clone())
        .with_safe_default_protocol_versions()
        .expect("ring supports the default TLS versions");
    let config = if verify {
        let roots = RootCertStore {
            roots: webpki_roots::TLS_SERVER_ROOTS.to_vec(),
        };
        builder.with_root_certificates(roots).with_no_client_auth()
    } else {
        builder
            .dangerous()
            .with_custom_certificate_verifier(Arc::new(EncryptOnly(provider)))
            .with_no_client_auth()
    };
    MakeRustlsConnect::new(config)
}

/// Accepts any server certificate (libpq's `prefer`/`require`), while still
/// checking that the handshake is signed by the key it presents.
#[derive(Debug)]
struct EncryptOnly(Arc<CryptoProvider>);

impl ServerCertVerifier for EncryptOnly {
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
        verify_tls12_signature(
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
        verify_tls13_signature(
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

/// libpq's `verify-ca` / `verify-full`, which the driver's parser does not
/// know: they become `require` plus certificate verification.
pub fn split_verification(dsn: &str) -> (String, bool) {
    let mut verify = false;
    let mut out = dsn.to_string();
    for mode in ["sslmode=verify-full", "sslmode=verify-ca"] {
        if out.contains(mode) {
            verify = true;
            out = out.replace(mode, "sslmode=require");
        }
    }
    (out, verify)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn verify_modes_become_require_with_verification() {
        assert_eq!(
            split_verification("postgres://u@h/db?sslmode=verify-full"),
            ("postgres://u@h/db?sslmode=require".to_string(), true)
        );
        assert_eq!(
            split_verification("host=h sslmode=verify-ca user=u"),
            ("host=h sslmode=require user=u".to_string(), true)
        );
        assert_eq!(
            split_verification("postgres://h/db?sslmode=require"),
            ("postgres://h/db?sslmode=require".to_string(), false)
        );
    }
}
