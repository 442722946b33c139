//! The client against the real test gateway, in headless Chromium and in
//! Node: every fault ends in the outcome the design rules prescribe, and the
//! gateway's history holds exactly one stream per intent.
#![allow(clippy::disallowed_macros)] // a test: format! is allowed here (clippy.toml)
#![cfg(target_arch = "wasm32")]

mod support;

use support::gateway_client::*;
use support::memory_adapter;
use wasm_bindgen_test::*;

#[wasm_bindgen_test]
async fn send_and_wait_resolves_to_the_command_result() {
    let c = client(json!({})).await;
    let id = unique("ok");
    let r = rust(&settle(c.send_and_wait(create(&id), None)).await.unwrap());
    assert_eq!(r["stage"], "PROCESSED");
    assert_eq!(r["aggregateId"], id.as_str());
    assert_eq!(r["succeeded"], true);
    let request_id = r["requestId"].as_str().unwrap();
    assert_eq!(stored("account", &id, request_id).await, 1);
    let intents = rust(&settle(c.intents()).await.unwrap());
    assert_eq!(intents[0]["state"], "succeeded");
    assert_eq!(intents[0]["requestId"], request_id);
}

#[wasm_bindgen_test]
async fn the_stream_yields_every_stage_and_checks_each() {
    let c = client(json!({})).await;
    let id = unique("st");
    let handle = c
        .send_and_wait_stream(with(&create(&id), json!({"waitStage": "SNAPSHOT"})), None)
        .unwrap();
    let got = rust(&JsFuture::from(collect(&handle)).await.unwrap());
    let stages: Vec<&str> = got["elements"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["stage"].as_str().unwrap())
        .collect();
    assert_eq!(stages, ["SENT", "PROCESSED", "SNAPSHOT"]);
    assert!(got["error"].is_null());
    assert_eq!(got["outcome"]["status"], "succeeded");
}

#[wasm_bindgen_test]
async fn drop_response_after_append_is_confirmed_and_never_resent() {
    for stream in [false, true] {
        let c = client(json!({})).await;
        let id = unique("drop");
        fault(json!({"match": {"aggregateId": id}, "fault": "drop_response_after_append", "times": 1})).await;
        let o = if stream {
            let h = c.send_and_wait_stream(create(&id), None).unwrap();
            rust(&JsFuture::from(collect(&h)).await.unwrap())["outcome"].clone()
        } else {
            outcome(&c, create(&id)).await
        };
        assert_eq!(o["status"], "succeeded", "{o}");
        assert_eq!(o["appended"], true);
        assert_eq!(o["attempts"], 1, "confirmed, not resent");
        assert_eq!(
            stored("account", &id, o["requestId"].as_str().unwrap()).await,
            1
        );
    }
}

/// A proxy that hands back another request's success proves nothing: the
/// attempt is confirmed against history; once, it is retried and succeeds;
/// always, the intent stays unknown and never claims an append.
#[wasm_bindgen_test]
async fn an_answer_for_another_request_is_never_taken_as_this_intents() {
    for stream in [false, true] {
        for times in [1, 100] {
            let c = client(json!({"retry": {"baseMs": 1, "maxMs": 5}})).await;
            let id = unique("misroute");
            fault(
                json!({"match": {"aggregateId": id}, "fault": "misroute_answer", "times": times}),
            )
            .await;
            let o = if stream {
                let h = c.send_and_wait_stream(create(&id), None).unwrap();
                let all = rust(&JsFuture::from(collect(&h)).await.unwrap());
                for e in all["elements"].as_array().unwrap() {
                    assert_eq!(
                        e["aggregateId"],
                        id.as_str(),
                        "only this intent's elements are shown: {e}"
                    );
                }
                all["outcome"].clone()
            } else {
                outcome(&c, create(&id)).await
            };
            let request_id = o["requestId"].as_str().unwrap();
            let reason = o["reason"].as_str().unwrap_or_default();
            assert!(reason.contains("not for this intent"), "{o}");
            if times == 1 {
                assert_eq!(o["status"], "succeeded", "{o}");
                assert_eq!(o["attempts"], 2, "the same requestId sent again: {o}");
                assert_eq!(stored("account", &id, request_id).await, 1);
            } else {
                assert_eq!(o["status"], "unknown", "{o}");
                assert_eq!(
                    o["appended"], false,
                    "history says nothing was appended: {o}"
                );
                assert_eq!(stored("account", &id, request_id).await, 0);
            }
        }
    }
}

