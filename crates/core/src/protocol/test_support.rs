//! One test attribute for both targets: `#[test]` natively, and
//! `#[wasm_bindgen_test]` on wasm32, so every core test also runs in
//! headless Chromium and in Node.

#[cfg(not(target_arch = "wasm32"))]
pub use ::core::prelude::v1::test;
#[cfg(target_arch = "wasm32")]
pub use wasm_bindgen_test::wasm_bindgen_test as test;

/// Drives a future that needs no real I/O (in-memory stores) to completion.
pub fn block_on<F: ::core::future::Future>(future: F) -> F::Output {
    use ::core::task::{Context, Poll, Waker};
    let mut cx = Context::from_waker(Waker::noop());
    let mut future = ::core::pin::pin!(future);
    for _ in 0..1_000 {
        if let Poll::Ready(out) = future.as_mut().poll(&mut cx) {
            return out;
        }
    }
    panic!("the future did not complete without I/O");
}
