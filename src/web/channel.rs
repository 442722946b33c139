//! A client's channels (BroadcastChannel): its intents' announcements,
//! which other tabs, `subscribe` and queued callers hear, and the history
//! probe's word between tabs. What is heard calls back the executor (by
//! its id and a tag), like every other wait of the module.

use std::cell::RefCell;

use wasm_bindgen::prelude::*;

#[wasm_bindgen(module = "/src/web/executor.js")]
extern "C" {
    #[wasm_bindgen(js_name = channelOpen)]
    fn channel_open(name: &str) -> JsValue;
    #[wasm_bindgen(js_name = channelAnnounce)]
    fn channel_announce(channel: &JsValue, message: &str);
    #[wasm_bindgen(js_name = channelClose)]
    fn channel_close(channel: &JsValue);
    #[wasm_bindgen(js_name = channelListen)]
    fn channel_listen(
        name: &str,
        listener: &js_sys::Function,
        background: bool,
    ) -> js_sys::Function;
}

#[wasm_bindgen(module = "/src/web/executor.js")]
extern "C" {
    /// `(value) => f(id, tag, true, value)`.
    pub fn bind(f: &js_sys::Function, id: u32, tag: u32) -> js_sys::Function;
}

/// The channel of a namespace's announcements.
pub fn channel_name(namespace: &str) -> String {
    crate::core::text::text!("wow-command-client/", namespace)
}

/// The channel of a namespace's history probe: its own, so that the
/// intents' announcements (several per send) never wake its listener.
fn history_channel_name(namespace: &str) -> String {
    crate::core::text::text!("wow-command-client-history/", namespace)
}

/// A client's voices and ears.
pub struct Channels {
    namespace: String,
    intents: JsValue,
    history: JsValue,
    /// Stops the probe's ear, and the intents' ear while a queued caller listens.
    ears: RefCell<(Option<js_sys::Function>, Option<js_sys::Function>)>,
}

impl Channels {
    /// Opens the namespace's channels; the probe's ear calls back
    /// `f(id, heard, true, message)` (it never keeps a server process alive).
    pub fn open(namespace: &str, f: &js_sys::Function, id: u32, heard: u32) -> Channels {
        let name = history_channel_name(namespace);
        let ear = channel_listen(&name, &bind(f, id, heard), true);
        Channels {
            namespace: namespace.to_owned(),
            intents: channel_open(&channel_name(namespace)),
            history: channel_open(&name),
            ears: RefCell::new((Some(ear), None)),
        }
    }

    /// Announces an intent's change (JSON text), once the current task's work is done.
    pub fn announce(&self, text: &str) {
        channel_announce(&self.intents, text);
    }

    /// Posts the probe's word (JSON text).
    pub fn post(&self, text: &str) {
        channel_announce(&self.history, text);
    }

    /// Hears the intents' announcements (`f(id, tag, true, message)`), or stops.
    pub fn listen(&self, on: bool, f: &js_sys::Function, id: u32, tag: u32) {
        let mut ears = self.ears.borrow_mut();
        if let Some(stop) = ears.1.take() {
            let _ = stop.call0(&JsValue::NULL);
        }
        if on {
            let name = channel_name(&self.namespace);
            ears.1 = Some(channel_listen(&name, &bind(f, id, tag), true));
        }
    }

    /// Closes them all.
    pub fn close(&self) {
        let mut ears = self.ears.borrow_mut();
        for stop in [ears.0.take(), ears.1.take()].into_iter().flatten() {
            let _ = stop.call0(&JsValue::NULL);
        }
        channel_close(&self.intents);
        channel_close(&self.history);
    }
}

/// Announces `record` at `revision` on its namespace's channel, as the
/// engine does (what other contexts receive; the contract's tests).
pub fn announce_record(record: &crate::core::journal::IntentRecord, revision: u64) {
    let channel = channel_open(&channel_name(&record.namespace));
    channel_announce(
        &channel,
        &crate::core::engine::events::announcement(record, revision),
    );
}
