//! The requests the engine sends, built here to the byte (headers checked,
//! the body's text written once), and what their answers mean: a command
//! attempt (JSON or a stage stream), a look at history (a count for one
//! question's existence, a list when its stream's facts are wanted, one
//! batched list for several), a snapshot read.

use super::io::Request;
use crate::journal::IntentRecord;
use crate::machine::{ConfirmAnswer, Look, LookAnswer, Said};
use crate::protocol::headers::names;
use crate::protocol::{
    BatchQuery, CommandHeaders, ConfirmQuery, JsonOut, JsonResponse, JsonValue, QueryShape,
    ResponseBody, Tree, BATCH_LIMIT,
};
use crate::text::text;

/// Joins the base URL and a path.
pub fn url(base: &str, path: &str) -> String {
    text!(base.trim_end_matches('/'), path)
}

fn headers_of(headers: &CommandHeaders) -> Vec<(String, String)> {
    headers
        .iter()
        .map(|(n, v)| (n.to_owned(), v.to_owned()))
        .collect()
}

/// An attempt's request for `record`, aborted after `timeout_ms`; `extra`:
/// the caller's fresh headers (and the attempt's traceparent). A header
/// that cannot be sent, or a method that is not a command's, means the
/// request never leaves (the error says why).
pub fn command(
    base_url: &str,
    record: &IntentRecord,
    stream: bool,
    legacy_timeout: bool,
    extra: &[(String, String)],
    timeout_ms: u32,
    float: crate::protocol::FloatText,
) -> Result<Request, String> {
    let c = &record.command;
    let mut headers = CommandHeaders::new();
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
        .map_err(|e| e.message())?;
    if let Some(v) = c.expected_version {
        headers
            .set(names::AGGREGATE_VERSION, &text!(v))
            .map_err(|e| e.message())?;
    }
    for (name, value) in c.headers.iter().chain(extra) {
        headers.set(name, value).map_err(|e| e.message())?;
    }
    let method = c.method.to_ascii_uppercase();
    if !crate::protocol::is_command_method(&method) {
        return Err(text!("unsupported method ", method));
    }
    let held = c.body.held_text().map(|_| c.body.clone());
    Ok(Request {
        url: url(base_url, &c.path),
        method,
        headers: headers_of(&headers),
        // A body the host holds is sent as that: never copied out again.
        body: if held.is_some() {
            String::new()
        } else {
            JsonOut::of(&c.body, float)
        },
        held,
        timeout_ms,
        stream,
    })
}

/// A command's whole JSON answer as the machine reads it; `url` is what a
/// body that is no gateway's answer names (an app's own origin by mistake
/// answered 404 with an "empty body").
pub(crate) fn command_answer(
    status: u16,
    error_code_header: Option<String>,
    body: Result<JsonValue, String>,
    url: &str,
) -> JsonResponse {
    JsonResponse {
        status,
        error_code_header,
        body: match body {
            Ok(value) => ResponseBody::from_json(value),
            Err(reason) => ResponseBody::Other {
                reason: text!(reason, " from ", url),
            },
        },
    }
}

/// A POST of history's query `body` to `path`, bounded by `within_ms`.
fn history_request(
    base_url: &str,
    path: &str,
    body: String,
    extra: &[(String, String)],
    within_ms: u32,
) -> Result<Request, String> {
    let mut headers = CommandHeaders::new();
    [
        (names::CONTENT_TYPE, "application/json"),
        (names::ACCEPT, "application/json"),
    ]
    .into_iter()
    .chain(extra.iter().map(|(n, v)| (n.as_str(), v.as_str())))
    .try_for_each(|(name, value)| headers.set(name, value).map(drop))
    .map_err(|e| e.message())?;
    Ok(Request {
        url: url(base_url, path),
        method: "POST".into(),
        headers: headers_of(&headers),
        body,
        held: None,
        timeout_ms: within_ms,
        stream: false,
    })
}

/// How a look asks the gateway: one question by its `…/event/count` for
/// existence (its `…/event/list` when the stream's facts are wanted), many
/// by one batched list ([`BatchQuery`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Asked {
    /// A count: a number.
    Count,
    /// One question's list: its streams.
    List,
    /// Several questions' list (a projection of each stream's ids and facts).
    Batch,
}

/// The request of a look at the gateway's history, written in `shape`,
/// and how to read its answer.
pub fn look(
    base_url: &str,
    look: &Look,
    extra: &[(String, String)],
    within_ms: u32,
    float: crate::protocol::FloatText,
    shape: QueryShape,
) -> Result<(Request, String, Asked), String> {
    let (path, body, asked) = match &look.questions[..] {
        [query] if look.need_facts => (
            query.list_path(),
            JsonOut::of(&query.list_body(shape), float),
            Asked::List,
        ),
        [query] => (
            query.count_path(),
            JsonOut::of(&Tree(&query.condition(), shape), float),
            Asked::Count,
        ),
        [first, ..] => (
            first.list_path(),
            JsonOut::of(&BatchQuery::of(&look.questions, shape), float),
            Asked::Batch,
        ),
        [] => return Err("a look without questions".into()),
    };
    let path = path.map_err(|e| e.message())?;
    let request = history_request(base_url, &path, body, extra, within_ms)?;
    Ok((request, path, asked))
}

