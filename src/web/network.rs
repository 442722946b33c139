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
    #[wasm_bindgen(js_name = onOnline)]
    fn on_online(f: &js_sys::Function) -> js_sys::Function;
}

/// Whether the runtime reports being online (always, where it cannot tell).
pub fn is_online() -> bool {
    is_online_js()
}

/// Waits until the runtime reports being online.
pub async fn when_online() {
    let _ = wasm_bindgen_futures::JsFuture::from(when_online_js()).await;
}

/// Calls a function on every `online` event until dropped.
#[derive(Debug)]
pub struct OnlineListener {
    stop: js_sys::Function,
    _closure: Closure<dyn FnMut()>,
}

impl OnlineListener {
    /// Starts listening.
    pub fn new(f: impl FnMut() + 'static) -> OnlineListener {
        let closure = Closure::<dyn FnMut()>::new(f);
        let stop = on_online(closure.as_ref().unchecked_ref());
        OnlineListener {
            stop,
            _closure: closure,
        }
    }
}

impl Drop for OnlineListener {
    fn drop(&mut self) {
        let _ = self.stop.call0(&JsValue::NULL);
    }
}
