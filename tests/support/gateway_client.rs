//! The client against the test gateway, for the wasm tests that drive a
//! `WowClient` (tests/client_gateway.rs, and the browser-only ones in
//! tests/web_storage.rs): its options, the gateway's fault control, and
//! the gateway's own history as the independent check.

pub use super::unique;
pub use serde_json::{json, Value};
pub use wasm_bindgen::prelude::*;
pub use wasm_bindgen_futures::JsFuture;
pub use wow_command_client::js::WowClient;

#[wasm_bindgen(module = "/tests/support/client.js")]
extern "C" {
    pub fn collect(handle: &JsValue) -> js_sys::Promise;
    #[wasm_bindgen(js_name = addFault)]
    pub fn add_fault(base: &str, rule: &JsValue) -> js_sys::Promise;
    #[wasm_bindgen(js_name = storedStreams)]
    pub fn stored_streams(
        base: &str,
        resource: &str,
        aggregate_id: &str,
        request_id: &str,
    ) -> js_sys::Promise;
    #[wasm_bindgen(js_name = historyOf)]
    pub fn history_of(base: &str, resource: &str, aggregate_id: &str) -> js_sys::Promise;
    #[wasm_bindgen(js_name = eventRecorder)]
    pub fn event_recorder() -> JsValue;
    #[wasm_bindgen(js_name = firedFor)]
    pub fn fired_for(base: &str, aggregate_id: &str) -> js_sys::Promise;
    #[wasm_bindgen(js_name = arrivedWith)]
    pub fn arrived_with(base: &str, request_id: &str) -> js_sys::Promise;
    #[wasm_bindgen(js_name = errorOf)]
    pub fn error_of(e: &JsValue) -> JsValue;
    #[wasm_bindgen(js_name = sleep)]
    pub fn sleep_promise(ms: u32) -> js_sys::Promise;
    #[wasm_bindgen(js_name = headersHangingOnce)]
    pub fn headers_hanging_once() -> JsValue;
    #[wasm_bindgen(js_name = confirmNeverSettles)]
    pub fn confirm_never_settles() -> JsValue;
    #[wasm_bindgen(js_name = hangingAdapter)]
    pub fn hanging_adapter() -> JsValue;
    #[wasm_bindgen(js_name = gatewayIdle)]
    pub fn gateway_idle(base: &str) -> js_sys::Promise;
    #[wasm_bindgen(js_name = hostileBodies)]
    pub fn hostile_bodies() -> js_sys::Array;
}

pub async fn sleep(ms: u32) {
    JsFuture::from(sleep_promise(ms)).await.unwrap();
}

pub fn base() -> &'static str {
    match option_env!("WOW_GATEWAY_URL") {
        Some(url) => url,
        None => panic!(
            "set WOW_GATEWAY_URL to a running wow-test-gateway when building (npm test does)"
        ),
    }
}

pub fn js(v: Value) -> JsValue {
    js_sys::JSON::parse(&v.to_string()).unwrap()
}

pub fn rust(v: &JsValue) -> Value {
    let text: String = js_sys::JSON::stringify(v).unwrap().into();
    serde_json::from_str(&text).unwrap()
}

pub async fn client(extra: Value) -> WowClient {
    client_over(extra, JsValue::UNDEFINED).await
}

/// A client whose storage is `storage` (an adapter object), when given.
/// Awaits one of the client's promises.
pub async fn settle(promise: js_sys::Promise) -> Result<JsValue, JsValue> {
    wasm_bindgen_futures::JsFuture::from(promise).await
}

pub async fn client_over(extra: Value, storage: JsValue) -> WowClient {
    let mut options = json!({
        "baseUrl": base(), "user": null, "storage": "memory", "namespace": unique("ns"),
        "timeoutMs": 2000, "retry": {"baseMs": 50, "maxMs": 200}
    });
    for (k, v) in extra.as_object().unwrap() {
        options[k] = v.clone();
    }
    let options = js(options);
    if !storage.is_undefined() {
        js_sys::Reflect::set(&options, &"storage".into(), &storage).unwrap();
    }
    WowClient::open(options).await.unwrap()
}

pub async fn fault(rule: Value) {
    JsFuture::from(add_fault(base(), &js(rule))).await.unwrap();
}

pub async fn stored(resource: &str, id: &str, request_id: &str) -> i64 {
    JsFuture::from(stored_streams(base(), resource, id, request_id))
        .await
        .unwrap()
        .as_f64()
        .unwrap() as i64
}

/// The requestIds of an account's streams in history, in version order.
pub async fn history(id: &str) -> Vec<String> {
    let v = JsFuture::from(history_of(base(), "account", id))
        .await
        .unwrap();
    serde_json::from_value(rust(&v)).unwrap()
}

/// How many requests carrying `request_id` reached the gateway at all
/// (refused, dropped or processed): what a recording proxy would count.
pub async fn arrived(request_id: &str) -> usize {
    JsFuture::from(arrived_with(base(), request_id))
        .await
        .unwrap()
        .as_f64()
        .unwrap() as usize
}

pub async fn fired(id: &str) -> Vec<String> {
    let v = JsFuture::from(fired_for(base(), id)).await.unwrap();
    serde_json::from_value(rust(&v)).unwrap()
}

pub fn create(id: &str) -> JsValue {
    js(
        json!({"aggregate": {"resource": "account", "id": id}, "action": "create_account",
              "create": true, "body": {"name": id, "balance": 100}}),
    )
}

pub fn lock(id: &str, amount: i64) -> JsValue {
    js(
        json!({"aggregate": {"resource": "account", "id": id}, "action": "lock_amount", "body": {"amount": amount}}),
    )
}

pub fn with(command: &JsValue, extra: Value) -> JsValue {
    let mut v = rust(command);
    for (k, val) in extra.as_object().unwrap() {
        v[k] = val.clone();
    }
    js(v)
}

pub async fn outcome(c: &WowClient, command: JsValue) -> Value {
    rust(&settle(c.send(command, None)).await.unwrap())
}

pub async fn failure(c: &WowClient, command: JsValue) -> Value {
    let e = settle(c.send_and_wait(command, None))
        .await
        .expect_err("a CommandError");
    rust(&error_of(&e))
}
