//! A client's channels (BroadcastChannel): its intents' announcements,
//! which other tabs, `subscribe` and queued callers hear, and the history
//! probe's word between tabs. What is heard calls back the executor (by
//! its id and a tag), like every other wait of the module.

use std::cell::RefCell;

use wasm_bindgen::prelude::*;

#[wasm_bindgen(module = "/src/web/executor.js")]
extern "C" {
    #[wasm_bindgen(js_name = channelOpen)]
    fn channel_open(name: &str, of: &JsValue) -> JsValue;
    #[wasm_bindgen(js_name = channelAnnounce)]
    fn channel_announce(channel: &JsValue, message: &str);
    #[wasm_bindgen(js_name = channelListen)]
    fn channel_listen(
        name: &str,
        listener: &js_sys::Function,
        background: bool,
        of: &JsValue,
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

/// A client's voices and ears, closed with its holdings.
pub struct Channels {
    namespace: String,
    /// The client's holdings (src/web/held.js).
    of: JsValue,
    intents: JsValue,
    history: JsValue,
    /// Stops the intents' ear while a queued caller listens (the probe's
    /// ear is stopped with the holdings).
    ear: RefCell<Option<js_sys::Function>>,
}

impl Channels {
    /// Opens the namespace's channels; the probe's ear calls back
    /// `f(id, heard, true, message)` (it never keeps a server process alive).
    pub fn open(
        namespace: &str,
        f: &js_sys::Function,
        id: u32,
        heard: u32,
        of: &JsValue,
    ) -> Channels {
        let name = history_channel_name(namespace);
        channel_listen(&name, &bind(f, id, heard), true, of);
        Channels {
            namespace: namespace.to_owned(),
            of: of.clone(),
            intents: channel_open(&channel_name(namespace), of),
            history: channel_open(&name, of),
            ear: RefCell::default(),
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
        let mut ear = self.ear.borrow_mut();
        if let Some(stop) = ear.take() {
            let _ = stop.call0(&JsValue::NULL);
        }
        if on {
            let name = channel_name(&self.namespace);
            *ear = Some(channel_listen(&name, &bind(f, id, tag), true, &self.of));
        }
    }
}

/// Announces `record` at `revision` on its namespace's channel, as the
/// engine does (what other contexts receive; the contract's tests).
pub fn announce_record(record: &crate::core::journal::IntentRecord, revision: u64) {
    let channel = channel_open(&channel_name(&record.namespace), &JsValue::UNDEFINED);
    channel_announce(
        &channel,
        &crate::core::engine::events::announcement(record, revision),
    );
}
