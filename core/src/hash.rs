//! SHA-256 digests and their hex form (docs/README.md §3: 64 lowercase hex characters).
//!
//! What is hashed is decided here and by the callers, always; how is SHA-256 itself. A host
//! whose own SHA-256 is much faster than the module's (Node's `crypto` uses the CPU's SHA
//! instructions, which WebAssembly does not have) may supply it once with
//! [`set_host_sha256`]: it is then used for inputs of at least [`HOST_MIN`] bytes, many at a
//! time where the caller has many ([`sha256_many`]). A digest is the same bytes either way
//! (docs/js.md §1.4); without a host (native, browsers) the `sha2` crate computes them.

use sha2::{Digest as _, Sha256};
use std::sync::OnceLock;

/// A raw SHA-256 digest.
pub type Digest = [u8; 32];

/// A host's SHA-256: `out[i]` must become the SHA-256 of `inputs[i]` (both of one length).
/// It returns false when it could not hash them (they are then hashed here).
pub type HostSha256 = fn(inputs: &[&[u8]], out: &mut [Digest]) -> bool;

static HOST: OnceLock<HostSha256> = OnceLock::new();

/// Inputs shorter than this are hashed here even with a host: a call out costs about as
/// much as hashing this many bytes without SHA instructions.
pub const HOST_MIN: usize = 512;

/// How many bytes one call to the host covers at most ([`sha256_many`]).
const HOST_BATCH_BYTES: usize = 4 << 20;

/// Makes `f` the SHA-256 of every later digest of [`HOST_MIN`] bytes or more. Only the
/// first call takes effect (the primitive cannot change under a running engine); it says
/// whether this one did.
pub fn set_host_sha256(f: HostSha256) -> bool {
    HOST.set(f).is_ok()
}

/// Whether a host supplies SHA-256 ([`set_host_sha256`]).
pub fn host_sha256() -> bool {
    HOST.get().is_some()
}

/// The source hash of a document: the SHA-256 of its exact UTF-8 bytes, BOM and CRLF
/// included (engine.md §2.1), as 64 lowercase hex characters.
pub fn source_hash(text: &str) -> String {
    hex(&sha256(text.as_bytes()))
}

/// The SHA-256 of `bytes`.
pub fn sha256(bytes: &[u8]) -> Digest {
    if bytes.len() >= HOST_MIN {
        if let Some(host) = HOST.get() {
            let mut out = [[0u8; 32]];
            if host(&[bytes], &mut out) {
                return out[0];
            }
        }
    }
    Sha256::digest(bytes).into()
}

/// The SHA-256 of each of `inputs`, in their order: with a host, the long ones in few calls
/// to it; without one, on every core with the `parallel` feature (`par::map`).
pub fn sha256_many(inputs: &[&[u8]]) -> Vec<Digest> {
    let Some(host) = HOST.get() else {
        return crate::par::map(inputs, |b| Sha256::digest(b).into());
    };
    let mut out = vec![[0u8; 32]; inputs.len()];
    // The long inputs, gathered into calls of about HOST_BATCH_BYTES each.
    let mut batch: Vec<&[u8]> = Vec::new();
    let mut at: Vec<usize> = Vec::new();
    let mut bytes = 0;
    let mut digests: Vec<Digest> = Vec::new();
    let mut flush = |batch: &mut Vec<&[u8]>, at: &mut Vec<usize>, out: &mut [Digest]| {
        digests.clear();
        digests.resize(batch.len(), [0; 32]);
        if !host(batch, &mut digests) {
            for (d, b) in digests.iter_mut().zip(batch.iter()) {
                *d = Sha256::digest(b).into();
            }
        }
        for (&i, d) in at.iter().zip(&digests) {
            out[i] = *d;
        }
        batch.clear();
        at.clear();
    };
    for (i, b) in inputs.iter().enumerate() {
        if b.len() < HOST_MIN {
            out[i] = Sha256::digest(b).into();
            continue;
        }
        batch.push(b);
        at.push(i);
        bytes += b.len();
        if bytes >= HOST_BATCH_BYTES {
            flush(&mut batch, &mut at, &mut out);
            bytes = 0;
        }
    }
    if !batch.is_empty() {
        flush(&mut batch, &mut at, &mut out);
    }
    out
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

/// Sets the tests' host SHA-256 (`tests::test_host`): the crate's own, refusing any call
/// that holds an input starting with 0xff. Tests of other modules call it to run their
/// digests through the host path.
#[cfg(test)]
pub(crate) fn use_test_host() {
    set_host_sha256(tests::test_host);
    assert!(host_sha256());
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

    /// The shortest input the test host was handed, and how many it hashed.
    static SHORTEST: std::sync::atomic::AtomicUsize =
        std::sync::atomic::AtomicUsize::new(usize::MAX);
    static HOSTED: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

    /// A host's SHA-256 for the test: the crate's own, except that it refuses any call that
    /// holds an input starting with 0xff (which must then be hashed here all the same).
    pub(super) fn test_host(inputs: &[&[u8]], out: &mut [Digest]) -> bool {
        use std::sync::atomic::Ordering::Relaxed;
        if inputs.iter().any(|b| b.first() == Some(&0xff)) {
            return false;
        }
        for (d, b) in out.iter_mut().zip(inputs) {
            SHORTEST.fetch_min(b.len(), Relaxed);
            HOSTED.fetch_add(1, Relaxed);
            *d = Sha256::digest(b).into();
        }
        true
    }

    #[test]
    fn a_host_sha256_gives_the_same_digests() {
        use std::sync::atomic::Ordering::Relaxed;
        // Other tests of this binary may run with the host on too: their digests (and the
        // snapshot goldens) must come out the same, which they check themselves.
        use_test_host();
        let long = vec![7u8; HOST_MIN];
        let mut refused = vec![0u8; 3 * HOST_MIN];
        refused[0] = 0xff;
        let big = vec![1u8; HOST_BATCH_BYTES + 1];
        // `long` and `big` make one call (it reaches HOST_BATCH_BYTES), `refused` the next.
        let inputs: Vec<&[u8]> = vec![b"abc", &long, b"", &big, &refused, &long[1..]];
        let got = sha256_many(&inputs);
        let want: Vec<Digest> = inputs.iter().map(|b| Sha256::digest(b).into()).collect();
        assert_eq!(got, want);
        assert_eq!(
            hex(&got[0]),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
        assert_eq!(sha256(&long), want[1]);
        assert_eq!(sha256(&refused), want[4]);
        assert!(
            HOSTED.load(Relaxed) >= 2,
            "the long inputs went to the host"
        );
        assert!(
            SHORTEST.load(Relaxed) >= HOST_MIN,
            "no short input went to the host"
        );
    }
}
