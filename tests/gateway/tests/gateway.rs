//! The test gateway over real HTTP: routes, JSON and SSE answers, waits,
//! every fault, durability across `kill -9`, and races on the unique indexes.

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};

use serde_json::{json, Value};
use wow_command_client::core::protocol::{ResponseBody, SseDecoder, StreamElement};

struct Gateway {
    child: Child,
    base: String,
    db: std::path::PathBuf,
}

impl Gateway {
    fn start_on(db: std::path::PathBuf) -> Gateway {
        let mut child = Command::new(env!("CARGO_BIN_EXE_wow-test-gateway"))
            .args(["--listen", "127.0.0.1:0", "--retry-backoff-ms", "5", "--db"])
            .arg(&db)
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("gateway starts");
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        let base = line
            .trim()
            .strip_prefix("listening on ")
            .expect("first line")
            .to_owned();
        Gateway { child, base, db }
    }

    fn start() -> Gateway {
        static N: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
        let n = N.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let db =
            std::env::temp_dir().join(format!("wow-gw-test-{}-{n}.sqlite", std::process::id()));
        let _ = std::fs::remove_file(&db);
        Gateway::start_on(db)
    }

    fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base)
    }

    async fn faults(&self, rules: Value) {
        let r = reqwest::Client::new()
            .post(self.url("/__gateway/faults"))
            .json(&json!({ "rules": rules }))
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 200);
    }

    async fn fired(&self) -> Vec<Value> {
        let r: Value = get_json(self, "/__gateway/faults").await;
        r["fired"].as_array().cloned().unwrap_or_default()
    }

    /// The confirm query of PROTOCOL §5.4: streams of `id` carrying `request_id`.
    async fn count(&self, resource: &str, id: &str, request_id: &str) -> i64 {
        let body = json!({"operator": "AND", "children": [
            {"operator": "AGGREGATE_ID", "value": id},
            {"field": "requestId", "operator": "EQ", "value": request_id}]});
        let r = reqwest::Client::new()
            .post(self.url(&format!("/{resource}/event/count")))
            .json(&body)
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 200);
        r.json::<i64>().await.unwrap()
    }

    async fn streams(&self, id: &str) -> Vec<Value> {
        let r = reqwest::get(self.url(&format!("/account/{id}/event/1/1000")))
            .await
            .unwrap();
        r.json().await.unwrap()
    }
}

