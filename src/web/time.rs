//! The one clock adaptor: the core takes time as a parameter, and this is
//! where the web layer reads it. Timers use `setTimeout`, present in
//! browsers, workers, edge runtimes and Node.

use wasm_bindgen::prelude::*;

#[wasm_bindgen(module = "/src/web/runtime.js")]
extern "C" {
    #[wasm_bindgen(js_name = sleepMs)]
    fn sleep_ms(ms: f64, idle: bool) -> js_sys::Promise;
}

/// Milliseconds since the epoch.
pub fn now() -> i64 {
    js_sys::Date::now() as i64
}

/// Waits `ms` milliseconds.
pub async fn sleep(ms: i64) {
    let _ = wasm_bindgen_futures::JsFuture::from(sleep_ms(ms as f64, false)).await;
}

/// Waits `ms` milliseconds for work no caller waits for: a Node.js process
/// with nothing else to do exits instead of waiting for it.
pub async fn idle(ms: i64) {
    let _ = wasm_bindgen_futures::JsFuture::from(sleep_ms(ms as f64, true)).await;
}