/// A header value from `headers()` with a line break in it is refused
/// before anything is sent: requests are built from one header string split
/// at line breaks in JS, so a value that held one could add a header.
#[wasm_bindgen_test]
async fn a_header_value_with_a_line_break_never_leaves() {
    let options = js(
        json!({"baseUrl": base(), "user": null, "storage": "memory", "namespace": unique("crlf"), "timeoutMs": 5000}),
    );
    let headers = js_sys::Function::new_no_args("return { 'X-Trace': 'a\\r\\nX-Injected: 1' };");
    js_sys::Reflect::set(&options, &"headers".into(), &headers).unwrap();
    let c = WowClient::open(options).await.unwrap();
    let id = unique("crlf");
    let o = &rust(&settle(c.send(create(&id), None)).await.unwrap());
    assert_eq!(o["status"], "rejected", "{o}");
    assert_eq!(o["appended"], false, "{o}");
    let msg = o["error"]["errorMsg"].as_str().unwrap_or_default();
    assert!(msg.contains("X-Trace"), "{o}");
    assert_eq!(
        stored("account", &id, o["requestId"].as_str().unwrap()).await,
        0
    );
}

/// `headers` that never settles ends the call within `callbackTimeoutMs`:
/// nothing was sent, the error says why, the journal records it, and the
/// same client's next command succeeds.
#[wasm_bindgen_test]
async fn a_headers_callback_that_never_settles_ends_the_call_and_poisons_nothing() {
    let options = js(
        json!({"baseUrl": base(), "user": null, "storage": "memory", "namespace": unique("hang"),
        "timeoutMs": 5000, "callbackTimeoutMs": 200}),
    );
    js_sys::Reflect::set(&options, &"headers".into(), &headers_hanging_once()).unwrap();
    let c = WowClient::open(options).await.unwrap();
    let id = unique("hung");
    // Ended by the callback's own bound (the message names it), not by the attempt's 5 s.
    let o = &rust(&settle(c.send(create(&id), None)).await.unwrap());
    assert_eq!(o["status"], "rejected", "{o}");
    assert_eq!(o["appended"], false);
    let msg = o["error"]["errorMsg"].as_str().unwrap_or_default();
    assert!(
        msg.contains("headers() did not settle within 200 ms"),
        "{o}"
    );
    assert_eq!(
        stored("account", &id, o["requestId"].as_str().unwrap()).await,
        0
    );
    let journal = rust(&settle(c.intents()).await.unwrap());
    let record = journal
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["requestId"] == o["requestId"])
        .unwrap();
    assert_eq!(record["state"], "rejected", "{record}");
    let next = unique("after");
    let ok = outcome(&c, create(&next)).await;
    assert_eq!(ok["status"], "succeeded", "{ok}");
}

/// Bodies JSON cannot carry, or beyond the limits, are refused before
/// anything is persisted, with the field and the limit in the message; the
/// same client's next command succeeds.
#[wasm_bindgen_test]
async fn hostile_bodies_are_refused_before_anything_is_stored() {
    let c = client(json!({"maxBodyChars": 4096, "maxBodyDepth": 8})).await;
    for case in hostile_bodies().iter() {
        let name = js_sys::Reflect::get(&case, &"name".into())
            .unwrap()
            .as_string()
            .unwrap();
        let body = js_sys::Reflect::get(&case, &"body".into()).unwrap();
        let expected = js_sys::Reflect::get(&case, &"message".into())
            .unwrap()
            .as_string()
            .unwrap();
        let command = lock(&unique("hostile"), 1);
        js_sys::Reflect::set(&command, &"body".into(), &body).unwrap();
        let e = rust(&error_of(&settle(c.send(command, None)).await.unwrap_err()));
        assert_eq!(e["isCommandError"], true, "{name}: {e}");
        assert_eq!(e["code"], "InvalidCommand", "{name}: {e}");
        let message = e["message"].as_str().unwrap_or_default();
        assert!(
            message.contains("command.body") && message.contains(&expected),
            "{name}: {message}"
        );
    }
    assert_eq!(
        rust(&settle(c.intents()).await.unwrap()),
        json!([]),
        "nothing was persisted"
    );
    let id = unique("after");
    assert_eq!(outcome(&c, create(&id)).await["status"], "succeeded");
}

