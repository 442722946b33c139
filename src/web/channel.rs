//! State announcements to other tabs and workers (BroadcastChannel): what
//! the demo and other tabs listen to. Its own file, so an app that only
//! consumes (the idempotent consumer) does not download it.

use wasm_bindgen::prelude::*;

#[wasm_bindgen(module = "/src/web/channel.js")]
extern "C" {
    #[wasm_bindgen(js_name = channelOpen)]
    fn channel_open(name: &str) -> JsValue;
    #[wasm_bindgen(js_name = channelAnnounce)]
    fn channel_announce(channel: &JsValue, intent_id: &str, state: &str, revision: f64);
    #[wasm_bindgen(js_name = channelClose)]
    fn channel_close(channel: &JsValue);
}

/// Announces intent changes to other tabs of the same origin.
#[derive(Debug)]
pub struct Announcer {
    raw: JsValue,
}

impl Announcer {
    /// Opens the channel of `namespace` (a no-op where BroadcastChannel is missing).
    pub fn open(namespace: &str) -> Announcer {
        Announcer {
            raw: channel_open(&format!("wow-command-client/{namespace}")),
        }
    }

    /// Announces an intent's state, `{ intentId, state, revision }`, once
    /// the current task's work is done (after a send it precedes).
    pub fn announce(&self, intent_id: &str, state: &str, revision: u64) {
        channel_announce(&self.raw, intent_id, state, revision as f64);
    }
}

impl Drop for Announcer {
    fn drop(&mut self) {
        channel_close(&self.raw);
    }
}