impl Drop for Gateway {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

async fn send(
    gw: &Gateway,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: Value,
) -> reqwest::Result<reqwest::Response> {
    let mut req = reqwest::Client::new()
        .request(method.parse().unwrap(), gw.url(path))
        .json(&body);
    for (k, v) in headers {
        req = req.header(*k, *v);
    }
    req.send().await
}

async fn create(gw: &Gateway, id: &str, rid: &str, balance: i64) -> reqwest::Response {
    call(
        gw,
        "POST",
        "/account/create_account",
        &[("Command-Aggregate-Id", id), ("Command-Request-Id", rid)],
        json!({"name": id, "balance": balance}),
    )
    .await
}

/// A GET whose answer is JSON.
async fn get_json(gw: &Gateway, path: &str) -> Value {
    reqwest::get(gw.url(path))
        .await
        .expect("the gateway answers")
        .json()
        .await
        .expect("a JSON answer")
}

/// `send`, for calls whose transport must succeed.
async fn call(
    gw: &Gateway,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: Value,
) -> reqwest::Response {
    send(gw, method, path, headers, body)
        .await
        .expect("the gateway answers")
}

/// Creates account `id` with `id` as its requestId too, plus `extra` headers.
async fn create_as(
    gw: &Gateway,
    id: &str,
    extra: &[(&str, &str)],
) -> reqwest::Result<reqwest::Response> {
    let mut headers = vec![("Command-Aggregate-Id", id), ("Command-Request-Id", id)];
    headers.extend_from_slice(extra);
    send(
        gw,
        "POST",
        "/account/create_account",
        &headers,
        json!({"name": "x", "balance": 1}),
    )
    .await
}

/// Reads an SSE answer with the SDK's own decoder; every element classified.
async fn stream(resp: reqwest::Response) -> (Vec<StreamElement>, bool) {
    let mut decoder = SseDecoder::default();
    let mut out = Vec::new();
    let mut resp = resp;
    let mut cut = false;
    loop {
        match resp.chunk().await {
            Ok(Some(bytes)) => decoder.feed(&bytes).unwrap(),
            Ok(None) => break,
            Err(_) => {
                cut = true;
                break;
            }
        }
    }
    while let Some(e) = decoder.next_event() {
        out.push(
            StreamElement::from_event(e.event.as_deref(), ResponseBody::from_json_text(&e.data))
                .unwrap(),
        );
    }
    (out, cut)
}

fn stages(elements: &[StreamElement]) -> Vec<String> {
    elements
        .iter()
        .map(|e| match e {
            StreamElement::Stage(r) => format!("{}:{}", r.stage, r.aggregate_id),
            StreamElement::Error { code, .. } => format!("error:{code}"),
        })
        .collect()
}

#[tokio::test]
async fn json_success_state_and_confirm_queries() {
    let gw = Gateway::start();
    let r = create(&gw, "src", "r1", 100).await;
    assert_eq!(r.status(), 200);
    assert_eq!(r.headers()["Wow-Error-Code"], "Ok");
    let body: Value = r.json().await.unwrap();
    assert_eq!(body["stage"], "PROCESSED");
    assert_eq!(body["aggregateVersion"], 1);
    assert_eq!(body["requestId"], "r1");
    assert_eq!(body["succeeded"], true);
    let state: Value = get_json(&gw, "/account/src/state").await;
    assert_eq!(state["balanceAmount"], 100);
    assert_eq!(gw.count("account", "src", "r1").await, 1);
    assert_eq!(gw.count("account", "src", "other").await, 0);
    let list: Value = call(&gw, "POST", "/account/event/list", &[], json!({"condition": {"operator": "AND", "children": [
        {"operator": "AGGREGATE_ID", "value": "src"}, {"field": "requestId", "operator": "EQ", "value": "r1"}]}, "limit": 1})).await.json().await.unwrap();
    assert_eq!(list[0]["version"], 1);
    assert_eq!(list[0]["body"][0]["name"], "account_created");
    let snapshot: Value = get_json(&gw, "/account/src/snapshot").await;
    assert_eq!(
        (
            snapshot["version"].as_i64(),
            snapshot["state"]["balanceAmount"].as_i64()
        ),
        (Some(1), Some(100))
    );
    assert_eq!(snapshot["tenantId"], "(0)");
    assert_eq!(
        reqwest::get(gw.url("/account/nobody/snapshot"))
            .await
            .unwrap()
            .status(),
        404
    );
    let missing = reqwest::get(gw.url("/account/nobody/state")).await.unwrap();
    assert_eq!(missing.status(), 404);
}

#[tokio::test]
async fn sse_stream_carries_every_stage_up_to_the_target() {
    let gw = Gateway::start();
    let r = call(
        &gw,
        "POST",
        "/account/create_account",
        &[
            ("Accept", "text/event-stream"),
            ("Command-Wait-Stage", "SNAPSHOT"),
            ("Command-Aggregate-Id", "a"),
        ],
        json!({"name": "a", "balance": 1}),
    )
    .await;
    assert_eq!(r.status(), 200);
    assert_eq!(r.headers()["content-type"], "text/event-stream");
    let (elements, cut) = stream(r).await;
    assert!(!cut);
    assert_eq!(stages(&elements), ["SENT:a", "PROCESSED:a", "SNAPSHOT:a"]);
    assert!(elements.iter().all(StreamElement::is_succeeded));
}

#[tokio::test]
async fn chain_wait_follows_the_saga_to_the_tail_stage() {
    let gw = Gateway::start();
    create(&gw, "s", "c1", 100).await;
    create(&gw, "t", "c2", 0).await;
    let headers = [
        ("Accept", "text/event-stream"),
        ("Command-Wait-Stage", "SAGA_HANDLED"),
        ("Command-Wait-Processor", "TransferSaga"),
        ("Command-Wait-Tail-Stage", "PROCESSED"),
        ("Command-Request-Id", "p1"),
    ];
    let (elements, _) = stream(
        call(
            &gw,
            "POST",
            "/account/s/prepare",
            &headers,
            json!({"to": "t", "amount": 10}),
        )
        .await,
    )
    .await;
    let seen = stages(&elements);
    assert_eq!(seen.first().map(String::as_str), Some("SENT:s"));
    assert!(seen.contains(&"SAGA_HANDLED:s".to_owned()), "{seen:?}");
    assert_eq!(
        seen.last().map(String::as_str),
        Some("PROCESSED:t"),
        "{seen:?}"
    );
    // Every signal keeps the original requestId, also the saga's.
    assert!(elements
        .iter()
        .all(|e| e.command_result().unwrap().request_id == "p1"));
    let state: Value = get_json(&gw, "/account/t/state").await;
    assert_eq!(state["balanceAmount"], 10);
}

#[tokio::test]
async fn gateway_rejections_and_bad_requests() {
    let gw = Gateway::start();
    let r = create(&gw, "v", "r1", -5).await;
    assert_eq!(r.status(), 400);
    assert_eq!(r.headers()["Wow-Error-Code"], "CommandValidation");
    let body: Value = r.json().await.unwrap();
    assert_eq!(body["stage"], "SENT");
    assert_eq!(body["bindingErrors"][0]["name"], "balance");
    assert_eq!(gw.count("account", "v", "r1").await, 0);

    let empty = reqwest::Client::new()
        .post(gw.url("/account/create_account"))
        .send()
        .await
        .unwrap();
    assert_eq!(empty.status(), 400);
    let info: Value = empty.json().await.unwrap();
    assert_eq!(info["errorCode"], "IllegalArgument");
    assert!(info.get("stage").is_none());

    let bad_stage = call(
        &gw,
        "POST",
        "/account/create_account",
        &[("Command-Wait-Stage", "DONE")],
        json!({"name": "x", "balance": 1}),
    )
    .await;
    assert_eq!(bad_stage.status(), 400);
    // The tail stage is read whenever it is given, as Wow reads it: an unknown
    // name is refused even when the stage makes no use of it.
    let bad_tail = call(
        &gw,
        "POST",
        "/account/create_account",
        &[
            ("Command-Wait-Stage", "PROCESSED"),
            ("Command-Wait-Tail-Stage", "later"),
        ],
        json!({"name": "x", "balance": 1}),
    )
    .await;
    assert_eq!(bad_tail.status(), 400);
    let info: Value = bad_tail.json().await.unwrap();
    assert_eq!(
        info["errorMsg"],
        "No enum constant me.ahoo.wow.command.wait.CommandStage.LATER"
    );
    let zero = call(
        &gw,
        "POST",
        "/account/create_account",
        &[("Command-Wait-Timeout", "0")],
        json!({"name": "x", "balance": 1}),
    )
    .await;
    assert_eq!(zero.status(), 400);
    let void = call(&gw, "PUT", "/owner/u1/cart/view_cart", &[], json!({})).await;
    assert_eq!(void.status(), 400);
    let void_sent = call(
        &gw,
        "PUT",
        "/owner/u1/cart/view_cart",
        &[("Command-Wait-Stage", "SENT")],
        json!({}),
    )
    .await;
    assert_eq!(void_sent.status(), 200);
    let unknown = call(&gw, "PUT", "/account/x/teleport", &[], json!({})).await;
    assert_eq!(unknown.status(), 404);
    let not_init = call(
        &gw,
        "POST",
        "/account/ghost/prepare",
        &[],
        json!({"to": "x", "amount": 1}),
    )
    .await;
    assert_eq!(not_init.status(), 404);
    let body: Value = not_init.json().await.unwrap();
    assert_eq!(
        (body["stage"].as_str(), body["errorCode"].as_str()),
        (Some("PROCESSED"), Some("NotFound"))
    );
}

#[tokio::test]
async fn conflicts_and_duplicates() {
    let gw = Gateway::start();
    create(&gw, "a", "r1", 10).await;
    // Same requestId: caught by the pre-check at SENT.
    let dup = create(&gw, "a", "r1", 10).await;
    assert_eq!(dup.status(), 400);
    let body: Value = dup.json().await.unwrap();
    assert_eq!(
        (body["stage"].as_str(), body["errorCode"].as_str()),
        (Some("SENT"), Some("DuplicateRequestId"))
    );
    assert!(body["aggregateVersion"].is_null());
    // A create on a taken id: a fresh aggregate at version 0 passes the
    // version check, and the append of version 1 conflicts (as Wow does).
    let taken = create(&gw, "a", "r2", 10).await;
    assert_eq!(taken.status(), 400);
    assert_eq!(taken.headers()["Wow-Error-Code"], "DuplicateAggregateId");
    let body: Value = taken.json().await.unwrap();
    assert_eq!(body["stage"], "PROCESSED");
    // Expected version mismatch.
    let stale = call(
        &gw,
        "PUT",
        "/account/a/lock_amount",
        &[("Command-Aggregate-Version", "7")],
        json!({"amount": 1}),
    )
    .await;
    assert_eq!(stale.status(), 409);
    let ok = call(
        &gw,
        "PUT",
        "/account/a/lock_amount",
        &[("Command-Aggregate-Version", "1")],
        json!({"amount": 1}),
    )
    .await;
    assert_eq!(ok.status(), 200);
    // Business rule at PROCESSED.
    let poor = call(
        &gw,
        "POST",
        "/account/a/prepare",
        &[],
        json!({"to": "b", "amount": 1000}),
    )
    .await;
    let body: Value = poor.json().await.unwrap();
    assert_eq!(
        (body["stage"].as_str(), body["errorCode"].as_str()),
        (Some("PROCESSED"), Some("IllegalState"))
    );
}

#[tokio::test]
async fn committed_streams_survive_kill_9_and_the_store_catches_duplicates_after_restart() {
    let gw = Gateway::start();
    create(&gw, "k", "r1", 10).await;
    let db = gw.db.clone();
    drop(gw); // SIGKILL
    let gw = Gateway::start_on(db);
    assert_eq!(gw.count("account", "k", "r1").await, 1);
    // The new process's pre-check is empty: the store rejects at PROCESSED.
    let first = call(
        &gw,
        "PUT",
        "/account/k/lock_amount",
        &[("Command-Request-Id", "r9")],
        json!({"amount": 1}),
    )
    .await;
    assert_eq!(first.status(), 200);
    let db = gw.db.clone();
    drop(gw);
    let gw = Gateway::start_on(db);
    let again = call(
        &gw,
        "PUT",
        "/account/k/lock_amount",
        &[("Command-Request-Id", "r9")],
        json!({"amount": 1}),
    )
    .await;
    let body: Value = again.json().await.unwrap();
    assert_eq!(
        (body["stage"].as_str(), body["errorCode"].as_str()),
        (Some("PROCESSED"), Some("DuplicateRequestId"))
    );
    assert_eq!(gw.count("account", "k", "r9").await, 1);
}

#[tokio::test]
async fn wait_timeout_is_request_timeout_in_both_modes() {
    let gw = Gateway::start();
    let headers = [
        ("Command-Wait-Stage", "PROJECTED"),
        ("Command-Wait-Processor", "NoSuchProjector"),
        ("Command-Wait-Timeout", "150"),
        ("Command-Aggregate-Id", "t1"),
    ];
    let r = call(
        &gw,
        "POST",
        "/account/create_account",
        &headers,
        json!({"name": "t", "balance": 1}),
    )
    .await;
    assert_eq!(r.status(), 408);
    let info: Value = r.json().await.unwrap();
    assert_eq!(info["errorCode"], "RequestTimeout");
    assert_eq!(
        gw.count("account", "t1", info["requestId"].as_str().unwrap_or(""))
            .await,
        0
    );
    let mut sse_headers = headers.to_vec();
    sse_headers[3] = ("Command-Aggregate-Id", "t2");
    sse_headers.push(("Accept", "text/event-stream"));
    let (elements, _) = stream(
        call(
            &gw,
            "POST",
            "/account/create_account",
            &sse_headers,
            json!({"name": "t", "balance": 1}),
        )
        .await,
    )
    .await;
    assert_eq!(
        stages(&elements),
        ["SENT:t2", "PROCESSED:t2", "error:RequestTimeout"]
    );
}

#[tokio::test]
async fn every_fault_does_what_a_deployment_does() {
    let gw = Gateway::start();
    let rule =
        |fault: &str, id: &str| json!({"match": {"aggregateId": id}, "fault": fault, "times": 1});

    gw.faults(json!([rule("drop_request", "f1")])).await;
    let dropped = create_as(&gw, "f1", &[]).await;
    assert!(dropped.is_err(), "closed without an answer");
    assert_eq!(gw.count("account", "f1", "f1").await, 0);

    gw.faults(json!([rule("unavailable", "f2")])).await;
    let r = create(&gw, "f2", "f2", 1).await;
    assert_eq!(r.status(), 503);
    assert!(r.text().await.unwrap().contains("<html>"));
    assert_eq!(gw.count("account", "f2", "f2").await, 0);

    gw.faults(json!([rule("reject_before_send", "f3")])).await;
    assert_eq!(create(&gw, "f3", "f3", 1).await.status(), 400);
    assert_eq!(gw.count("account", "f3", "f3").await, 0);
    // A body Wow took once it takes again: on a requestId the store holds,
    // the injected refusal does not fire, and the resend is its duplicate.
    assert_eq!(create(&gw, "f3", "f3", 1).await.status(), 200);
    gw.faults(json!([rule("reject_before_send", "f3")])).await;
    let again = create(&gw, "f3", "f3", 1).await;
    assert_eq!(again.status(), 400);
    assert!(again.text().await.unwrap().contains("DuplicateRequestId"));
    assert_eq!(gw.count("account", "f3", "f3").await, 1);

    gw.faults(json!([rule("drop_response_after_append", "f4")]))
        .await;
    let dropped = create_as(&gw, "f4", &[]).await;
    assert!(dropped.is_err(), "the connection is reset");
    assert_eq!(gw.count("account", "f4", "f4").await, 1);

    gw.faults(json!([rule("fail_processed_after_append", "f5")]))
        .await;
    let r = create(&gw, "f5", "f5", 1).await;
    assert_eq!(r.status(), 500);
    assert_eq!(gw.count("account", "f5", "f5").await, 1);

    gw.faults(
        json!([{"match": {"aggregateId": "f6"}, "fault": "delay", "delayMs": 300, "times": 1}]),
    )
    .await;
    let r = create_as(&gw, "f6", &[("Command-Wait-Timeout", "100")])
        .await
        .unwrap();
    assert_eq!(r.status(), 408);
    assert_eq!(gw.count("account", "f6", "f6").await, 0);
    tokio::time::sleep(std::time::Duration::from_millis(500)).await;
    assert_eq!(
        gw.count("account", "f6", "f6").await,
        1,
        "the append still happens"
    );

    gw.faults(json!([{"match": {"aggregateId": "f7"}, "fault": "cut_stream_after", "stage": "PROCESSED", "times": 1}])).await;
    let r = create_as(
        &gw,
        "f7",
        &[
            ("Accept", "text/event-stream"),
            ("Command-Wait-Stage", "SNAPSHOT"),
        ],
    )
    .await
    .unwrap();
    let (elements, cut) = stream(r).await;
    assert!(cut);
    assert_eq!(stages(&elements), ["SENT:f7", "PROCESSED:f7"]);

    gw.faults(json!([{"match": {"aggregateId": "f8"}, "fault": "downstream_fail", "stage": "SNAPSHOT", "times": 1}])).await;
    let r = create_as(
        &gw,
        "f8",
        &[
            ("Accept", "text/event-stream"),
            ("Command-Wait-Stage", "SNAPSHOT"),
        ],
    )
    .await
    .unwrap();
    let (elements, _) = stream(r).await;
    assert_eq!(
        stages(&elements),
        ["SENT:f8", "PROCESSED:f8", "SNAPSHOT:f8"]
    );
    assert!(!elements[2].is_succeeded());
    assert_eq!(gw.count("account", "f8", "f8").await, 1);

    gw.faults(json!([rule("duplicate_delivery", "f9")])).await;
    assert_eq!(create(&gw, "f9", "f9", 1).await.status(), 200);
    tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    assert_eq!(gw.count("account", "f9", "f9").await, 1);
    let fired = gw.fired().await;
    assert!(
        fired.iter().any(|f| f["path"]
            .as_str()
            .unwrap_or("")
            .contains("second delivery rejected")),
        "{fired:?}"
    );

    gw.faults(json!([rule("precheck_false_positive", "f10")]))
        .await;
    assert_eq!(create(&gw, "f10", "f10", 1).await.status(), 200);

    gw.faults(json!([{"fault": "query_unavailable", "times": 1}]))
        .await;
    let q = call(
        &gw,
        "POST",
        "/account/event/count",
        &[],
        json!({"operator": "AGGREGATE_ID", "value": "f10"}),
    )
    .await;
    assert_eq!(q.status(), 503);
    assert_eq!(gw.count("account", "f10", "f10").await, 1);

    let kinds: Vec<String> = gw
        .fired()
        .await
        .iter()
        .map(|f| f["fault"].as_str().unwrap().to_owned())
        .collect();
    for k in [
        "drop_request",
        "unavailable",
        "reject_before_send",
        "drop_response_after_append",
        "fail_processed_after_append",
        "delay",
        "cut_stream_after",
        "downstream_fail",
        "duplicate_delivery",
        "precheck_false_positive",
        "query_unavailable",
    ] {
        assert!(kinds.iter().any(|x| x == k), "{k} fired");
    }
}

#[tokio::test]
async fn query_guard() {
    let gw = Gateway::start();
    let cond = json!({"operator": "AGGREGATE_ID", "value": "x"});
    let no_limit = call(
        &gw,
        "POST",
        "/account/event/list",
        &[],
        json!({"condition": cond}),
    )
    .await;
    assert_eq!(no_limit.status(), 400);
    let unknown = call(
        &gw,
        "POST",
        "/account/event/list",
        &[],
        json!({"condition": {"operator": "LIKE"}, "limit": 1}),
    )
    .await;
    assert_eq!(unknown.status(), 400);
    let all = call(
        &gw,
        "POST",
        "/account/event/count",
        &[],
        json!({"operator": "ALL"}),
    )
    .await;
    assert_eq!(all.status(), 400);
    let wide = reqwest::get(gw.url("/account/x/event/1/2147483646"))
        .await
        .unwrap();
    assert_eq!(wide.status(), 400);
    let paged = call(
        &gw,
        "POST",
        "/account/event/paged",
        &[],
        json!({"condition": cond, "pagination": {"index": 1, "size": 10}}),
    )
    .await;
    assert_eq!(paged.status(), 200);
    assert_eq!(paged.json::<Value>().await.unwrap()["total"], 0);
}

#[tokio::test]
async fn cors_preflight_allows_command_headers() {
    let gw = Gateway::start();
    let r = reqwest::Client::new()
        .request(reqwest::Method::OPTIONS, gw.url("/account/create_account"))
        .header("Origin", "http://example.test")
        .header("Access-Control-Request-Method", "POST")
        .header(
            "Access-Control-Request-Headers",
            "command-request-id,command-wait-stage,content-type",
        )
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 204);
    assert_eq!(r.headers()["access-control-allow-origin"], "*");
    assert!(r.headers()["access-control-allow-headers"]
        .to_str()
        .unwrap()
        .contains("command-request-id"));
}