/// A confirmer that never settles is history that cannot be asked: bounded
/// queries, then escalated, never a blind resend.
#[wasm_bindgen_test]
async fn a_confirmer_that_never_settles_escalates() {
    let options = js(
        json!({"baseUrl": base(), "user": null, "storage": "memory", "namespace": unique("hang"),
        "timeoutMs": 5000, "callbackTimeoutMs": 100, "retry": {"maxConfirms": 2}}),
    );
    js_sys::Reflect::set(&options, &"confirm".into(), &confirm_never_settles()).unwrap();
    let c = WowClient::open(options).await.unwrap();
    let id = unique("noconfirm");
    fault(json!({"match": {"aggregateId": id}, "fault": "drop_response_after_append", "times": 1}))
        .await;
    let o = outcome(&c, create(&id)).await;
    assert_eq!(o["status"], "escalated", "{o}");
    assert_eq!(
        o["attempts"], 1,
        "never resent without an answer from history"
    );
    assert!(
        o["reason"]
            .as_str()
            .unwrap_or_default()
            .contains("confirm() did not settle"),
        "{o}"
    );
}

/// A storage adapter whose operations never settle is unavailable storage:
/// `connect` rejects within the bound with `StorageUnavailable`.
#[wasm_bindgen_test]
async fn a_storage_adapter_that_never_settles_is_unavailable_storage() {
    let options = js(
        json!({"baseUrl": base(), "user": null, "namespace": unique("hang"), "callbackTimeoutMs": 150}),
    );
    js_sys::Reflect::set(&options, &"storage".into(), &hanging_adapter()).unwrap();
    let refused = WowClient::open(options)
        .await
        .err()
        .expect("connect refuses");
    let e = rust(&error_of(&refused));
    assert_eq!(e["code"], "StorageUnavailable", "{e}");
    assert!(
        e["message"]
            .as_str()
            .unwrap_or_default()
            .contains("list() did not settle within 150 ms"),
        "ended by the adapter's bound: {e}"
    );
}

#[wasm_bindgen_test]
async fn lost_requests_and_proxy_errors_are_retried_with_the_same_request_id() {
    for kind in ["drop_request", "unavailable"] {
        let c = client(json!({})).await;
        let id = unique(kind);
        fault(json!({"match": {"aggregateId": id}, "fault": kind, "times": 1})).await;
        let o = outcome(&c, create(&id)).await;
        assert_eq!(o["status"], "succeeded", "{kind}: {o}");
        // The client retries once; a browser may already have replayed the
        // POST itself on a dropped keep-alive connection (same requestId).
        assert!(matches!(o["attempts"].as_u64(), Some(1 | 2)), "{kind}: {o}");
        assert_eq!(
            stored("account", &id, o["requestId"].as_str().unwrap()).await,
            1
        );
        assert_eq!(fired(&id).await, [kind]);
    }
}

#[wasm_bindgen_test]
async fn processing_slower_than_the_caller_still_ends_in_one_stream() {
    // The server's own wait (Command-Wait-Timeout) outlasts the caller's, so
    // the caller's deadline, not the gateway's RequestTimeout answer, ends
    // the first wait: with both at 400 ms, which came first depended on the
    // engine (Firefox once recorded the answer, 15 ms after the deadline).
    let c = client(json!({"timeoutMs": 400, "waitTimeoutMs": 5000})).await;
    let id = unique("slow");
    fault(json!({"match": {"aggregateId": id}, "fault": "delay", "delayMs": 1200, "times": 1}))
        .await;
    let o = outcome(&c, create(&id)).await;
    assert_eq!(o["status"], "succeeded", "{o}");
    let rid = o["requestId"].as_str().unwrap().to_owned();
    // Wait for the delayed first delivery: the store must refuse it.
    JsFuture::from(gateway_idle(base())).await.unwrap();
    assert_eq!(stored("account", &id, &rid).await, 1);
    // The journal says how each wait ended, beside the caller's deadline.
    let journal = rust(&settle(c.intents()).await.unwrap());
    let Some(record) = journal
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["requestId"] == rid.as_str())
    else {
        let aside = rust(&settle(c.quarantined()).await.unwrap());
        panic!("no record of {rid} ({o}) in the journal: {journal}; quarantined: {aside}");
    };
    let first = &record["attempts"][0];
    assert_eq!(first["waitEndedBy"], "timeout", "{record}");
    assert!(
        first["callerDeadline"].as_i64().unwrap() >= first["sentAt"].as_i64().unwrap() + 400,
        "{record}"
    );
}

#[wasm_bindgen_test]
async fn gateway_validation_is_a_typed_rejection() {
    let c = client(json!({})).await;
    let id = unique("bad");
    let bad = js(
        json!({"aggregate": {"resource": "account", "id": id}, "action": "create_account",
                        "create": true, "body": {"name": "", "balance": -1}}),
    );
    let e = failure(&c, bad).await;
    assert_eq!(e["isCommandError"], true);
    assert_eq!(
        (e["code"].as_str(), e["outcome"].as_str()),
        (Some("CommandValidation"), Some("rejected"))
    );
    assert_eq!(e["appended"], false);
    assert_eq!(e["stage"], "SENT");
    assert_eq!(e["bindingErrors"].as_array().unwrap().len(), 2);
}

