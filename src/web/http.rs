//! Talking to the gateway: one attempt as a JSON request or an SSE stage
//! stream (elements handed on as their bytes arrive), and the confirm
//! queries against the event history.

use crate::core::text::text;
use gloo_net::http::Response;
use wasm_bindgen::prelude::wasm_bindgen;
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_futures::JsFuture;

use super::JsFailure;
use crate::core::journal::IntentRecord;
use crate::core::machine::{ConfirmAnswer, Look, LookAnswer, Said};
use crate::core::protocol::headers::{names, HeaderError};
use crate::core::protocol::{
    BatchQuery, CommandHeaders, ConfirmQuery, JsonResponse, JsonValue, ResponseBody, SseDecoder,
    StreamElement, BATCH_LIMIT,
};

#[wasm_bindgen(module = "/src/web/network.js")]
extern "C" {
    #[wasm_bindgen(js_name = readJsonBody)]
    fn read_json_body(response: &web_sys::Response) -> js_sys::Promise;
    #[wasm_bindgen(js_name = gatewayFetch, catch)]
    fn gateway_fetch(
        url: &str,
        method: &str,
        headers: &str,
        body: &str,
        timeout_ms: u32,
    ) -> Result<js_sys::Promise, JsValue>;
}

/// A request ready to go: sent in one call into JS (not a builder call per
/// header), aborted after `timeout_ms`; the headers were checked by
/// [`CommandHeaders`], and are "name\nvalue" lines.
#[derive(Debug)]
pub struct Outgoing {
    url: String,
    method: String,
    headers: String,
    body: String,
    timeout_ms: u32,
}

impl Outgoing {
    fn new(
        url: String,
        method: &str,
        headers: &CommandHeaders,
        body: String,
        timeout_ms: u32,
    ) -> Outgoing {
        let mut lines = String::with_capacity(512);
        for (name, value) in headers.iter() {
            if !lines.is_empty() {
                lines.push('\n');
            }
            lines.push_str(name);
            lines.push('\n');
            lines.push_str(value);
        }
        Outgoing {
            url,
            method: method.to_owned(),
            headers: lines,
            body,
            timeout_ms,
        }
    }

    /// Sends it (`fetch`): the response, or why none came. A request that
    /// could not be made (an invalid URL) never left.
    async fn send(&self) -> Result<Response, Failure> {
        let promise = gateway_fetch(
            &self.url,
            &self.method,
            &self.headers,
            &self.body,
            self.timeout_ms,
        )
        .map_err(|e| Failure::NeverSent(JsFailure::from(e).text()))?;
        let response = JsFuture::from(promise).await.map_err(failure)?;
        Ok(Response::from(web_sys::Response::unchecked_from_js(
            response,
        )))
    }
}

/// Why an attempt produced no answer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Failure {
    /// The request could not be built: it never left.
    NeverSent(String),
    /// The deadline passed: the request was aborted.
    Aborted,
    /// The network failed; the request may have arrived.
    Lost(String),
}

/// What a request's deadline (`AbortSignal.timeout`) rejects with.
fn is_deadline(name: &str) -> bool {
    name == "TimeoutError" || name == "AbortError"
}

fn failure(e: JsValue) -> Failure {
    let f = JsFailure::from(e);
    if is_deadline(&f.name) {
        Failure::Aborted
    } else {
        Failure::Lost(f.text())
    }
}

/// A stream event's data read with `JSON.parse` and decoded without serde_json.
fn body_from_text(text: &str) -> ResponseBody {
    match js_sys::JSON::parse(text) {
        Ok(value) => body_from_js(value),
        Err(e) => ResponseBody::Other {
            reason: text!(
                "not JSON (",
                JsFailure::from(e).text(),
                "): ",
                snippet(text)
            ),
        },
    }
}