#[tokio::test]
async fn races_end_in_exactly_one_stored_stream() {
    let gw = std::sync::Arc::new(Gateway::start());
    let creates = (0..50).map(|i| {
        let gw = gw.clone();
        tokio::spawn(async move {
            create(&gw, "race", &format!("c{i}"), 1)
                .await
                .status()
                .as_u16()
        })
    });
    let statuses: Vec<u16> = futures_util::future::join_all(creates)
        .await
        .into_iter()
        .map(Result::unwrap)
        .collect();
    assert_eq!(
        statuses.iter().filter(|s| **s == 200).count(),
        1,
        "{statuses:?}"
    );
    assert_eq!(gw.streams("race").await.len(), 1);

    let same = (0..50).map(|_| {
        let gw = gw.clone();
        tokio::spawn(async move {
            call(
                &gw,
                "PUT",
                "/account/race/lock_amount",
                &[("Command-Request-Id", "once")],
                json!({"amount": 1}),
            )
            .await
            .status()
            .as_u16()
        })
    });
    let statuses: Vec<u16> = futures_util::future::join_all(same)
        .await
        .into_iter()
        .map(Result::unwrap)
        .collect();
    assert_eq!(
        statuses.iter().filter(|s| **s == 200).count(),
        1,
        "{statuses:?}"
    );
    assert_eq!(gw.count("account", "race", "once").await, 1);
    assert_eq!(gw.streams("race").await.len(), 2);
}