#[wasm_bindgen_test]
async fn business_rejections_are_confirmed_and_reported() {
    let c = client(json!({})).await;
    let id = unique("biz");
    settle(c.send_and_wait(create(&id), None)).await.unwrap();
    let prepare = js(
        json!({"aggregate": {"resource": "account", "id": id}, "action": "prepare",
                            "method": "POST", "body": {"to": "x", "amount": 1000}}),
    );
    let e = failure(&c, prepare).await;
    assert_eq!(
        (e["code"].as_str(), e["outcome"].as_str()),
        (Some("IllegalState"), Some("rejected"))
    );
    assert_eq!(e["appended"], false, "confirmed against history");
    assert_eq!(e["stage"], "PROCESSED");
}

#[wasm_bindgen_test]
async fn a_version_conflict_goes_to_the_caller() {
    let c = client(json!({})).await;
    let id = unique("ver");
    settle(c.send_and_wait(create(&id), None)).await.unwrap();
    let stale = with(&lock(&id, 1), json!({"expectedVersion": 7}));
    let e = failure(&c, stale).await;
    assert_eq!(
        (e["code"].as_str(), e["outcome"].as_str()),
        (Some("CommandExpectVersionConflict"), Some("conflict"))
    );
    assert_eq!(e["appended"], false);
}

#[wasm_bindgen_test]
async fn a_create_on_a_taken_id_tells_mine_from_theirs() {
    let mine = client(json!({})).await;
    let theirs = client(json!({})).await;
    let id = unique("taken");
    settle(theirs.send_and_wait(create(&id), None))
        .await
        .unwrap();
    let e = failure(&mine, create(&id)).await;
    assert_eq!(e["outcome"], "conflict", "{e}");
    // Wow's answer to a create on a taken id: the append of version 1 fails.
    assert_eq!(e["code"], "DuplicateAggregateId", "{e}");
    assert_eq!(e["stage"], "PROCESSED", "{e}");
    assert_eq!(
        e["appended"], false,
        "history says the id is someone else's: {e}"
    );
    // My own earlier create, after local storage was lost: the business key
    // derives the same requestId and aggregate id, and history says "mine".
    let ns = unique("lost");
    let key = unique("signup");
    let keyed = js(
        json!({"aggregate": {"resource": "account"}, "action": "create_account", "create": true,
                          "intentKey": key, "body": {"name": "k", "balance": 1}}),
    );
    let before = outcome(&client(json!({"namespace": ns})).await, keyed.clone()).await;
    assert_eq!(before["status"], "succeeded");
    let after = outcome(&client(json!({"namespace": ns})).await, keyed).await;
    assert_eq!(after["status"], "succeeded", "{after}");
    assert_eq!(after["requestId"], before["requestId"]);
    assert_eq!(after["appended"], true);
    let aggregate = before["result"]["aggregateId"].as_str().unwrap();
    assert_eq!(
        after["result"]["aggregateId"].as_str().unwrap_or(aggregate),
        aggregate
    );
    assert_eq!(
        stored("account", aggregate, before["requestId"].as_str().unwrap()).await,
        1
    );
}

#[wasm_bindgen_test]
async fn the_same_intent_key_replays_the_outcome_without_sending() {
    let c = client(json!({})).await;
    let id = unique("key");
    settle(c.send_and_wait(create(&id), None)).await.unwrap();
    let key = unique("pay");
    let cmd = with(&lock(&id, 3), json!({"intentKey": key}));
    let first = outcome(&c, cmd.clone()).await;
    let again = outcome(&c, cmd).await;
    assert_eq!(first["status"], "succeeded");
    assert_eq!(again["status"], "succeeded");
    assert_eq!(first["requestId"], again["requestId"]);
    assert_eq!(
        stored("account", &id, first["requestId"].as_str().unwrap()).await,
        1
    );
    let other = with(&lock(&id, 4), json!({"intentKey": key}));
    let e = failure(&c, other).await;
    assert_eq!(e["code"], "IntentKeyReused");
}