fn body_from_js(value: JsValue) -> ResponseBody {
    match super::json_from_js(value) {
        Ok(json) => ResponseBody::from_json(json),
        Err(e) => ResponseBody::Other { reason: e.message },
    }
}

/// A whole answer's body, read and parsed by the engine (`readJsonBody`):
/// what it holds, or why it holds nothing usable.
async fn body_of(response: &web_sys::Response) -> Result<Result<JsValue, String>, JsValue> {
    let read = JsFuture::from(read_json_body(response)).await?;
    let value = super::safe_read::get(&read, "value");
    Ok(match value {
        Some(v) if !v.is_undefined() => Ok(v),
        _ => Err(super::safe_read::get(&read, "reason")
            .and_then(|r| r.as_string())
            .unwrap_or_default()),
    })
}

fn snippet(text: &str) -> String {
    let mut end = text.len().min(120);
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    text[..end].to_owned()
}

/// Joins the base URL and a path.
pub fn url(base: &str, path: &str) -> String {
    text!(base.trim_end_matches('/'), path)
}

/// Builds an attempt's request for one intent, aborted after `timeout_ms`.
pub fn command_request(
    base_url: &str,
    record: &IntentRecord,
    stream: bool,
    legacy_timeout: bool,
    extra: &[(String, String)],
    timeout_ms: u32,
) -> Result<Outgoing, Failure> {
    let c = &record.command;
    let mut headers = CommandHeaders::new();
    let never = |e: &HeaderError| Failure::NeverSent(e.message());
    let accept = if stream {
        "text/event-stream"
    } else {
        "application/json"
    };
    headers
        .set(names::CONTENT_TYPE, "application/json")
        .and_then(|h| h.set(names::ACCEPT, accept))
        .and_then(|h| h.set(names::REQUEST_ID, &record.request_id))
        .and_then(|h| h.set(names::AGGREGATE_ID, &record.aggregate.aggregate_id))
        .and_then(|h| h.wait_plan(&c.wait.plan(), legacy_timeout))
        .map_err(|e| never(&e))?;
    if let Some(v) = c.expected_version {
        headers
            .set(names::AGGREGATE_VERSION, &text!(v))
            .map_err(|e| never(&e))?;
    }
    for (name, value) in c.headers.iter().chain(extra) {
        headers.set(name, value).map_err(|e| never(&e))?;
    }
    let method = c.method.to_ascii_uppercase();
    if !crate::core::protocol::is_command_method(&method) {
        return Err(Failure::NeverSent(text!("unsupported method ", method)));
    }
    Ok(Outgoing::new(
        url(base_url, &c.path),
        &method,
        &headers,
        super::to_text(&c.body),
        timeout_ms,
    ))
}

fn retry_after(response: &Response) -> Option<u64> {
    let value = response.headers().get("Retry-After")?;
    value
        .trim()
        .parse::<u64>()
        .ok()
        .map(|s| s.saturating_mul(1000))
}

/// `url`: what a body that is not a gateway's answer names (an app's own
/// origin by mistake answered 404 with an "empty body").
async fn read_json(response: Response, url: &str) -> Result<(JsonResponse, Option<u64>), Failure> {
    let status = response.status();
    let header = response.headers().get(names::ERROR_CODE);
    let after = retry_after(&response);
    let body = match body_of(&response.into()).await.map_err(failure)? {
        Ok(value) => body_from_js(value),
        Err(reason) => ResponseBody::Other {
            reason: text!(reason, " from ", url),
        },
    };
    Ok((
        JsonResponse {
            status,
            error_code_header: header,
            body,
        },
        after,
    ))
}

/// What sending an attempt produced.
#[derive(Debug)]
pub enum Answer {
    /// A whole JSON answer (also what a proxy sends in stream mode).
    Json(Box<JsonResponse>, Option<u64>),
    /// A stage stream that ended; `cut` when it ended with an error.
    StreamEnded {
        /// Whether the body ended with a transport error or an undecodable event.
        cut: bool,
    },
}

