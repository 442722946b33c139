//! Whether the runtime is online (`navigator.onLine` and its `online`
//! event): while it is offline, no send or history query is made, so no
//! retry or confirmation budget is spent on a network that is not there.

use wasm_bindgen::prelude::*;

#[wasm_bindgen(module = "/src/web/network.js")]
extern "C" {
    #[wasm_bindgen(js_name = isOnline)]
    fn is_online_js() -> bool;
    #[wasm_bindgen(js_name = whenOnline)]
    fn when_online_js() -> js_sys::Promise;
    #[wasm_bindgen(js_name = onWake)]
    fn on_wake(f: &js_sys::Function, visible: bool) -> js_sys::Function;
}

/// Whether the runtime reports being online (always, where it cannot tell).
pub fn is_online() -> bool {
    is_online_js()
}

/// Waits until the runtime reports being online.
pub async fn when_online() {
    let _ = wasm_bindgen_futures::JsFuture::from(when_online_js()).await;
}

/// Calls a function on every `online` event, or each time the page becomes
/// visible again, until dropped.
#[derive(Debug)]
pub struct WakeListener {
    stop: js_sys::Function,
    _closure: Closure<dyn FnMut()>,
}

impl WakeListener {
    /// Starts listening for `online` (`visible`: for the page becoming visible).
    pub fn new(visible: bool, f: impl FnMut() + 'static) -> WakeListener {
        let closure = Closure::<dyn FnMut()>::new(f);
        let stop = on_wake(closure.as_ref().unchecked_ref(), visible);
        WakeListener {
            stop,
            _closure: closure,
        }
    }
}

impl Drop for WakeListener {
    fn drop(&mut self) {
        let _ = self.stop.call0(&JsValue::NULL);
    }
}