/// A keyed intent refused before the command bus (here the gateway's own
/// check at SENT, as an auth proxy's 401 would be) is sent again by the same
/// key with the same requestId; one rejected at PROCESSED is replayed.
#[wasm_bindgen_test]
async fn a_refusal_before_the_bus_does_not_end_a_keyed_intent() {
    let c = client(json!({})).await;
    let id = unique("refused");
    settle(c.send_and_wait(create(&id), None)).await.unwrap();
    fault(json!({"match": {"aggregateId": id}, "fault": "reject_before_send", "times": 1})).await;
    let cmd = with(&lock(&id, 2), json!({"intentKey": unique("after-sign-in")}));
    let refused = outcome(&c, cmd.clone()).await;
    assert_eq!(refused["status"], "rejected", "{refused}");
    assert_eq!(refused["appended"], false);
    let again = outcome(&c, cmd.clone()).await;
    assert_eq!(
        again["status"], "succeeded",
        "sent again, not replayed: {again}"
    );
    assert_eq!(
        again["requestId"], refused["requestId"],
        "the same requestId"
    );
    assert_eq!(
        stored("account", &id, again["requestId"].as_str().unwrap()).await,
        1
    );
    // A business rejection at PROCESSED is the server's decision: replayed.
    let too_much = js(
        json!({"aggregate": {"resource": "account", "id": id}, "action": "prepare",
        "method": "POST", "body": {"to": "x", "amount": 1000}, "intentKey": unique("too-much")}),
    );
    let first = outcome(&c, too_much.clone()).await;
    assert_eq!(first["status"], "rejected", "{first}");
    assert_eq!(first["result"]["stage"], "PROCESSED", "{first}");
    let replayed = outcome(&c, too_much).await;
    assert_eq!(replayed["status"], "rejected");
    assert_eq!(
        replayed["attempts"], first["attempts"],
        "not sent again: {replayed}"
    );
}

#[wasm_bindgen_test]
async fn an_unconfirmable_outcome_is_escalated_then_confirmed_by_hand() {
    let c = client(json!({"retry": {"baseMs": 20, "maxConfirms": 2}})).await;
    let id = unique("esc");
    fault(json!({"match": {"aggregateId": id}, "fault": "drop_response_after_append", "times": 1}))
        .await;
    fault(json!({"match": {"path": "/account/event/*"}, "fault": "query_unavailable", "times": 2}))
        .await;
    let e = failure(&c, create(&id)).await;
    assert_eq!(e["outcome"], "escalated", "{e}");
    assert!(e["appended"].is_null());
    let intents = rust(&settle(c.intents()).await.unwrap());
    assert_eq!(intents[0]["state"], "escalated");
    let confirmed = rust(
        &settle(c.confirm(e["requestId"].as_str().unwrap().into(), None))
            .await
            .unwrap(),
    );
    assert_eq!(confirmed["status"], "succeeded");
    assert_eq!(confirmed["appended"], true);
    assert_eq!(confirmed["attempts"], 1, "confirmation never sends");
}

#[wasm_bindgen_test]
async fn stream_faults_cut_and_downstream_failures() {
    let c = client(json!({})).await;
    // Cut after PROCESSED while waiting for SNAPSHOT: appended, stage pending.
    let id = unique("cut");
    fault(json!({"match": {"aggregateId": id}, "fault": "cut_stream_after", "stage": "PROCESSED", "times": 1})).await;
    let h = c
        .send_and_wait_stream(with(&create(&id), json!({"waitStage": "SNAPSHOT"})), None)
        .unwrap();
    let got = rust(&JsFuture::from(collect(&h)).await.unwrap());
    assert_eq!(got["outcome"]["status"], "succeeded", "{got}");
    assert_eq!(got["outcome"]["downstreamPending"], "SNAPSHOT");
    // Cut after SENT: unknown, confirmed, appended.
    let id = unique("cut-sent");
    fault(json!({"match": {"aggregateId": id}, "fault": "cut_stream_after", "stage": "SENT", "times": 1})).await;
    let h = c.send_and_wait_stream(create(&id), None).unwrap();
    let got = rust(&JsFuture::from(collect(&h)).await.unwrap());
    assert_eq!(got["outcome"]["status"], "succeeded", "{got}");
    assert_eq!(got["outcome"]["attempts"], 1);
    assert_eq!(
        stored(
            "account",
            &id,
            got["outcome"]["requestId"].as_str().unwrap()
        )
        .await,
        1
    );
    // A failed SNAPSHOT element: the stream throws at its end, appended.
    let id = unique("down");
    fault(json!({"match": {"aggregateId": id}, "fault": "downstream_fail", "stage": "SNAPSHOT", "times": 1})).await;
    let h = c
        .send_and_wait_stream(with(&create(&id), json!({"waitStage": "SNAPSHOT"})), None)
        .unwrap();
    let got = rust(&JsFuture::from(collect(&h)).await.unwrap());
    let last = got["elements"].as_array().unwrap().last().unwrap().clone();
    assert_eq!(
        (last["stage"].as_str(), last["succeeded"].as_bool()),
        (Some("SNAPSHOT"), Some(false))
    );
    assert_eq!(got["outcome"]["status"], "rejected");
    assert_eq!(got["outcome"]["appended"], true);
    assert!(!got["error"].is_null(), "the iterator throws at the end");
}

