//! The smallest useful command client, with and without the base crates
//! `serde-wasm-bindgen` and `gloo-net` (see Cargo.toml). Each variant does
//! the same work; only how values cross the boundary and how fetch is
//! called differ.

use wasm_bindgen::prelude::*;
#[cfg(not(feature = "gloo-net"))]
use wasm_bindgen_futures::JsFuture;

fn get(object: &JsValue, key: &str) -> JsValue {
    js_sys::Reflect::get(object, &JsValue::from_str(key)).unwrap_or(JsValue::UNDEFINED)
}

#[cfg(not(feature = "serde-wasm-bindgen"))]
fn text(object: &JsValue, key: &str) -> Option<String> {
    get(object, key).as_string()
}

/// What the client reads of a command.
struct Command {
    resource: String,
    id: String,
    tenant_id: Option<String>,
    action: String,
    wait_stage: Option<String>,
    request_id: Option<String>,
    body: JsValue,
}

#[cfg(feature = "serde-wasm-bindgen")]
mod wire {
    //! The command and the CommandResult as serde-derived types.
    use serde::{Deserialize, Serialize};

    #[derive(Deserialize)]
    #[serde(rename_all = "camelCase")]
    pub struct Aggregate {
        pub resource: String,
        pub id: Option<String>,
        pub tenant_id: Option<String>,
    }

    #[derive(Deserialize)]
    #[serde(rename_all = "camelCase")]
    pub struct Command {
        pub aggregate: Aggregate,
        pub action: String,
        pub wait_stage: Option<String>,
        pub request_id: Option<String>,
    }

    #[derive(Deserialize, Serialize)]
    pub struct BindingError {
        pub name: String,
        pub msg: String,
    }

    #[derive(Deserialize, Serialize)]
    #[serde(rename_all = "camelCase")]
    pub struct Function {
        pub context_name: String,
        pub processor_name: String,
        pub name: String,
        pub function_kind: String,
    }

    #[derive(Deserialize, Serialize)]
    #[serde(rename_all = "camelCase")]
    pub struct CommandResult {
        pub id: String,
        pub wait_command_id: String,
        pub stage: String,
        pub context_name: String,
        pub aggregate_name: String,
        pub tenant_id: String,
        pub aggregate_id: String,
        pub aggregate_version: Option<i64>,
        pub request_id: String,
        pub command_id: String,
        pub function: Function,
        pub error_code: String,
        pub error_msg: String,
        #[serde(default)]
        pub binding_errors: Vec<BindingError>,
        pub signal_time: i64,
        pub succeeded: bool,
    }
}

#[cfg(feature = "serde-wasm-bindgen")]
fn read_command(value: JsValue) -> Result<Command, JsValue> {
    let body = get(&value, "body");
    let c: wire::Command = serde_wasm_bindgen::from_value(value)?;
    Ok(Command {
        resource: c.aggregate.resource,
        id: c.aggregate.id.unwrap_or_default(),
        tenant_id: c.aggregate.tenant_id,
        action: c.action,
        wait_stage: c.wait_stage,
        request_id: c.request_id,
        body,
    })
}

#[cfg(not(feature = "serde-wasm-bindgen"))]
fn read_command(value: JsValue) -> Result<Command, JsValue> {
    let aggregate = get(&value, "aggregate");
    let missing = |what: &str| JsValue::from_str(&["missing ", what].concat());
    Ok(Command {
        resource: text(&aggregate, "resource").ok_or_else(|| missing("aggregate.resource"))?,
        id: text(&aggregate, "id").unwrap_or_default(),
        tenant_id: text(&aggregate, "tenantId"),
        action: text(&value, "action").ok_or_else(|| missing("action"))?,
        wait_stage: text(&value, "waitStage"),
        request_id: text(&value, "requestId"),
        body: get(&value, "body"),
    })
}

/// The CommandResult checked and handed back: (succeeded, the value for JS).
#[cfg(feature = "serde-wasm-bindgen")]
fn check_result(value: JsValue) -> Result<(bool, JsValue), JsValue> {
    let result: wire::CommandResult = serde_wasm_bindgen::from_value(value)?;
    Ok((result.succeeded, serde_wasm_bindgen::to_value(&result)?))
}

