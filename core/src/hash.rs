//! SHA-256 digests and their hex form (docs/README.md §3: 64 lowercase hex characters).

use sha2::{Digest as _, Sha256};

/// A raw SHA-256 digest.
pub type Digest = [u8; 32];

/// The source hash of a document: the SHA-256 of its exact UTF-8 bytes, BOM and CRLF
/// included (engine.md §2.1), as 64 lowercase hex characters.
pub fn source_hash(text: &str) -> String {
    hex(&sha256(text.as_bytes()))
}

/// The SHA-256 of `bytes`.
pub fn sha256(bytes: &[u8]) -> Digest {
    Sha256::digest(bytes).into()
}

/// Lowercase hex of `bytes`.
pub fn hex(bytes: &[u8]) -> String {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let mut out = String::with_capacity(bytes.len() * 2);
    for &b in bytes {
        out.push(char::from(HEX[usize::from(b >> 4)]));
        out.push(char::from(HEX[usize::from(b & 0x0f)]));
    }
    out
}

/// Whether `s` is a digest as the docs write it: exactly 64 lowercase hex characters.
pub fn is_hex_digest(s: &str) -> bool {
    s.len() == 64
        && s.bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_digests() {
        // FIPS 180-2 test vectors.
        assert_eq!(
            source_hash(""),
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
        );
        assert_eq!(
            source_hash("abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
        // BOM and CRLF are part of the bytes.
        assert_ne!(source_hash("\u{feff}a\r\n"), source_hash("a\n"));
        assert!(is_hex_digest(&source_hash("x")));
        assert!(!is_hex_digest("ABC"));
        assert!(!is_hex_digest(&"A".repeat(64)));
    }
}