#[wasm_bindgen_test]
async fn duplicate_delivery_and_precheck_false_positives_are_invisible() {
    let c = client(json!({})).await;
    for kind in [
        "duplicate_delivery",
        "precheck_false_positive",
        "fail_processed_after_append",
    ] {
        let id = unique(kind);
        fault(json!({"match": {"aggregateId": id}, "fault": kind, "times": 1})).await;
        let o = outcome(&c, create(&id)).await;
        assert_eq!(o["status"], "succeeded", "{kind}: {o}");
        assert_eq!(
            stored("account", &id, o["requestId"].as_str().unwrap()).await,
            1,
            "{kind}"
        );
    }
}

#[wasm_bindgen_test]
async fn bad_input_is_refused_before_anything_is_stored() {
    let c = client(json!({})).await;
    for (cmd, needle) in [
        (
            json!({"aggregate": {"resource": "account"}, "action": "lock_amount", "body": {}}),
            "aggregate.id",
        ),
        (
            json!({"aggregate": {"resource": "account", "id": "x"}, "action": "a", "waitStage": "DONE"}),
            "wait stage",
        ),
        (
            json!({"aggregate": {"resource": "account", "id": "x"}, "action": "a", "headers": {"X-Bad": "a\nb"}}),
            "X-Bad",
        ),
        (json!({"action": "a"}), "aggregate"),
    ] {
        let e = failure(&c, js(cmd)).await;
        assert_eq!(e["code"], "InvalidCommand");
        assert!(e["message"].as_str().unwrap().contains(needle), "{e}");
    }
    assert_eq!(
        rust(&settle(c.intents()).await.unwrap())
            .as_array()
            .unwrap()
            .len(),
        0
    );
    // A mistake in connect's options is a TypeError, not a command's outcome.
    let bad = WowClient::open(js(json!({"baseUrl": "localhost:1"}))).await;
    let bad = bad.err().expect("connect refuses");
    assert!(bad.is_instance_of::<js_sys::TypeError>(), "{bad:?}");
}

#[wasm_bindgen_test]
async fn resume_after_a_crash_finishes_the_same_request_id() {
    use wow_command_client::core::journal::{IntentState, RecordStore};
    use wow_command_client::web::storage::AnyStore;

    // The page that crashed: it persisted the intent as "sending" and died.
    let adapter = memory_adapter(true);
    let ns = unique("crash");
    let setup = client_over(json!({"namespace": ns}), adapter.clone()).await;
    let id = unique("acct");
    settle(setup.send_and_wait(create(&id), None))
        .await
        .unwrap();
    let store = AnyStore::open(&adapter, &ns).unwrap();
    let parsed = wow_command_client::js::input::command(&lock(&id, 2), Default::default()).unwrap();
    let defaults = wow_command_client::js::input::Defaults {
        config: Default::default(),
        wait_stage: wow_command_client::core::protocol::CommandStage::Processed,
        wait_timeout_ms: None,
        policy: Default::default(),
        body_limits: Default::default(),
    };
    let (intent, _) = wow_command_client::js::input::intent(parsed, &defaults, false).unwrap();
    // Written as the engine writes it: made, then stored, then `sending`.
    let mut record = support::written(&store, &ns, intent, 1).await;
    record.state = IntentState::Sending;
    record.revision = store.put(&record).await.unwrap();

    // The reloaded page: a new client over the same storage.
    let reloaded = client_over(json!({"namespace": ns}), adapter.clone()).await;
    let report = rust(&settle(reloaded.resume(None)).await.unwrap());
    let driven = report["driven"].as_array().unwrap();
    assert_eq!(driven.len(), 1, "{report}");
    assert_eq!(driven[0]["status"], "succeeded");
    assert_eq!(driven[0]["requestId"], record.request_id.as_str());
    assert_eq!(stored("account", &id, &record.request_id).await, 1);
    // Nothing is left to resume.
    let again = rust(&settle(reloaded.resume(None)).await.unwrap());
    assert_eq!(again["driven"].as_array().unwrap().len(), 0);
}