#[tokio::test]
async fn cart_and_sales_order_routes() {
    let gw = Gateway::start();
    // Cart: owner = aggregate id, add_cart_item allows create.
    let add = call(
        &gw,
        "POST",
        "/owner/u1/cart/add_cart_item",
        &[],
        json!({"productId": "p1"}),
    )
    .await;
    assert_eq!(add.status(), 200);
    let body: Value = add.json().await.unwrap();
    assert_eq!(
        (
            body["aggregateId"].as_str(),
            body["aggregateVersion"].as_i64()
        ),
        (Some("u1"), Some(1))
    );
    call(
        &gw,
        "PUT",
        "/owner/u1/cart/change_quantity",
        &[],
        json!({"productId": "p1", "quantity": 3}),
    )
    .await;
    let cart = get_json(&gw, "/owner/u1/cart/state").await;
    assert_eq!(cart["items"][0]["quantity"], 3);
    // Its snapshot at the owner route (`example.cart.owner.snapshot.load`).
    let snapshot = get_json(&gw, "/owner/u1/cart/snapshot").await;
    assert_eq!(snapshot["state"]["items"][0]["quantity"], 3);
    let missing = call(
        &gw,
        "PUT",
        "/owner/u1/cart/change_quantity",
        &[],
        json!({"productId": "nope", "quantity": 1}),
    )
    .await;
    assert_eq!(missing.headers()["Wow-Error-Code"], "IllegalState");

    // Sales order: tenant + owner paths, result.totalAmount, the stored error event.
    let order = json!({"items": [{"productId": "p1", "price": 2.5, "quantity": 4}],
        "address": {"country": "China", "province": "p", "city": "c", "district": "d", "detail": "x"}, "fromCart": false});
    let created = call(
        &gw,
        "POST",
        "/tenant/t1/owner/o1/sales-order",
        &[("Command-Aggregate-Id", "o-1")],
        order.clone(),
    )
    .await;
    assert_eq!(created.status(), 200);
    let body: Value = created.json().await.unwrap();
    assert_eq!(body["result"]["totalAmount"], 10.0);
    assert_eq!(body["tenantId"], "t1");
    let mut elsewhere = order.clone();
    elsewhere["address"]["country"] = json!("china");
    let refused = call(
        &gw,
        "POST",
        "/tenant/t1/owner/o1/sales-order",
        &[],
        elsewhere,
    )
    .await;
    assert_eq!(refused.headers()["Wow-Error-Code"], "IllegalArgument");
    async fn pay(gw: &Gateway, rid: &str) -> reqwest::Response {
        let headers = [("Command-Request-Id", rid)];
        let body = json!({"paymentId": "pay-1", "amount": 10});
        call(gw, "POST", "/tenant/t1/sales-order/o-1/pay", &headers, body).await
    }
    assert_eq!(pay(&gw, "pay-a").await.status(), 200);
    let again = pay(&gw, "pay-b").await;
    assert_eq!(again.headers()["Wow-Error-Code"], "OrderPayDuplicated");
    let body: Value = again.json().await.unwrap();
    assert_eq!(
        (body["stage"].as_str(), body["aggregateVersion"].as_i64()),
        (Some("PROCESSED"), Some(3))
    );
    // The error event is stored all the same, under the tenant-scoped query path.
    let count = call(&gw, "POST", "/tenant/t1/sales-order/event/count", &[], json!({"operator": "AND", "children": [
        {"operator": "AGGREGATE_ID", "value": "o-1"}, {"field": "requestId", "operator": "EQ", "value": "pay-b"}]})).await;
    assert_eq!(count.json::<i64>().await.unwrap(), 1);
    let other_tenant = call(
        &gw,
        "POST",
        "/tenant/t2/sales-order/event/count",
        &[],
        json!({"operator": "AGGREGATE_ID", "value": "o-1"}),
    )
    .await;
    assert_eq!(other_tenant.json::<i64>().await.unwrap(), 0);
}

