//! SHA-1, for payload fingerprints only (identity of a payload, not
//! security), written as one loop over the 80 rounds: the module is
//! downloaded on every cold load, and the unrolled compression function of
//! the crate this replaced was 3.4 KB of its code. Checked natively against
//! that crate (`sha1_smol`, a dev-dependency now) and the FIPS 180 vectors.

const K: [u32; 4] = [0x5A82_7999, 0x6ED9_EBA1, 0x8F1B_BCDC, 0xCA62_C1D6];

/// The SHA-1 digest of `data`.
pub(crate) fn sha1(data: &[u8]) -> [u8; 20] {
    let mut state = [
        0x6745_2301u32,
        0xEFCD_AB89,
        0x98BA_DCFE,
        0x1032_5476,
        0xC3D2_E1F0,
    ];
    let mut blocks = data.chunks_exact(64);
    for block in &mut blocks {
        compress(&mut state, block);
    }
    // The tail, the 0x80 marker and the length in bits: one block or two.
    let tail = blocks.remainder();
    let mut last = [0u8; 128];
    last[..tail.len()].copy_from_slice(tail);
    last[tail.len()] = 0x80;
    let end = if tail.len() < 56 { 64 } else { 128 };
    last[end - 8..end].copy_from_slice(&((data.len() as u64) << 3).to_be_bytes());
    for block in last[..end].chunks_exact(64) {
        compress(&mut state, block);
    }
    let mut digest = [0u8; 20];
    for (out, word) in digest.chunks_exact_mut(4).zip(state) {
        out.copy_from_slice(&word.to_be_bytes());
    }
    digest
}

/// Compiled for speed in the shipped module, whose code is otherwise built
/// for size (`--cfg wow_release`, scripts/release-toolchain.sh): a 900 KB
/// body's fingerprint took 8.5 to 11.6 ms of main thread, now about 6.2, and
/// the module is no larger.
#[cfg_attr(wow_release, optimize(speed))]
fn compress(state: &mut [u32; 5], block: &[u8]) {
    let mut w = [0u32; 80];
    for (i, bytes) in block.chunks_exact(4).enumerate() {
        w[i] = u32::from_be_bytes([bytes[0], bytes[1], bytes[2], bytes[3]]);
    }
    for i in 16..80 {
        w[i] = (w[i - 3] ^ w[i - 8] ^ w[i - 14] ^ w[i - 16]).rotate_left(1);
    }
    let [mut a, mut b, mut c, mut d, mut e] = *state;
    for (i, word) in w.into_iter().enumerate() {
        let f = match i / 20 {
            0 => (b & c) | (!b & d),
            2 => (b & c) | (b & d) | (c & d),
            _ => b ^ c ^ d,
        };
        let t = a
            .rotate_left(5)
            .wrapping_add(f)
            .wrapping_add(e)
            .wrapping_add(K[i / 20])
            .wrapping_add(word);
        e = d;
        d = c;
        c = b.rotate_left(30);
        b = a;
        a = t;
    }
    for (s, v) in state.iter_mut().zip([a, b, c, d, e]) {
        *s = s.wrapping_add(v);
    }
}

#[cfg(test)]
mod tests {
    use super::sha1;

    fn hex(d: [u8; 20]) -> String {
        d.iter().map(|b| format!("{b:02x}")).collect()
    }

    #[test]
    fn the_standard_vectors() {
        assert_eq!(hex(sha1(b"")), "da39a3ee5e6b4b0d3255bfef95601890afd80709");
        assert_eq!(
            hex(sha1(b"abc")),
            "a9993e364706816aba3e25717850c26c9cd0d89d"
        );
        assert_eq!(
            hex(sha1(
                b"abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"
            )),
            "84983e441c3bd26ebaae4aa1f95129e5e54670f1"
        );
        assert_eq!(
            hex(sha1(&vec![b'a'; 1_000_000])),
            "34aa973cd4c4daa4f61eeb2bdbad27316534016f"
        );
    }

    #[test]
    fn every_length_around_the_block_edges_matches_the_crate() {
        let data: Vec<u8> = (0..300u32).map(|i| (i * 7 + 3) as u8).collect();
        for n in 0..data.len() {
            assert_eq!(
                sha1(&data[..n]),
                sha1_smol::Sha1::from(&data[..n]).digest().bytes(),
                "length {n}"
            );
        }
    }

    #[cfg(not(target_arch = "wasm32"))]
    proptest::proptest! {
        #[test]
        fn any_bytes_match_the_crate(data in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..2000)) {
            proptest::prop_assert_eq!(sha1(&data), sha1_smol::Sha1::from(&data).digest().bytes());
        }
    }
}