#[cfg(not(feature = "serde-wasm-bindgen"))]
fn check_result(value: JsValue) -> Result<(bool, JsValue), JsValue> {
    Ok((get(&value, "succeeded").as_bool() == Some(true), value))
}

fn headers(c: &Command, request_id: &str) -> Vec<(&'static str, String)> {
    let mut out = vec![
        ("content-type", "application/json".to_owned()),
        ("command-request-id", request_id.to_owned()),
        (
            "command-wait-stage",
            c.wait_stage.clone().unwrap_or_else(|| "PROCESSED".into()),
        ),
    ];
    if let Some(tenant) = &c.tenant_id {
        out.push(("command-tenant-id", tenant.clone()));
    }
    out
}

/// POSTs the body and parses the answer: (the parsed JSON).
#[cfg(feature = "gloo-net")]
async fn post(
    url: &str,
    headers: Vec<(&'static str, String)>,
    body: String,
) -> Result<JsValue, JsValue> {
    let fail = |e: gloo_net::Error| JsValue::from_str(&e.to_string());
    let mut request = gloo_net::http::Request::post(url);
    for (name, value) in &headers {
        request = request.header(name, value);
    }
    let response = request
        .body(body)
        .map_err(fail)?
        .send()
        .await
        .map_err(fail)?;
    let text = response.text().await.map_err(fail)?;
    js_sys::JSON::parse(&text)
}

#[cfg(not(feature = "gloo-net"))]
async fn post(
    url: &str,
    headers: Vec<(&'static str, String)>,
    body: String,
) -> Result<JsValue, JsValue> {
    let fields = js_sys::Object::new();
    for (name, value) in &headers {
        js_sys::Reflect::set(&fields, &(*name).into(), &value.into())?;
    }
    let init = js_sys::Object::new();
    js_sys::Reflect::set(&init, &"method".into(), &"POST".into())?;
    js_sys::Reflect::set(&init, &"headers".into(), &fields)?;
    js_sys::Reflect::set(&init, &"body".into(), &body.into())?;
    let fetch: js_sys::Function = get(&js_sys::global(), "fetch").into();
    let response = JsFuture::from(js_sys::Promise::from(fetch.call2(
        &JsValue::NULL,
        &url.into(),
        &init,
    )?))
    .await?;
    let json: js_sys::Function = get(&response, "json").into();
    JsFuture::from(js_sys::Promise::from(json.call0(&response)?)).await
}

fn random_request_id() -> Result<String, JsValue> {
    let bytes = js_sys::Uint8Array::new_with_length(16);
    let crypto = get(&js_sys::global(), "crypto");
    let fill: js_sys::Function = get(&crypto, "getRandomValues").into();
    fill.call1(&crypto, &bytes)?;
    let mut b = [0u8; 16];
    bytes.copy_to(&mut b);
    Ok(uuid::Builder::from_random_bytes(b).into_uuid().to_string())
}

/// Sends one command; resolves to its CommandResult, rejects with it unless it succeeded.
#[wasm_bindgen]
pub async fn send(base: String, command: JsValue) -> Result<JsValue, JsValue> {
    let c = read_command(command)?;
    let request_id = match &c.request_id {
        Some(id) => id.clone(),
        None => random_request_id()?,
    };
    let storage = web_sys::window()
        .and_then(|w| w.local_storage().ok().flatten())
        .ok_or_else(|| JsValue::from_str("no localStorage"))?;
    let key = ["wow/", &request_id].concat();
    storage.set_item(&key, &c.action)?;
    let url = [base.as_str(), "/", &c.resource, "/", &c.id, "/", &c.action].concat();
    let body = js_sys::JSON::stringify(&c.body)?
        .as_string()
        .unwrap_or_default();
    let answer = post(&url, headers(&c, &request_id), body).await?;
    let (succeeded, result) = check_result(answer)?;
    storage.remove_item(&key)?;
    if succeeded {
        Ok(result)
    } else {
        Err(result)
    }
}