#[wasm_bindgen_test]
async fn a_history_query_that_never_answers_ends_at_the_clients_deadline() {
    // Held queries, as over a black-holed connection: each is aborted at the
    // client's timeoutMs, counts as history unavailable, and the call
    // settles (escalated) instead of waiting forever; history back, the
    // same intent is confirmed, never sent again.
    let c =
        client(json!({"timeoutMs": 600, "retry": {"baseMs": 20, "maxMs": 50, "maxConfirms": 2}}))
            .await;
    let owner = unique("hang");
    let add = js(
        json!({"aggregate": {"resource": "cart", "ownerId": owner, "id": owner}, "method": "POST",
        "path": format!("/owner/{owner}/cart/add_cart_item"), "body": {"productId": "p-1", "quantity": 1}}),
    );
    fault(
        json!({"match": {"aggregateId": owner}, "fault": "drop_response_after_append", "times": 1}),
    )
    .await;
    fault(json!({"match": {"path": "/cart/event/*"}, "fault": "query_hang", "times": 2})).await;
    let o = outcome(&c, add).await;
    assert_eq!(o["status"], "escalated", "{o}");
    assert_eq!(o["attempts"], 1);
    assert_eq!(
        fired(&owner).await,
        vec!["drop_response_after_append".to_owned()],
        "the command's own fault"
    );
    let again = rust(
        &settle(c.confirm(JsValue::from_str(o["intentId"].as_str().unwrap()), None))
            .await
            .unwrap(),
    );
    assert_eq!(again["status"], "succeeded", "{again}");
    assert_eq!(again["attempts"], 1, "confirmed, never resent");
    assert_eq!(
        stored("cart", &owner, o["requestId"].as_str().unwrap()).await,
        1
    );
}

/// Two commands fired in a row at one account in one scope reach history in
/// the order they were written when the first is refused by a proxy (a 503,
/// nothing stored): the second waits, queued behind the first, until the
/// first's retry succeeded. Without the scope the second would be appended
/// first, during the first's backoff. Each is appended once.
#[wasm_bindgen_test]
async fn a_scope_sends_in_the_order_written_when_the_first_is_refused_and_retried() {
    let c = client(json!({})).await;
    let id = unique("scope");
    let created = rust(&settle(c.send_and_wait(create(&id), None)).await.unwrap());
    let recorder = event_recorder();
    let listener = js_sys::Reflect::get(&recorder, &"listener".into()).unwrap();
    let stop = c.subscribe(listener, None).unwrap();
    fault(json!({"match": {"aggregateId": id}, "fault": "unavailable", "times": 1})).await;
    let scope = json!({"scope": format!("account:{id}")});
    let first = c.send(with(&lock(&id, 10), scope.clone()), None);
    let second = c.send(with(&lock(&id, 20), scope.clone()), None);
    let (first, second) = (
        rust(&settle(first).await.unwrap()),
        rust(&settle(second).await.unwrap()),
    );
    let _ = stop.call0(&JsValue::NULL);
    assert_eq!(
        (first["status"].as_str(), second["status"].as_str()),
        (Some("succeeded"), Some("succeeded")),
        "{first} {second}"
    );
    assert_eq!(
        first["attempts"], 2,
        "lost, confirmed not appended, sent again: {first}"
    );
    assert_eq!(second["attempts"], 1, "{second}");
    let ids = |o: &Value| o["requestId"].as_str().unwrap().to_owned();
    assert_eq!(
        history(&id).await,
        [
            created["requestId"].as_str().unwrap().to_owned(),
            ids(&first),
            ids(&second)
        ],
        "history holds them in the order they were written, each once"
    );
    // The second was queued behind the first, and said so.
    let events = rust(&js_sys::Reflect::get(&recorder, &"events".into()).unwrap());
    let queued: Vec<&Value> = events
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["intentId"] == second["intentId"] && e["state"] == "queued")
        .collect();
    assert!(!queued.is_empty(), "{events}");
    assert_eq!(queued[0]["waitsFor"], first["intentId"]);
    assert_eq!(queued[0]["scope"], format!("account:{id}"));
    let records = rust(&settle(c.intents()).await.unwrap());
    let record = records
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["intentId"] == second["intentId"])
        .unwrap();
    assert_eq!(
        (
            record["schemaVersion"].as_u64(),
            record["scopeSeq"].as_u64()
        ),
        (Some(4), Some(2))
    );
}