#[tokio::test]
async fn built_in_delete_and_recover() {
    let gw = Gateway::start();
    create(&gw, "d", "d1", 5).await;
    let deleted = call(&gw, "DELETE", "/account/d", &[], json!({})).await;
    assert_eq!(deleted.status(), 200);
    assert_eq!(
        reqwest::get(gw.url("/account/d/state"))
            .await
            .unwrap()
            .status(),
        404
    );
    let refused = call(
        &gw,
        "PUT",
        "/account/d/lock_amount",
        &[],
        json!({"amount": 1}),
    )
    .await;
    assert_eq!(refused.status(), 410);
    assert_eq!(
        refused.headers()["Wow-Error-Code"],
        "IllegalAccessDeletedAggregate"
    );
    let recovered = call(&gw, "PUT", "/account/d/recover", &[], json!({})).await;
    assert_eq!(recovered.status(), 200);
    assert_eq!(
        call(
            &gw,
            "PUT",
            "/account/d/lock_amount",
            &[],
            json!({"amount": 1})
        )
        .await
        .status(),
        200
    );
    let again = call(&gw, "PUT", "/account/d/recover", &[], json!({})).await;
    assert_eq!(again.headers()["Wow-Error-Code"], "IllegalState");
    // Owner = aggregate id: no {id} in the path.
    call(
        &gw,
        "POST",
        "/owner/u9/cart/add_cart_item",
        &[],
        json!({"productId": "p"}),
    )
    .await;
    assert_eq!(
        call(&gw, "DELETE", "/owner/u9/cart", &[], json!({}))
            .await
            .status(),
        200
    );
    assert_eq!(
        reqwest::get(gw.url("/owner/u9/cart/state"))
            .await
            .unwrap()
            .status(),
        404
    );
}
