//! Response helpers: bodies, CORS, JSON and SSE framing.

use std::convert::Infallible;

use bytes::Bytes;
use http_body_util::{combinators::BoxBody, BodyExt, Full, StreamBody};
use hyper::body::Frame;
use hyper::{Response, StatusCode};
use tokio::sync::mpsc;
use wow_command_client::core::protocol::headers::names;

/// The response body type: whole or streamed; an `Err` frame resets the connection.
pub type Body = BoxBody<Bytes, std::io::Error>;

/// A whole body.
pub fn full(bytes: impl Into<Bytes>) -> Body {
    Full::new(bytes.into())
        .map_err(|e: Infallible| match e {})
        .boxed()
}

/// A streamed body fed by a channel; sending `Err` aborts the connection.
pub fn channel() -> (mpsc::UnboundedSender<Result<Bytes, std::io::Error>>, Body) {
    let (tx, rx) = mpsc::unbounded_channel::<Result<Bytes, std::io::Error>>();
    let stream = futures_util::stream::unfold(rx, |mut rx| async move {
        rx.recv().await.map(|item| (item.map(Frame::data), rx))
    });
    (tx, StreamBody::new(stream).boxed())
}

/// CORS headers on every answer, so browsers can call and read `Wow-Error-Code`.
pub fn cors(mut resp: Response<Body>, request_headers: Option<&str>) -> Response<Body> {
    let h = resp.headers_mut();
    h.insert("Access-Control-Allow-Origin", "*".parse().unwrap());
    h.insert(
        "Access-Control-Expose-Headers",
        "Wow-Error-Code, Content-Type".parse().unwrap(),
    );
    if let Some(req) = request_headers.and_then(|r| r.parse().ok()) {
        h.insert("Access-Control-Allow-Headers", req);
    }
    resp
}

/// A proxy's `307 Temporary Redirect` to `location` (a method and body
/// kept: a client that follows it sends the command there).
pub fn redirect(location: &str) -> Response<Body> {
    Response::builder()
        .status(StatusCode::TEMPORARY_REDIRECT)
        .header("Location", location)
        .body(full(""))
        .expect("valid response")
}

/// A JSON answer with `Wow-Error-Code`.
pub fn json(status: u16, error_code: &str, body: &impl serde::Serialize) -> Response<Body> {
    let text = serde_json::to_vec(body).expect("serialisable");
    Response::builder()
        .status(StatusCode::from_u16(status).unwrap_or(StatusCode::BAD_REQUEST))
        .header(names::CONTENT_TYPE, "application/json")
        .header(names::ERROR_CODE, error_code)
        .body(full(text))
        .expect("valid response")
}

/// One SSE event, `id:`/`event:`/`data:` without spaces, as the server writes it.
pub fn sse_frame(id: &str, event: &str, data: &impl serde::Serialize) -> Bytes {
    let data = serde_json::to_string(data).expect("serialisable");
    Bytes::from(format!("id:{id}\nevent:{event}\ndata:{data}\n\n"))
}

/// The head of an SSE answer: always 200 / Ok.
pub fn sse_response(body: Body) -> Response<Body> {
    Response::builder()
        .status(200)
        .header(names::CONTENT_TYPE, "text/event-stream")
        .header(names::ERROR_CODE, "Ok")
        .header("Cache-Control", "no-cache")
        .body(body)
        .expect("valid response")
}

/// Wow's answer to an exception none of its converters takes
/// (WebFluxErrorStrategy.kt): 500, `InternalServerError`.
pub fn internal_error() -> Response<Body> {
    json(
        500,
        "InternalServerError",
        &serde_json::json!({"errorCode": "InternalServerError", "errorMsg": "Unexpected server error", "succeeded": false}),
    )
}

/// A proxy's 503 page.
pub fn unavailable() -> Response<Body> {
    Response::builder()
        .status(503)
        .header(names::CONTENT_TYPE, "text/html")
        .body(full(
            "<html><body><h1>503 Service Unavailable</h1></body></html>",
        ))
        .expect("valid response")
}

/// Whether the Accept header prefers `text/event-stream` (q-values, then
/// Accept order; no header or `*/*` means JSON).
pub fn prefers_sse(accept: Option<&str>) -> bool {
    let Some(accept) = accept else { return false };
    let mut best: Option<(f32, bool)> = None;
    for part in accept.split(',') {
        let mut it = part.split(';');
        let media = it.next().unwrap_or("").trim().to_ascii_lowercase();
        let q = it
            .filter_map(|p| p.trim().strip_prefix("q="))
            .find_map(|q| q.parse::<f32>().ok())
            .unwrap_or(1.0);
        let is_sse = match media.as_str() {
            "text/event-stream" => true,
            "application/json" | "*/*" | "application/*" => false,
            _ => continue,
        };
        if best.is_none_or(|(bq, _)| q > bq) {
            best = Some((q, is_sse));
        }
    }
    best.is_some_and(|(_, sse)| sse)
}

#[cfg(test)]
mod tests {
    use super::prefers_sse;

    #[test]
    fn accept_negotiation() {
        assert!(!prefers_sse(None));
        assert!(!prefers_sse(Some("*/*")));
        assert!(prefers_sse(Some("text/event-stream")));
        assert!(!prefers_sse(Some("application/json, text/event-stream")));
        assert!(prefers_sse(Some(
            "application/json;q=0.5, text/event-stream"
        )));
    }
}
