//! One test attribute for both targets: `#[test]` natively, and
//! `#[wasm_bindgen_test]` on wasm32, so every core test also runs in
//! headless Chromium and in Node.

#[cfg(not(target_arch = "wasm32"))]
pub use ::core::prelude::v1::test;
#[cfg(target_arch = "wasm32")]
pub use wasm_bindgen_test::wasm_bindgen_test as test;