/// What a gateway that refused a query said: its status, error code, message
/// and each binding error's code (Wow 9's `QuerySchemaValidation`,
/// `IllegalAccessQueryScope`, …). A refusal is "cannot confirm", never "not
/// appended".
fn refused(path: &str, status: u16, body: &Result<JsonValue, String>) -> String {
    let mut why = text!(path, " answered ", status);
    if let Ok(body) = body {
        fn said<'a>(v: &'a JsonValue, key: &str) -> &'a str {
            v.get(key).and_then(JsonValue::as_str).unwrap_or("")
        }
        let errors = match body.get("bindingErrors") {
            Some(JsonValue::Array(errors)) => &errors[..errors.len().min(4)],
            _ => &[],
        };
        let pieces = [
            (" ", said(body, "errorCode")),
            (": ", said(body, "errorMsg")),
        ];
        let bindings = errors.iter().map(|e| (" ", said(e, "code")));
        for (before, s) in pieces.into_iter().chain(bindings) {
            if !s.is_empty() {
                why.push_str(before);
                // The server's text: at most 200 characters of each.
                why.extend(s.chars().take(200));
            }
        }
    }
    why.push_str("; the intent cannot be confirmed there");
    why
}

/// What a count's answer says of its question: one or more streams, none,
/// or nothing (a refusal, no number).
pub(crate) fn counted(path: &str, status: u16, body: Result<JsonValue, String>) -> ConfirmAnswer {
    let appended = ConfirmAnswer::Appended {
        version: None,
        command_id: None,
    };
    match body {
        _ if !(200..300).contains(&status) => {
            ConfirmAnswer::Unavailable(refused(path, status, &body))
        }
        Ok(JsonValue::Int(n)) if n >= 1 => appended,
        Ok(JsonValue::UInt(_)) => appended,
        Ok(JsonValue::Float(n)) if n >= 1.0 => appended,
        Ok(JsonValue::Int(_) | JsonValue::Float(_)) => ConfirmAnswer::NotAppended,
        Ok(_) => ConfirmAnswer::Unavailable(text!(path, " did not answer a number")),
        Err(_) => ConfirmAnswer::Unavailable(text!(path, " did not answer JSON")),
    }
}

/// What a look's answer says: `status` and the parsed body (or why there
/// is none), from `path`. A refusal is "cannot confirm" (`refused`).
pub(crate) fn look_answer(
    look: &Look,
    asked: &Asked,
    path: &str,
    status: u16,
    body: Result<JsonValue, String>,
) -> LookAnswer {
    if *asked == Asked::Count {
        return one(&look.questions[0], counted(path, status, body));
    }
    if !(200..300).contains(&status) {
        return LookAnswer::Unavailable(refused(path, status, &body));
    }
    let Ok(value) = body else {
        return LookAnswer::Unavailable(text!(path, " did not answer JSON"));
    };
    use super::answers::{appended, said};
    let query = &look.questions[0];
    match asked {
        Asked::Count => unreachable!("read by counted"),
        Asked::List => {
            let JsonValue::Array(streams) = value else {
                return LookAnswer::Unavailable(text!(path, " did not answer a list"));
            };
            let found = streams.iter().find(|s| {
                s.get("requestId").and_then(JsonValue::as_str) == Some(query.request_id.as_str())
            });
            one(query, found.map_or(ConfirmAnswer::NotAppended, appended))
        }
        Asked::Batch => {
            let JsonValue::Array(streams) = value else {
                return LookAnswer::Unavailable(text!(path, " did not answer a list"));
            };
            let complete = streams.len() < BATCH_LIMIT as usize;
            LookAnswer::Said {
                said: said(&streams, appended),
                complete,
            }
        }
    }
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

/// A snapshot read of `record`'s aggregate (`awaitDownstream`'s SNAPSHOT),
/// bounded by `within_ms`.
pub fn snapshot(
    base_url: &str,
    record: &IntentRecord,
    extra: &[(String, String)],
    within_ms: u32,
) -> Option<Request> {
    let a = &record.aggregate;
    let path = a.route().snapshot_path(&a.aggregate_id).ok()?;
    let mut headers = CommandHeaders::new();
    extra
        .iter()
        .map(|(n, v)| (n.as_str(), v.as_str()))
        .chain([(names::ACCEPT, "application/json")])
        .try_for_each(|(n, v)| headers.set(n, v).map(drop))
        .ok()?;
    Some(Request {
        url: url(base_url, &path),
        method: "GET".into(),
        headers: headers_of(&headers),
        body: String::new(),
        held: None,
        timeout_ms: within_ms,
        stream: false,
    })
}
