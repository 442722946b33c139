//! State announcements to other tabs and workers (BroadcastChannel): what
//! the demo and other tabs listen to. Its own file, so an app that only
//! consumes (the idempotent consumer) does not download it.

use wasm_bindgen::prelude::*;

use crate::core::journal::IntentRecord;
use crate::core::protocol::{JsonOut, ObjectWriter};

/// The channel of a namespace's announcements.
pub fn channel_name(namespace: &str) -> String {
    let mut name = String::from("wow-command-client/");
    name.push_str(namespace);
    name
}

/// The channel of a namespace's history probe: its own, so that the
/// intents' announcements (several per send) never wake its listener.
pub fn history_channel_name(namespace: &str) -> String {
    let mut name = String::from("wow-command-client-history/");
    name.push_str(namespace);
    name
}

#[wasm_bindgen(module = "/src/web/channel.js")]
extern "C" {
    #[wasm_bindgen(js_name = channelOpen)]
    fn channel_open(name: &str) -> JsValue;
    #[wasm_bindgen(js_name = channelAnnounce)]
    fn channel_announce(channel: &JsValue, message: &str);
    #[wasm_bindgen(js_name = channelClose)]
    fn channel_close(channel: &JsValue);
    #[wasm_bindgen(js_name = channelWatch)]
    fn channel_watch(name: &str) -> JsValue;
    #[wasm_bindgen(js_name = channelNext)]
    fn channel_next(watch: &JsValue, a: &str, b: &str, ms: f64) -> js_sys::Promise;
    #[wasm_bindgen(js_name = channelUnwatch)]
    fn channel_unwatch(watch: &JsValue);
    #[wasm_bindgen(js_name = channelListen)]
    fn channel_listen(
        name: &str,
        listener: &js_sys::Function,
        background: bool,
    ) -> js_sys::Function;
}

/// Hears every message on a namespace's channel (this runtime's clients,
/// other tabs and workers) until dropped; it never keeps a Node.js process
/// alive.
pub struct Listener {
    stop: js_sys::Function,
    _closure: Closure<dyn FnMut(JsValue)>,
}

impl Listener {
    /// Starts hearing the channel `name`.
    pub fn open(name: &str, f: impl FnMut(JsValue) + 'static) -> Listener {
        let closure = Closure::<dyn FnMut(JsValue)>::new(f);
        let stop = channel_listen(name, closure.as_ref().unchecked_ref(), true);
        Listener {
            stop,
            _closure: closure,
        }
    }
}

impl Drop for Listener {
    fn drop(&mut self) {
        let _ = self.stop.call0(&JsValue::NULL);
    }
}

impl std::fmt::Debug for Listener {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Listener")
    }
}

/// The intents of a namespace announced by anyone, heard from when it is
/// opened until it is dropped: what a queued intent waits on.
#[derive(Debug)]
pub struct Watch(JsValue);

impl Watch {
    /// Starts hearing `namespace`'s announcements.
    pub fn open(namespace: &str) -> Watch {
        Watch(channel_watch(&channel_name(namespace)))
    }

    /// Waits until intent `a` or `b` has been announced since the last
    /// wait ended (at once if it was), or `ms` passed (a runtime without
    /// BroadcastChannel hears only its own clients: the time bounds it).
    pub async fn next(&self, a: &str, b: &str, ms: i64) {
        let promise = channel_next(&self.0, a, b, ms.max(0) as f64);
        let _ = wasm_bindgen_futures::JsFuture::from(promise).await;
    }
}

impl Drop for Watch {
    fn drop(&mut self) {
        channel_unwatch(&self.0);
    }
}

/// Announces intent changes to other tabs of the same origin.
#[derive(Debug)]
pub struct Announcer {
    raw: JsValue,
}

impl Announcer {
    /// Opens the channel of `namespace` (where BroadcastChannel is missing,
    /// only this runtime's subscribers hear it).
    pub fn open(namespace: &str) -> Announcer {
        Announcer::on(&channel_name(namespace))
    }

    /// Opens the channel `name`.
    pub fn on(name: &str) -> Announcer {
        Announcer {
            raw: channel_open(name),
        }
    }

    /// Posts `message` (JSON text) as it is, once the current task's work is done.
    pub fn post(&self, message: &str) {
        channel_announce(&self.raw, message);
    }

    /// Announces a record written at `revision`, once the current task's
    /// work is done (after a send it precedes): `{ intentId, state,
    /// revision }`, which tabs on every build read, and beside them the
    /// public fields of a version-1 intent event (`client.subscribe`).
    pub fn announce(&self, record: &IntentRecord, revision: u64) {
        let error_code = record
            .last_result
            .as_ref()
            .map(|r| r.error_code.as_str())
            .filter(|code| *code != "Ok")
            .map(str::to_owned);
        let mut message = JsonOut::new(crate::web::engine_number_text);
        ObjectWriter::new(&mut message)
            .put("intentId", &record.intent_id)
            .put("state", &record.state)
            .put("revision", &revision)
            .put("v", &1u32)
            .some("intentKey", &record.intent_key)
            .put("requestId", &record.request_id)
            .put("aggregate", &record.aggregate)
            .put("attempts", &(record.attempts.len() as u32))
            .some("appended", &record.appended)
            .some("reason", &record.reason)
            .some("errorCode", &error_code)
            .some("scope", &record.scope)
            .some("waitsFor", &record.waits_for)
            .put("at", &record.updated_at)
            .done();
        channel_announce(&self.raw, &message.text);
    }
}

impl Drop for Announcer {
    fn drop(&mut self) {
        channel_close(&self.raw);
    }
}
