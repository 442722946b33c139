//! Randomness from `crypto.getRandomValues`: requestIds, jitter seeds and
//! consumer owners, with no RNG crate in the module.

use wasm_bindgen::prelude::*;

use crate::core::journal::RandomSource;

#[wasm_bindgen(module = "/src/web/runtime.js")]
extern "C" {
    #[wasm_bindgen(js_name = randomBytes, catch)]
    fn random_bytes(n: u32) -> Result<js_sys::Uint8Array, JsValue>;
}

/// Randomness from `crypto.getRandomValues` (browsers, workers, Node ≥ 19).
#[derive(Debug, Default)]
pub struct CryptoRandom;

impl RandomSource for CryptoRandom {
    fn fill(&mut self, buf: &mut [u8]) {
        match random_bytes(buf.len() as u32) {
            Ok(bytes) => bytes.copy_to(buf),
            // No Web Crypto: fall back to Math.random (ids stay unique in practice).
            Err(_) => buf
                .iter_mut()
                .for_each(|b| *b = (js_sys::Math::random() * 256.0) as u8),
        }
    }
}

/// A random u64 (jitter seeds).
pub fn random_u64() -> u64 {
    let mut b = [0u8; 8];
    CryptoRandom.fill(&mut b);
    u64::from_le_bytes(b)
}
