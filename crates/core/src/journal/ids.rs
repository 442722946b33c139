//! requestIds, intent ids and client-side aggregate ids.
//!
//! One requestId is one business intent (DESIGN rule 1). It is either random
//! (UUIDv7 by default, v4 on request), minted once and persisted before the
//! first send, or derived as UUIDv5 from the caller's business key, so the
//! same operation gets the same requestId even if local storage was lost.
//! Randomness and time are injected: the core never reads a clock or an RNG.

use uuid::{Builder, Uuid};

/// Where random bytes come from (the browser's `crypto.getRandomValues`,
/// or a seeded source in tests).
pub trait RandomSource {
    /// Fills `buf` with random bytes.
    fn fill(&mut self, buf: &mut [u8]);
}

/// A deterministic source for tests and simulations (splitmix64).
#[derive(Clone, Debug)]
pub struct SeededRandom(u64);

impl SeededRandom {
    /// A source that replays the same bytes for the same seed.
    pub fn new(seed: u64) -> SeededRandom {
        SeededRandom(seed)
    }
}

impl RandomSource for SeededRandom {
    fn fill(&mut self, buf: &mut [u8]) {
        for chunk in buf.chunks_mut(8) {
            self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
            let mut z = self.0;
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            z ^= z >> 31;
            chunk.copy_from_slice(&z.to_le_bytes()[..chunk.len()]);
        }
    }
}

/// How a new intent's requestId is minted.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum RequestIdPolicy {
    /// Random, time-ordered (UUIDv7): sorts by creation in logs and stores.
    #[default]
    RandomV7,
    /// Random (UUIDv4).
    RandomV4,
}

/// The namespace of every derived id: UUIDv5(URL, this project's name).
fn project_namespace() -> Uuid {
    v5(&Uuid::NAMESPACE_URL, b"urn:wow-command-client")
}

/// A random id under `policy`, at `now_ms`.
pub(crate) fn random_id(
    policy: RequestIdPolicy,
    now_ms: u64,
    random: &mut dyn RandomSource,
) -> String {
    match policy {
        RequestIdPolicy::RandomV7 => {
            let mut bytes = [0u8; 10];
            random.fill(&mut bytes);
            hyphenated(Builder::from_unix_timestamp_millis(now_ms, &bytes).into_uuid())
        }
        RequestIdPolicy::RandomV4 => {
            let mut bytes = [0u8; 16];
            random.fill(&mut bytes);
            hyphenated(Builder::from_random_bytes(bytes).into_uuid())
        }
    }
}

/// The requestId of the intent named `intent_key` in `namespace`: UUIDv5,
/// the same on every device and after any loss of local storage.
pub(crate) fn derived_request_id(namespace: &str, intent_key: &str) -> String {
    let mut name = Vec::with_capacity(namespace.len() + intent_key.len() + 1);
    name.extend_from_slice(namespace.as_bytes());
    // A separator that cannot occur in either part's UTF-8.
    name.push(0xFF);
    name.extend_from_slice(intent_key.as_bytes());
    hyphenated(v5(&project_namespace(), &name))
}

/// UUIDv5 (RFC 9562): the SHA-1 of the namespace and the name, with the
/// version and variant bits set; what `Uuid::new_v5` returns (tested).
fn v5(namespace: &Uuid, name: &[u8]) -> Uuid {
    let mut input = Vec::with_capacity(16 + name.len());
    input.extend_from_slice(namespace.as_bytes());
    input.extend_from_slice(name);
    let digest = super::sha1::sha1(&input);
    let mut bytes = [0u8; 16];
    bytes.copy_from_slice(&digest[..16]);
    Builder::from_sha1_bytes(bytes).into_uuid()
}

/// What `to_string` writes (lower-case, hyphenated), without the `Display`
/// that would link `core::fmt` into the module.
fn hyphenated(id: Uuid) -> String {
    let mut out = String::with_capacity(36);
    for (i, &byte) in id.as_bytes().iter().enumerate() {
        // Groups of 4, 2, 2, 2 and 6 bytes.
        if matches!(i, 4 | 6 | 8 | 10) {
            out.push('-');
        }
        crate::text::push_hex(&mut out, u64::from(byte), 2, false);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::test_support::test;

    #[test]
    fn the_hyphenated_text_is_the_uuid_crates() {
        let mut rng = SeededRandom::new(5);
        let mut ids = vec![0, u128::MAX, 1 << 96, (1 << 64) - 1];
        for _ in 0..2_000 {
            let mut bytes = [0u8; 16];
            rng.fill(&mut bytes);
            ids.push(u128::from_le_bytes(bytes));
        }
        for n in ids {
            let id = Uuid::from_u128(n);
            assert_eq!(hyphenated(id), id.to_string());
        }
    }

    #[test]
    fn v5_is_what_the_uuid_crate_derives() {
        for (namespace, name) in [
            (Uuid::NAMESPACE_URL, &b"urn:wow-command-client"[..]),
            (Uuid::NAMESPACE_DNS, b"example.org"),
            (project_namespace(), b""),
            (project_namespace(), &[0xFF; 200][..]),
        ] {
            assert_eq!(v5(&namespace, name), Uuid::new_v5(&namespace, name));
        }
        assert_eq!(
            derived_request_id("ns", "order-1"),
            Uuid::new_v5(
                &project_namespace(),
                &[&b"ns"[..], &[0xFF], b"order-1"].concat()
            )
            .to_string()
        );
    }

    #[test]
    fn v7_ids_carry_the_time_and_differ() {
        let mut rng = SeededRandom::new(1);
        let a = random_id(RequestIdPolicy::RandomV7, 1_764_297_052_692, &mut rng);
        let b = random_id(RequestIdPolicy::RandomV7, 1_764_297_052_692, &mut rng);
        assert_ne!(a, b);
        let uuid = Uuid::parse_str(&a).unwrap();
        assert_eq!(uuid.get_version_num(), 7);
        // The first 48 bits are the millisecond timestamp.
        let millis = u64::from_str_radix(&format!("{}{}", &a[..8], &a[9..13]), 16).unwrap();
        assert_eq!(millis, 1_764_297_052_692);
        let later = random_id(RequestIdPolicy::RandomV7, 1_764_297_052_693, &mut rng);
        assert!(later > a);
    }

    #[test]
    fn v4_ids_are_random_and_replay_with_the_seed() {
        let a = random_id(RequestIdPolicy::RandomV4, 0, &mut SeededRandom::new(9));
        let b = random_id(RequestIdPolicy::RandomV4, 0, &mut SeededRandom::new(9));
        assert_eq!(a, b);
        assert_eq!(Uuid::parse_str(&a).unwrap().get_version_num(), 4);
        assert_ne!(
            a,
            random_id(RequestIdPolicy::RandomV4, 0, &mut SeededRandom::new(10))
        );
    }

    #[test]
    fn derived_ids_are_stable_and_separate_namespaces_and_keys() {
        let a = derived_request_id("tenant-a", "order-42/pay");
        assert_eq!(a, derived_request_id("tenant-a", "order-42/pay"));
        assert_eq!(Uuid::parse_str(&a).unwrap().get_version_num(), 5);
        assert_ne!(a, derived_request_id("tenant-b", "order-42/pay"));
        assert_ne!(a, derived_request_id("tenant-a", "order-43/pay"));
        // No ambiguity where the namespace ends and the key begins.
        assert_ne!(derived_request_id("ab", "c"), derived_request_id("a", "bc"));
    }
}