/// A queued intent is withdrawn before anything of it is sent: its waiting
/// call rejects with `Withdrawn`, the gateway never sees its requestId, and
/// the one on the wire cannot be withdrawn and is left as it was.
#[wasm_bindgen_test]
async fn a_queued_intent_is_withdrawn_and_never_sent_and_an_attempted_one_is_refused() {
    let c = client(json!({})).await;
    let id = unique("withdraw");
    settle(c.send_and_wait(create(&id), None)).await.unwrap();
    fault(json!({"match": {"aggregateId": id}, "fault": "delay", "delayMs": 1500, "times": 1}))
        .await;
    let scope = json!({"scope": format!("account:{id}")});
    let first = c.send_and_wait(with(&lock(&id, 10), scope.clone()), None);
    let second = c.send_and_wait(
        with(
            &lock(&id, 20),
            json!({"scope": format!("account:{id}"), "intentKey": format!("{id}-second")}),
        ),
        None,
    );
    let third = c.send(with(&lock(&id, 30), scope.clone()), None);
    let fourth = c.send(with(&lock(&id, 40), scope.clone()), None);
    sleep(300).await;
    let listed = rust(&settle(c.intents()).await.unwrap());
    // In their scope's order: intents written in the same millisecond are
    // listed by id (a keyed one's derived id may sort first).
    let mut of_scope: Vec<&Value> = listed
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["scope"] == format!("account:{id}"))
        .collect();
    of_scope.sort_by_key(|r| r["scopeSeq"].as_u64());
    let states: Vec<&str> = of_scope
        .iter()
        .map(|r| r["state"].as_str().unwrap())
        .collect();
    assert_eq!(
        states,
        ["sending", "queued", "queued", "queued"],
        "{listed}"
    );
    let head = of_scope[0]["intentId"].as_str().unwrap().to_owned();

    // The one on the wire: refused, unchanged.
    let refused = settle(c.withdraw(JsValue::from_str(&head)))
        .await
        .expect_err("refused");
    let refused = rust(&error_of(&refused));
    assert_eq!(refused["code"], "NotWithdrawable", "{refused}");
    assert!(
        refused["message"]
            .as_str()
            .unwrap()
            .contains("only history can tell"),
        "{refused}"
    );
    // By its key, the second: withdrawn, and its caller told.
    let withdrawn = rust(
        &settle(c.withdraw(JsValue::from_str(&format!("{id}-second"))))
            .await
            .unwrap(),
    );
    assert_eq!(
        (
            withdrawn["status"].as_str(),
            withdrawn["appended"].as_bool()
        ),
        (Some("rejected"), Some(false))
    );
    assert_eq!(withdrawn["error"]["errorCode"], "Withdrawn");
    let e = rust(&error_of(
        &settle(second).await.expect_err("the waiting call rejects"),
    ));
    assert_eq!(
        (e["code"].as_str(), e["appended"].as_bool()),
        (Some("Withdrawn"), Some(false)),
        "{e}"
    );
    // The rest of the scope: the two still queued.
    let n = settle(c.withdraw_scope(JsValue::from_str(&format!("account:{id}"))))
        .await
        .unwrap();
    assert_eq!(n.as_f64(), Some(2.0));
    for call in [third, fourth] {
        let o = rust(&settle(call).await.unwrap());
        assert_eq!(
            (o["status"].as_str(), o["error"]["errorCode"].as_str()),
            (Some("rejected"), Some("Withdrawn")),
            "{o}"
        );
    }
    let r = rust(&settle(first).await.unwrap());
    assert_eq!(r["succeeded"], true);
    // History: the create and the first lock; nothing withdrawn ever arrived.
    let held = history(&id).await;
    assert_eq!(held.len(), 2, "{held:?}");
    assert_eq!(held[1], r["requestId"].as_str().unwrap());
    // Nor did any request carrying a withdrawn intent's requestId reach
    // the gateway, refused or not; the one sent did, once.
    for o in [&withdrawn, &e] {
        let request_id = o["requestId"].as_str().unwrap();
        assert_eq!(arrived(request_id).await, 0, "withdrawn {request_id}");
    }
    let listed = rust(&settle(c.intents()).await.unwrap());
    for record in listed.as_array().unwrap() {
        if record["state"] == "withdrawn" {
            let request_id = record["requestId"].as_str().unwrap();
            assert_eq!(arrived(request_id).await, 0, "withdrawn {record}");
        }
    }
    assert_eq!(arrived(r["requestId"].as_str().unwrap()).await, 1);
    let head_now = rust(&settle(c.intent(JsValue::from_str(&head))).await.unwrap());
    assert_eq!(head_now["state"], "succeeded");
}