/// Sends one attempt. In stream mode, each element goes to `on_element` as
/// soon as its bytes arrive.
pub async fn send_attempt(
    request: Outgoing,
    stream: bool,
    on_element: &mut dyn FnMut(StreamElement),
) -> Result<Answer, Failure> {
    // A failure names where it went: a wrong baseUrl was "Failed to fetch", nothing more.
    let url = &request.url;
    let response = request.send().await.map_err(|e| match e {
        Failure::Lost(why) => Failure::Lost(text!(why, " (", url, ")")),
        other => other,
    })?;
    let is_sse = response
        .headers()
        .get("Content-Type")
        .is_some_and(|t| t.starts_with("text/event-stream"));
    if !stream || !is_sse {
        let (json, after) = read_json(response, url).await?;
        return Ok(Answer::Json(Box::new(json), after));
    }
    let Some(body) = response.body() else {
        return Ok(Answer::StreamEnded { cut: true });
    };
    let reader: web_sys::ReadableStreamDefaultReader = body.get_reader().unchecked_into();
    let mut decoder = SseDecoder::default();
    loop {
        let chunk = JsFuture::from(reader.read()).await.map_err(failure)?;
        let done = js_sys::Reflect::get(&chunk, &"done".into())
            .ok()
            .and_then(|d| d.as_bool())
            .unwrap_or(true);
        if done {
            return Ok(Answer::StreamEnded {
                cut: decoder.finish().is_err(),
            });
        }
        let value = js_sys::Reflect::get(&chunk, &"value".into()).unwrap_or(JsValue::UNDEFINED);
        let bytes = js_sys::Uint8Array::new(&value).to_vec();
        if decoder.feed(&bytes).is_err() {
            let _ = reader.cancel();
            return Ok(Answer::StreamEnded { cut: true });
        }
        while let Some(event) = decoder.next_event() {
            match StreamElement::from_event(event.event.as_deref(), body_from_text(&event.data)) {
                Ok(element) => on_element(element),
                // A stage event without its result: the stream cannot be trusted further.
                Err(_) => {
                    let _ = reader.cancel();
                    return Ok(Answer::StreamEnded { cut: true });
                }
            }
        }
    }
}

/// A look with the gateway's own event queries: one question by
/// `…/event/count` for existence (`…/event/list` when the stream's facts
/// are wanted), many by one batched list ([`BatchQuery`]). A query not
/// answered within `within_ms` is aborted and history counts as
/// unavailable: nothing waits on a connection that never answers.
pub async fn look_with_gateway(
    base_url: &str,
    look: &Look,
    extra: &[(String, String)],
    within_ms: u32,
) -> LookAnswer {
    let [query] = &look.questions[..] else {
        let first = &look.questions[0];
        let path = match first.list_path() {
            Ok(p) => p,
            Err(e) => return LookAnswer::Unavailable(e.message()),
        };
        let body = super::to_text(&BatchQuery::of(&look.questions));
        let value = match ask_history(base_url, &path, body, extra, within_ms).await {
            Ok(value) => value,
            Err(why) => return LookAnswer::Unavailable(why),
        };
        let Ok(JsonValue::Array(streams)) = super::json_from_js(value) else {
            return LookAnswer::Unavailable(text!(path, " did not answer a list"));
        };
        let complete = streams.len() < BATCH_LIMIT as usize;
        let text = |s: &JsonValue, k: &str| s.get(k).and_then(JsonValue::as_str).map(str::to_owned);
        let said = streams
            .iter()
            .filter_map(|s| {
                Some(Said {
                    aggregate_id: text(s, "aggregateId")?,
                    request_id: text(s, "requestId")?,
                    answer: ConfirmAnswer::Appended {
                        version: s.get("version").and_then(JsonValue::as_i64),
                        command_id: text(s, "commandId"),
                    },
                })
            })
            .collect();
        return LookAnswer::Said { said, complete };
    };
    let answer = confirm_with_gateway(base_url, query, look.need_facts, extra, within_ms).await;
    one(query, answer)
}

/// A look of one question: what history said of it.
pub fn one(query: &ConfirmQuery, answer: ConfirmAnswer) -> LookAnswer {
    match answer {
        ConfirmAnswer::Unavailable(why) => LookAnswer::Unavailable(why),
        answer => LookAnswer::Said {
            said: vec![Said {
                aggregate_id: query.aggregate_id.clone(),
                request_id: query.request_id.clone(),
                answer,
            }],
            complete: true,
        },
    }
}

/// POSTs a history query and reads its JSON answer, or says why it could not.
async fn ask_history(
    base_url: &str,
    path: &str,
    body: String,
    extra: &[(String, String)],
    within_ms: u32,
) -> Result<JsValue, String> {
    let mut headers = CommandHeaders::new();
    let fixed = [
        (names::CONTENT_TYPE, "application/json"),
        (names::ACCEPT, "application/json"),
    ];
    fixed
        .into_iter()
        .chain(extra.iter().map(|(n, v)| (n.as_str(), v.as_str())))
        .try_for_each(|(name, value)| headers.set(name, value).map(drop))
        .map_err(|e| e.message())?;
    let late = || text!(path, " did not answer within ", within_ms, " ms");
    let response = Outgoing::new(url(base_url, path), "POST", &headers, body, within_ms)
        .send()
        .await;
    let response = match response {
        Ok(r) if r.ok() => r,
        Ok(r) => return Err(text!(path, " answered ", r.status())),
        Err(Failure::Aborted) => return Err(late()),
        Err(Failure::Lost(why) | Failure::NeverSent(why)) => return Err(text!(path, ": ", why)),
    };
    match body_of(&response.into()).await {
        Ok(Ok(value)) => Ok(value),
        Ok(Err(_)) => Err(text!(path, " did not answer JSON")),
        Err(e) => match failure(e) {
            Failure::Aborted => Err(late()),
            Failure::Lost(why) | Failure::NeverSent(why) => Err(why),
        },
    }
}

/// One question, as the gateway's event queries answer it (the count for
/// existence, the list when the stream's version and commandId are wanted).
async fn confirm_with_gateway(
    base_url: &str,
    query: &ConfirmQuery,
    need_facts: bool,
    extra: &[(String, String)],
    within_ms: u32,
) -> ConfirmAnswer {
    let (path, body) = if need_facts {
        (query.list_path(), super::to_text(&query.list_body()))
    } else {
        (query.count_path(), super::to_text(&query.condition()))
    };
    let path = match path {
        Ok(p) => p,
        Err(e) => return ConfirmAnswer::Unavailable(e.message()),
    };
    let value = match ask_history(base_url, &path, body, extra, within_ms).await {
        Ok(value) => value,
        Err(why) => return ConfirmAnswer::Unavailable(why),
    };
    if need_facts {
        let Ok(JsonValue::Array(streams)) = super::json_from_js(value) else {
            return ConfirmAnswer::Unavailable(text!(path, " did not answer a list"));
        };
        let found = streams.into_iter().find(|s| {
            s.get("requestId").and_then(JsonValue::as_str) == Some(query.request_id.as_str())
        });
        match found {
            None => ConfirmAnswer::NotAppended,
            Some(s) => ConfirmAnswer::Appended {
                version: s.get("version").and_then(JsonValue::as_i64),
                command_id: s
                    .get("commandId")
                    .and_then(JsonValue::as_str)
                    .map(str::to_owned),
            },
        }
    } else {
        match value.as_f64() {
            Some(n) if n >= 1.0 => ConfirmAnswer::Appended {
                version: None,
                command_id: None,
            },
            Some(_) => ConfirmAnswer::NotAppended,
            None => ConfirmAnswer::Unavailable(text!(path, " did not answer a number")),
        }
    }
}
