//! The machine against scripted answers, and a deterministic simulation
//! against a model gateway that loses, delays, duplicates and refuses.

use super::*;
use crate::journal::tests::made_with;
use crate::journal::{
    AggregateIdentity, CommandSpec, IntentRecord, IntentState, NewIntent, RequestIdPolicy,
    StoreError, Unavailable, WaitSpec,
};
use crate::protocol::test_support::test;
use crate::protocol::{
    CommandResult, CommandStage, ErrorCode, ErrorInfo, FunctionInfo, FunctionKind, JsonResponse,
    JsonValue, ResponseBody, StreamElement,
};

const T0: i64 = 1_000_000;

fn record(stage: CommandStage, create: bool) -> IntentRecord {
    let intent = NewIntent {
        scope: None,
        intent_key: None,
        aggregate: AggregateIdentity {
            resource: "account".into(),
            aggregate_id: if create { String::new() } else { "a1".into() },
            ..AggregateIdentity::default()
        },
        command: CommandSpec {
            method: "PUT".into(),
            path: "/account/a1/lock_amount".into(),
            body: JsonValue::empty_object().into(),
            expected_version: None,
            create,
            wait: WaitSpec {
                stage,
                context: None,
                processor: None,
                function: None,
                tail_stage: None,
                timeout_ms: 30_000,
            },
            headers: vec![],
        },
    };
    made_with("ns", RequestIdPolicy::default(), T0, intent, 1).0
}

fn result(
    r: &IntentRecord,
    stage: CommandStage,
    code: &str,
    version: Option<i64>,
) -> CommandResult {
    CommandResult {
        id: format!("sig-{stage}"),
        wait_command_id: "cmd-1".into(),
        stage,
        context_name: "transfer-service".into(),
        aggregate_name: "account".into(),
        tenant_id: "(0)".into(),
        aggregate_id: r.aggregate.aggregate_id.clone(),
        aggregate_version: version,
        request_id: r.request_id.clone(),
        command_id: "cmd-1".into(),
        function: FunctionInfo::new(
            FunctionKind::Command,
            "transfer-service",
            "Account",
            "onCommand",
        ),
        error_code: ErrorCode::parse(code),
        error_msg: String::new(),
        binding_errors: vec![],
        result: JsonValue::empty_object(),
        signal_time: 0,
        succeeded: Some(code == "Ok"),
    }
}

fn json(status: u16, body: ResponseBody) -> JsonResponse {
    JsonResponse {
        status,
        error_code_header: body.error_code().map(|c| c.to_string()),
        body,
    }
}

/// Runs the machine's pending actions: persists succeed; returns the
/// other actions in order.
fn drain(m: &mut IntentMachine, now: i64) -> Vec<Action> {
    let mut out = Vec::new();
    while let Some(a) = m.poll_action() {
        match a {
            Action::Persist(r) => m.handle_persisted(now, Ok(r.revision + 1)),
            other => out.push(other),
        }
    }
    out
}

fn done(actions: &[Action]) -> &Outcome {
    actions
        .iter()
        .find_map(|a| match a {
            Action::Done(o) => Some(o),
            _ => None,
        })
        .expect("done")
}

fn started(
    stage: CommandStage,
    create: bool,
    config: MachineConfig,
) -> (IntentMachine, IntentRecord) {
    let r = record(stage, create);
    let mut m = IntentMachine::new(r.clone(), config, 7);
    m.start(T0);
    (m, r)
}

#[test]
fn the_record_is_persisted_as_sending_before_the_send() {
    let (mut m, _) = started(CommandStage::Processed, false, MachineConfig::default());
    let Some(Action::Persist(r)) = m.poll_action() else {
        panic!("persist first")
    };
    assert_eq!(r.state, IntentState::Sending);
    assert_eq!(r.attempts.len(), 1);
    assert_eq!(
        m.poll_action(),
        None,
        "nothing is sent before the write is acknowledged"
    );
    m.handle_persisted(T0, Ok(2));
    assert_eq!(m.poll_action(), Some(Action::Send { attempt: 1 }));
}

#[test]
fn a_storage_failure_before_sending_sends_nothing() {
    let (mut m, _) = started(CommandStage::Processed, false, MachineConfig::default());
    m.poll_action();
    m.handle_persisted(
        T0,
        Err(StoreError::Unavailable {
            kind: Unavailable::QuotaExceeded,
            detail: "full".into(),
        }),
    );
    let actions = drain(&mut m, T0);
    assert!(!actions.iter().any(|a| matches!(a, Action::Send { .. })));
    let o = done(&actions);
    assert_eq!(o.status, Status::Unknown);
    assert_eq!(o.appended, Some(false));
    assert_eq!(o.error_code().unwrap().as_str(), "StorageUnavailable");
}

#[test]
fn json_success() {
    let (mut m, r) = started(CommandStage::Processed, false, MachineConfig::default());
    drain(&mut m, T0);
    let ok = result(&r, CommandStage::Processed, "Ok", Some(2));
    m.handle_response(
        T0 + 5,
        1,
        json(200, ResponseBody::CommandResult(ok.clone())),
        None,
    );
    let actions = drain(&mut m, T0 + 5);
    let o = done(&actions);
    assert_eq!((o.status, o.appended), (Status::Succeeded, Some(true)));
    assert_eq!(o.result.as_ref(), Some(&ok));
    assert_eq!(m.record().state, IntentState::Succeeded);
    assert_eq!(m.record().attempts[0].command_id.as_deref(), Some("cmd-1"));
}

#[test]
fn a_timeout_confirms_and_an_appended_intent_is_never_resent() {
    let (mut m, r) = started(CommandStage::Processed, false, MachineConfig::default());
    drain(&mut m, T0);
    let deadline = m.poll_timeout().unwrap();
    assert_eq!(deadline, T0 + 30_000);
    m.handle_timeout(deadline);
    let actions = drain(&mut m, deadline);
    assert_eq!(
        actions[0],
        Action::Confirm {
            query: r.confirm_query(),
            need_facts: false
        }
    );
    assert_eq!(m.record().state, IntentState::Unknown);
    // A late answer to the aborted attempt changes nothing.
    m.handle_response(
        deadline + 1,
        1,
        json(500, ResponseBody::Other { reason: "x".into() }),
        None,
    );
    assert!(drain(&mut m, deadline + 1).is_empty());
    m.handle_confirm(
        deadline + 2,
        ConfirmAnswer::Appended {
            version: Some(4),
            command_id: Some("c9".into()),
        },
    );
    let actions = drain(&mut m, deadline + 2);
    assert!(!actions.iter().any(|a| matches!(a, Action::Send { .. })));
    let o = done(&actions);
    assert_eq!((o.status, o.appended), (Status::Succeeded, Some(true)));
    assert_eq!(
        (o.appended_version, o.appended_command_id.as_deref()),
        (Some(4), Some("c9"))
    );
}

#[test]
fn confirmed_not_appended_retries_with_the_same_request_id_after_backoff() {
    let config = MachineConfig {
        retry_base_ms: 100,
        ..MachineConfig::default()
    };
    let (mut m, r) = started(CommandStage::Processed, false, config);
    drain(&mut m, T0);
    m.handle_transport_error(T0 + 1, 1, TransportError::Lost("connection reset".into()));
    drain(&mut m, T0 + 1);
    m.handle_confirm(T0 + 2, ConfirmAnswer::NotAppended);
    assert!(drain(&mut m, T0 + 2).is_empty());
    let at = m.poll_timeout().unwrap();
    assert!((T0 + 2 + 50..=T0 + 2 + 100).contains(&at), "{}", at - T0);
    m.handle_timeout(at);
    let Some(Action::Persist(p)) = m.poll_action() else {
        panic!("persist the new attempt first")
    };
    assert_eq!(p.request_id, r.request_id);
    assert_eq!(p.attempts.len(), 2);
    m.handle_persisted(at, Ok(p.revision + 1));
    assert_eq!(m.poll_action(), Some(Action::Send { attempt: 2 }));
}

#[test]
fn a_refusal_on_a_retry_does_not_claim_an_earlier_unknown_attempt_was_not_appended() {
    // Attempt 1 is lost (held at the gateway, say), history has nothing yet,
    // attempt 2 is refused before the bus: attempt 1 may still be appended.
    let (mut m, r) = started(CommandStage::Processed, false, MachineConfig::default());
    drain(&mut m, T0);
    m.handle_transport_error(T0 + 1, 1, TransportError::Lost("timeout".into()));
    drain(&mut m, T0 + 1);
    m.handle_confirm(T0 + 2, ConfirmAnswer::NotAppended);
    drain(&mut m, T0 + 2);
    let at = m.poll_timeout().unwrap();
    m.handle_timeout(at);
    let Some(Action::Persist(p)) = m.poll_action() else {
        panic!("persist the new attempt first")
    };
    m.handle_persisted(at, Ok(p.revision + 1));
    assert_eq!(m.poll_action(), Some(Action::Send { attempt: 2 }));
    let refused = result(&r, CommandStage::Sent, "Unauthorized", None);
    m.handle_response(
        at + 1,
        2,
        json(401, ResponseBody::CommandResult(refused)),
        None,
    );
    let o = done(&drain(&mut m, at + 1)).clone();
    assert_eq!((o.status, o.appended), (Status::Rejected, None));
    assert!(o.reason.as_deref().unwrap().contains("earlier attempt"));
    assert_eq!(m.record().appended, None);
}

#[test]
fn an_unavailable_history_escalates_after_bounded_queries() {
    let (mut m, _) = started(CommandStage::Processed, false, MachineConfig::default());
    drain(&mut m, T0);
    m.handle_response(
        T0 + 1,
        1,
        json(
            503,
            ResponseBody::Other {
                reason: "<html>".into(),
            },
        ),
        None,
    );
    drain(&mut m, T0 + 1);
    let mut now = T0 + 1;
    for _ in 0..2 {
        m.handle_confirm(now, ConfirmAnswer::Unavailable("503".into()));
        assert!(drain(&mut m, now).is_empty());
        now = m.poll_timeout().unwrap();
        m.handle_timeout(now);
        assert!(matches!(drain(&mut m, now)[..], [Action::Confirm { .. }]));
    }
    m.handle_confirm(now, ConfirmAnswer::Unavailable("503".into()));
    let actions = drain(&mut m, now);
    assert!(matches!(actions[..], [Action::Done(_)]), "{actions:?}");
    let o = done(&actions);
    assert_eq!((o.status, o.appended), (Status::Escalated, None));
    assert_eq!(m.record().state, IntentState::Escalated);
    assert_eq!(o.error_code().unwrap().as_str(), "HttpStatus503");
}

#[test]
fn validation_at_sent_is_a_rejection_without_confirmation() {
    let (mut m, r) = started(CommandStage::Processed, false, MachineConfig::default());
    drain(&mut m, T0);
    let mut refused = result(&r, CommandStage::Sent, "CommandValidation", None);
    refused.binding_errors.push(crate::protocol::BindingError {
        name: "amount".into(),
        msg: "must be > 0".into(),
    });
    m.handle_response(
        T0 + 1,
        1,
        json(400, ResponseBody::CommandResult(refused.clone())),
        None,
    );
    let actions = drain(&mut m, T0 + 1);
    assert!(!actions.iter().any(|a| matches!(a, Action::Confirm { .. })));
    let o = done(&actions);
    assert_eq!((o.status, o.appended), (Status::Rejected, Some(false)));
    assert_eq!(o.result.as_ref(), Some(&refused));
    assert_eq!(o.error.as_ref().unwrap().binding_errors.len(), 1);
}

#[test]
fn a_business_rejection_at_processed_is_confirmed_before_it_is_reported() {
    for (answer, appended) in [
        (ConfirmAnswer::NotAppended, Some(false)),
        (
            ConfirmAnswer::Appended {
                version: Some(3),
                command_id: None,
            },
            Some(true),
        ),
    ] {
        let (mut m, r) = started(CommandStage::Processed, false, MachineConfig::default());
        drain(&mut m, T0);
        let refused = result(&r, CommandStage::Processed, "OrderPayDuplicated", Some(3));
        m.handle_response(
            T0 + 1,
            1,
            json(400, ResponseBody::CommandResult(refused)),
            None,
        );
        assert!(matches!(
            drain(&mut m, T0 + 1)[..],
            [Action::Confirm { .. }]
        ));
        m.handle_confirm(T0 + 2, answer);
        let actions = drain(&mut m, T0 + 2);
        let o = done(&actions);
        assert_eq!((o.status, o.appended), (Status::Rejected, appended));
        assert_eq!(o.error_code().unwrap().as_str(), "OrderPayDuplicated");
    }
}

#[test]
fn duplicate_request_id_confirms_and_returns_the_original_facts() {
    let (mut m, r) = started(CommandStage::Processed, false, MachineConfig::default());
    drain(&mut m, T0);
    let dup = result(&r, CommandStage::Sent, "DuplicateRequestId", None);
    m.handle_response(T0 + 1, 1, json(400, ResponseBody::CommandResult(dup)), None);
    drain(&mut m, T0 + 1);
    m.handle_confirm(
        T0 + 2,
        ConfirmAnswer::Appended {
            version: Some(7),
            command_id: Some("orig".into()),
        },
    );
    let o = done(&drain(&mut m, T0 + 2)).clone();
    assert_eq!(o.status, Status::Succeeded);
    assert_eq!(
        (o.appended_version, o.appended_command_id.as_deref()),
        (Some(7), Some("orig"))
    );
    assert_eq!(o.error, None);
}

#[test]
fn create_conflicts_tell_my_earlier_create_from_someone_elses() {
    for (answer, status) in [
        (
            ConfirmAnswer::Appended {
                version: Some(1),
                command_id: None,
            },
            Status::Succeeded,
        ),
        (ConfirmAnswer::NotAppended, Status::Conflict),
    ] {
        let (mut m, r) = started(CommandStage::Processed, true, MachineConfig::default());
        drain(&mut m, T0);
        let taken = result(&r, CommandStage::Processed, "DuplicateAggregateId", Some(1));
        m.handle_response(
            T0 + 1,
            1,
            json(400, ResponseBody::CommandResult(taken)),
            None,
        );
        assert!(matches!(
            drain(&mut m, T0 + 1)[..],
            [Action::Confirm { .. }]
        ));
        m.handle_confirm(T0 + 2, answer);
        assert_eq!(done(&drain(&mut m, T0 + 2)).status, status);
    }
}

#[test]
fn a_version_conflict_goes_to_the_caller_and_the_version_is_never_bumped() {
    let (mut m, r) = started(CommandStage::Processed, false, MachineConfig::default());
    drain(&mut m, T0);
    let stale = result(
        &r,
        CommandStage::Processed,
        "CommandExpectVersionConflict",
        Some(5),
    );
    m.handle_response(
        T0 + 1,
        1,
        json(409, ResponseBody::CommandResult(stale)),
        None,
    );
    let actions = drain(&mut m, T0 + 1);
    let o = done(&actions);
    assert_eq!((o.status, o.appended), (Status::Conflict, Some(false)));
    assert_eq!(
        m.record().command.expected_version,
        r.command.expected_version
    );
    assert!(!actions.iter().any(|a| matches!(a, Action::Send { .. })));
}

#[test]
fn too_many_requests_waits_for_retry_after() {
    let (mut m, _) = started(CommandStage::Processed, false, MachineConfig::default());
    drain(&mut m, T0);
    let limited = ResponseBody::ErrorInfo(ErrorInfo {
        error_code: ErrorCode::TooManyRequests,
        error_msg: String::new(),
        binding_errors: vec![],
        succeeded: Some(false),
    });
    m.handle_response(T0 + 1, 1, json(429, limited), Some(2_500));
    assert!(drain(&mut m, T0 + 1).is_empty());
    assert_eq!(m.poll_timeout(), Some(T0 + 2_501));
}

/// Runs `m` to its outcome: each send answered by `answer(m, now,
/// attempt)`, each look "not appended", each timer fired when due; the
/// last actions (the outcome's) and how many sends there were.
fn run_to_outcome(
    m: &mut IntentMachine,
    mut answer: impl FnMut(&mut IntentMachine, i64, u32),
) -> (Vec<Action>, u32) {
    let (mut now, mut sends) = (T0, 0);
    loop {
        let actions = drain(m, now);
        if matches!(actions.last(), Some(Action::Done(_))) {
            return (actions, sends);
        }
        let sent = actions.iter().find_map(|a| match a {
            Action::Send { attempt } => Some(*attempt),
            _ => None,
        });
        if let Some(attempt) = sent {
            sends += 1;
            answer(m, now, attempt);
        } else if actions.iter().any(|a| matches!(a, Action::Confirm { .. })) {
            m.handle_confirm(now, ConfirmAnswer::NotAppended);
        } else {
            now = m.poll_timeout().unwrap();
            m.handle_timeout(now);
        }
    }
}

#[test]
fn retries_are_bounded_and_the_intent_stays_unknown() {
    let config = MachineConfig {
        max_attempts: 2,
        ..MachineConfig::default()
    };
    let (mut m, _) = started(CommandStage::Processed, false, config);
    let (actions, sends) = run_to_outcome(&mut m, |m, now, attempt| {
        m.handle_transport_error(now, attempt, TransportError::Lost("reset".into()))
    });
    let o = done(&actions);
    assert_eq!((o.status, o.appended), (Status::Unknown, Some(false)));
    assert_eq!(sends, 2);
    assert_eq!(m.record().state, IntentState::Unknown);
}

fn element(r: &IntentRecord, stage: CommandStage, code: &str) -> StreamElement {
    StreamElement::Stage(result(r, stage, code, Some(2)))
}

#[test]
fn stream_elements_are_emitted_at_once_and_each_is_checked() {
    let config = MachineConfig {
        stream: true,
        ..MachineConfig::default()
    };
    let (mut m, r) = started(CommandStage::Snapshot, false, config);
    assert_eq!(drain(&mut m, T0), [Action::OpenStream { attempt: 1 }]);
    m.handle_stream_element(1, element(&r, CommandStage::Sent, "Ok"));
    assert!(matches!(drain(&mut m, T0)[..], [Action::Emit(_)]));
    m.handle_stream_element(1, element(&r, CommandStage::Processed, "Ok"));
    m.handle_stream_element(1, element(&r, CommandStage::Snapshot, "Ok"));
    assert_eq!(drain(&mut m, T0).len(), 2);
    m.handle_stream_end(T0 + 3, 1, false);
    let o = done(&drain(&mut m, T0 + 3)).clone();
    assert_eq!((o.status, o.appended), (Status::Succeeded, Some(true)));
    assert_eq!(o.result.unwrap().stage, CommandStage::Snapshot);
}

#[test]
fn a_failed_downstream_element_after_processed_is_appended_with_the_failure() {
    let config = MachineConfig {
        stream: true,
        ..MachineConfig::default()
    };
    let (mut m, r) = started(CommandStage::Snapshot, false, config);
    drain(&mut m, T0);
    m.handle_stream_element(1, element(&r, CommandStage::Sent, "Ok"));
    m.handle_stream_element(1, element(&r, CommandStage::Processed, "Ok"));
    m.handle_stream_element(1, element(&r, CommandStage::Snapshot, "IllegalState"));
    m.handle_stream_end(T0 + 3, 1, false);
    assert!(drain(&mut m, T0 + 3)
        .iter()
        .any(|a| matches!(a, Action::Confirm { .. })));
    m.handle_confirm(
        T0 + 4,
        ConfirmAnswer::Appended {
            version: Some(2),
            command_id: None,
        },
    );
    let o = done(&drain(&mut m, T0 + 4)).clone();
    assert_eq!((o.status, o.appended), (Status::Rejected, Some(true)));
    assert_eq!(o.result.unwrap().stage, CommandStage::Snapshot);
}

#[test]
fn a_stream_cut_after_processed_is_appended_with_the_stage_pending() {
    let config = MachineConfig {
        stream: true,
        ..MachineConfig::default()
    };
    let (mut m, r) = started(CommandStage::Snapshot, false, config);
    drain(&mut m, T0);
    m.handle_stream_element(1, element(&r, CommandStage::Sent, "Ok"));
    m.handle_stream_element(1, element(&r, CommandStage::Processed, "Ok"));
    m.handle_transport_error(T0 + 2, 1, TransportError::Lost("cut".into()));
    let actions = drain(&mut m, T0 + 2);
    assert!(
        !actions.iter().any(|a| matches!(a, Action::Confirm { .. })),
        "PROCESSED proved the append"
    );
    let o = done(&actions);
    assert_eq!((o.status, o.appended), (Status::Succeeded, Some(true)));
    assert_eq!(o.downstream_pending, Some(CommandStage::Snapshot));
}

#[test]
fn a_stream_cut_before_processed_is_confirmed() {
    let config = MachineConfig {
        stream: true,
        ..MachineConfig::default()
    };
    let (mut m, r) = started(CommandStage::Processed, false, config);
    drain(&mut m, T0);
    m.handle_stream_element(1, element(&r, CommandStage::Sent, "Ok"));
    m.handle_stream_end(T0 + 2, 1, true);
    assert!(drain(&mut m, T0 + 2)
        .iter()
        .any(|a| matches!(a, Action::Confirm { .. })));
}

#[test]
fn an_error_event_alone_is_a_rejection_and_after_sent_is_confirmed() {
    let config = MachineConfig {
        stream: true,
        ..MachineConfig::default()
    };
    let (mut m, _) = started(CommandStage::Processed, false, config.clone());
    drain(&mut m, T0);
    let bad = ResponseBody::ErrorInfo(ErrorInfo {
        error_code: ErrorCode::IllegalArgument,
        error_msg: "bad header".into(),
        binding_errors: vec![],
        succeeded: Some(false),
    });
    m.handle_stream_element(
        1,
        StreamElement::Error {
            code: ErrorCode::IllegalArgument,
            body: bad,
        },
    );
    m.handle_stream_end(T0 + 1, 1, false);
    let actions = drain(&mut m, T0 + 1);
    assert!(
        matches!(actions[0], Action::Emit(_)),
        "the error event is a failed element"
    );
    assert_eq!(done(&actions).status, Status::Rejected);

    let (mut m, r) = started(CommandStage::Snapshot, false, config);
    drain(&mut m, T0);
    m.handle_stream_element(1, element(&r, CommandStage::Sent, "Ok"));
    let timeout = ResponseBody::ErrorInfo(ErrorInfo {
        error_code: ErrorCode::RequestTimeout,
        error_msg: String::new(),
        binding_errors: vec![],
        succeeded: Some(false),
    });
    m.handle_stream_element(
        1,
        StreamElement::Error {
            code: ErrorCode::RequestTimeout,
            body: timeout,
        },
    );
    m.handle_stream_end(T0 + 1, 1, false);
    assert!(drain(&mut m, T0 + 1)
        .iter()
        .any(|a| matches!(a, Action::Confirm { .. })));
}

#[test]
fn resuming_a_record_left_sending_confirms_first() {
    let mut r = record(CommandStage::Processed, false);
    r.state = IntentState::Sending;
    let mut m = IntentMachine::new(r.clone(), MachineConfig::default(), 1);
    m.start(T0);
    let actions = drain(&mut m, T0);
    assert_eq!(
        actions,
        [Action::Confirm {
            query: r.confirm_query(),
            need_facts: false
        }]
    );
    let mut settled = r.clone();
    settled.state = IntentState::Succeeded;
    let mut m = IntentMachine::new(settled, MachineConfig::default(), 1);
    m.start(T0);
    assert_eq!(done(&drain(&mut m, T0)).status, Status::Succeeded);
}

#[cfg(not(target_arch = "wasm32"))]
mod simulation {
    //! The machine against a model gateway under random faults. Invariants:
    //! one requestId across all attempts; the record is durable before every
    //! send; never a send after "appended" is known; an outcome never claims
    //! more than the history holds; retries are bounded; every drive ends.

    use super::*;
    use proptest::prelude::*;

    #[derive(Clone, Copy, Debug)]
    enum Fault {
        None,
        DropRequest,
        DropResponseAfterAppend,
        Unavailable,
        Delay,
        Reject,
        FailProcessedAfterAppend,
        CutStreamAfterSent,
        CutStreamAfterProcessed,
        /// A proxy or cache hands back another request's success; nothing is appended.
        Misroute,
    }

    fn fault() -> impl Strategy<Value = Fault> {
        prop_oneof![
            Just(Fault::None),
            Just(Fault::DropRequest),
            Just(Fault::DropResponseAfterAppend),
            Just(Fault::Unavailable),
            Just(Fault::Delay),
            Just(Fault::Reject),
            Just(Fault::FailProcessedAfterAppend),
            Just(Fault::CutStreamAfterSent),
            Just(Fault::CutStreamAfterProcessed),
            Just(Fault::Misroute),
        ]
    }

    #[derive(Default)]
    struct Model {
        appended: Option<(i64, String)>,
        sends: u32,
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(512))]
        #[test]
        fn invariants_hold_under_faults(
            faults in prop::collection::vec(fault(), 1..8),
            confirm_up in prop::collection::vec(any::<bool>(), 1..8),
            stream in any::<bool>(),
            seed in any::<u64>(),
        ) {
            let config = MachineConfig { stream, caller_timeout_ms: 1_000, ..MachineConfig::default() };
            let r = record(CommandStage::Processed, false);
            let request_id = r.request_id.clone();
            let mut m = IntentMachine::new(r.clone(), config.clone(), seed);
            let mut model = Model::default();
            let mut now = T0;
            let mut durable: Option<IntentRecord> = None;
            let mut known_appended = false;
            let mut confirms = 0usize;
            let mut outcome = None;
            m.start(now);
            for _step in 0..200 {
                let mut acted = false;
                while let Some(action) = m.poll_action() {
                    acted = true;
                    match action {
                        Action::Persist(rec) => {
                            prop_assert_eq!(&rec.request_id, &request_id);
                            let revision = rec.revision + 1;
                            durable = Some(*rec);
                            m.handle_persisted(now, Ok(revision));
                        }
                        Action::Send { attempt } | Action::OpenStream { attempt } => {
                            prop_assert!(!known_appended, "a send after the append was known");
                            let d = durable.as_ref().unwrap();
                            prop_assert_eq!(d.state, IntentState::Sending);
                            prop_assert_eq!(d.attempts.len() as u32, attempt);
                            model.sends += 1;
                            let f = faults[(model.sends as usize - 1) % faults.len()];
                            let append = |model: &mut Model| {
                                if model.appended.is_none() {
                                    model.appended = Some((2, format!("cmd-{}", model.sends)));
                                }
                            };
                            let ok = |stage| result(&r, stage, "Ok", Some(2));
                            match f {
                                Fault::DropRequest => m.handle_transport_error(now, attempt, TransportError::Lost("reset".into())),
                                Fault::Unavailable => m.handle_response(now, attempt, json(503, ResponseBody::Other { reason: "503".into() }), None),
                                Fault::Delay => {
                                    append(&mut model);
                                }
                                Fault::Misroute => {
                                    let mut theirs = ok(CommandStage::Processed);
                                    theirs.request_id = "someone-elses-request".into();
                                    theirs.aggregate_id = "someone-elses-aggregate".into();
                                    theirs.command_id = "their-cmd".into();
                                    if stream {
                                        let mut sent = theirs.clone();
                                        sent.stage = CommandStage::Sent;
                                        m.handle_stream_element(attempt, StreamElement::Stage(sent));
                                        m.handle_stream_element(attempt, StreamElement::Stage(theirs));
                                        m.handle_stream_end(now, attempt, false);
                                    } else {
                                        m.handle_response(now, attempt, json(200, ResponseBody::CommandResult(theirs)), None);
                                    }
                                }
                                Fault::Reject => {
                                    let refused = result(&r, CommandStage::Sent, "CommandValidation", None);
                                    if stream {
                                        m.handle_stream_element(attempt, StreamElement::Error { code: ErrorCode::CommandValidation, body: ResponseBody::CommandResult(refused) });
                                        m.handle_stream_end(now, attempt, false);
                                    } else {
                                        m.handle_response(now, attempt, json(400, ResponseBody::CommandResult(refused)), None);
                                    }
                                }
                                Fault::None | Fault::DropResponseAfterAppend | Fault::FailProcessedAfterAppend
                                | Fault::CutStreamAfterSent | Fault::CutStreamAfterProcessed => {
                                    let dup = model.appended.is_some();
                                    append(&mut model);
                                    let answer = if dup {
                                        result(&r, CommandStage::Processed, "DuplicateRequestId", Some(3))
                                    } else if matches!(f, Fault::FailProcessedAfterAppend) {
                                        result(&r, CommandStage::Processed, "InternalServerError", Some(2))
                                    } else {
                                        ok(CommandStage::Processed)
                                    };
                                    match (stream, f) {
                                        (_, Fault::DropResponseAfterAppend) => m.handle_transport_error(now, attempt, TransportError::Lost("reset".into())),
                                        (true, _) => {
                                            m.handle_stream_element(attempt, StreamElement::Stage(ok(CommandStage::Sent)));
                                            if matches!(f, Fault::CutStreamAfterSent) {
                                                m.handle_stream_end(now, attempt, true);
                                            } else {
                                                m.handle_stream_element(attempt, StreamElement::Stage(answer));
                                                m.handle_stream_end(now, attempt, matches!(f, Fault::CutStreamAfterProcessed));
                                            }
                                        }
                                        (false, _) => {
                                            let status = answer.error_code.http_status();
                                            m.handle_response(now, attempt, json(status, ResponseBody::CommandResult(answer)), None);
                                        }
                                    }
                                }
                            }
                        }
                        Action::Confirm { query: q, .. } => {
                            prop_assert_eq!(&q.request_id, &request_id);
                            let up = confirm_up[confirms % confirm_up.len()];
                            confirms += 1;
                            let answer = if !up {
                                ConfirmAnswer::Unavailable("down".into())
                            } else if let Some((v, c)) = &model.appended {
                                known_appended = true;
                                ConfirmAnswer::Appended { version: Some(*v), command_id: Some(c.clone()) }
                            } else {
                                ConfirmAnswer::NotAppended
                            };
                            m.handle_confirm(now, answer);
                        }
                        Action::Emit(e) => {
                            if let Some(res) = e.command_result() {
                                if res.stage == CommandStage::Processed && e.is_succeeded() {
                                    known_appended = true;
                                }
                            }
                        }
                        Action::Done(o) => outcome = Some(*o),
                    }
                }
                if outcome.is_some() {
                    break;
                }
                if !acted {
                    let Some(at) = m.poll_timeout() else { break };
                    now = now.max(at);
                    m.handle_timeout(now);
                }
            }
            let o = outcome.expect("every drive ends");
            prop_assert!(model.sends <= config.max_attempts);
            prop_assert_eq!(&o.request_id, &request_id);
            match o.status {
                Status::Succeeded => prop_assert!(model.appended.is_some(), "success claimed without an append"),
                Status::Rejected | Status::Conflict if o.appended == Some(false) => prop_assert!(model.appended.is_none()),
                _ => {}
            }
            if o.appended == Some(true) {
                prop_assert!(model.appended.is_some());
            }
            if o.appended == Some(false) {
                prop_assert!(model.appended.is_none(), "claimed not appended: {:?}", o);
            }
            let last = durable.unwrap();
            prop_assert_eq!(last.state == IntentState::Succeeded, o.status == Status::Succeeded);
        }
    }
}

/// Another request's success, handed back by a proxy, proves nothing: the
/// attempt is confirmed, history says not appended, the same requestId is
/// sent again, and the outcome says which answer did not match.
#[test]
fn an_answer_for_another_request_is_confirmed_not_believed() {
    for stream in [false, true] {
        let config = MachineConfig {
            stream,
            ..MachineConfig::default()
        };
        let (mut m, r) = started(CommandStage::Processed, false, config);
        let mut theirs = result(&r, CommandStage::Processed, "Ok", Some(9));
        theirs.request_id = "another-request".into();
        let a = drain(&mut m, T0);
        let attempt = match a[..] {
            [Action::Send { attempt }] | [Action::OpenStream { attempt }] => attempt,
            _ => panic!("{a:?}"),
        };
        if stream {
            m.handle_stream_element(attempt, StreamElement::Stage(theirs.clone()));
            m.handle_stream_end(T0 + 5, attempt, false);
        } else {
            m.handle_response(
                T0 + 5,
                attempt,
                json(200, ResponseBody::CommandResult(theirs.clone())),
                None,
            );
        }
        let a = drain(&mut m, T0 + 5);
        assert!(
            !a.iter().any(|x| matches!(x, Action::Emit(_))),
            "not shown as this intent's: {a:?}"
        );
        assert!(matches!(a[..], [Action::Confirm { .. }]), "{a:?}");
        assert_eq!(
            m.record().last_result,
            None,
            "not recorded as this intent's answer"
        );
        m.handle_confirm(T0 + 6, ConfirmAnswer::NotAppended);
        assert!(drain(&mut m, T0 + 6).is_empty());
        let at = m.poll_timeout().unwrap();
        m.handle_timeout(at);
        let a = drain(&mut m, at);
        let attempt = match a[..] {
            [Action::Send { attempt }] | [Action::OpenStream { attempt }] => attempt,
            _ => panic!("{a:?}"),
        };
        assert_eq!(attempt, 2, "the same intent, sent again");
        let ours = result(&r, CommandStage::Processed, "Ok", Some(2));
        if stream {
            m.handle_stream_element(attempt, StreamElement::Stage(ours));
            m.handle_stream_end(at + 5, attempt, false);
        } else {
            m.handle_response(
                at + 5,
                attempt,
                json(200, ResponseBody::CommandResult(ours)),
                None,
            );
        }
        let a = drain(&mut m, at + 5);
        let o = done(&a);
        assert_eq!(o.status, Status::Succeeded);
        assert_eq!(o.request_id, r.request_id);
        let reason = o.reason.as_deref().unwrap_or_default();
        assert!(reason.contains("requestId `another-request`"), "{reason}");
    }
}

/// The main command's answer about another aggregate is not this intent's either.
#[test]
fn an_answer_about_another_aggregate_is_confirmed() {
    let (mut m, r) = started(CommandStage::Processed, false, MachineConfig::default());
    let mut theirs = result(&r, CommandStage::Processed, "Ok", Some(2));
    theirs.aggregate_id = "not-mine".into();
    drain(&mut m, T0);
    m.handle_response(
        T0 + 1,
        1,
        json(200, ResponseBody::CommandResult(theirs)),
        None,
    );
    assert!(matches!(
        drain(&mut m, T0 + 1)[..],
        [Action::Confirm { .. }]
    ));
    m.handle_confirm(
        T0 + 2,
        ConfirmAnswer::Appended {
            version: Some(2),
            command_id: None,
        },
    );
    let a = drain(&mut m, T0 + 2);
    let o = done(&a);
    assert_eq!(
        o.status,
        Status::Succeeded,
        "history, not the answer, says so"
    );
    assert!(o
        .reason
        .as_deref()
        .unwrap_or_default()
        .contains("aggregateId `not-mine`"));
}

/// Outcomes cross to JS through the hand-written codec: the derive's JSON.
#[test]
fn the_outcome_codec_writes_what_the_derive_writes() {
    use crate::protocol::float_text;
    let mut r = record(CommandStage::Processed, false);
    r.state = IntentState::Unknown;
    r.reason = Some("timeout".into());
    let mut outcome = Outcome::from_record(&r);
    for status in [
        Status::Succeeded,
        Status::Rejected,
        Status::Unknown,
        Status::Conflict,
        Status::Escalated,
    ] {
        outcome.status = status;
        outcome.downstream_pending = Some(CommandStage::Snapshot);
        let ours: serde_json::Value =
            serde_json::from_str(&crate::protocol::JsonOut::of(&outcome, float_text)).unwrap();
        assert_eq!(ours, serde_json::to_value(&outcome).unwrap());
    }
}

/// Each attempt keeps its caller deadline and what ended the caller's wait
/// (the reference's diagnosis: ids, stage, code and the caller's timeout together).
#[test]
fn each_attempt_records_its_deadline_and_how_the_wait_ended() {
    use crate::journal::WaitEnd;
    let config = MachineConfig {
        caller_timeout_ms: 1_000,
        ..MachineConfig::default()
    };
    let (mut m, r) = started(CommandStage::Processed, false, config);
    assert!(matches!(
        drain(&mut m, T0)[..],
        [Action::Send { attempt: 1 }]
    ));
    m.handle_timeout(T0 + 1_000);
    drain(&mut m, T0 + 1_000);
    m.handle_confirm(T0 + 1_001, ConfirmAnswer::NotAppended);
    let at = m.poll_timeout().unwrap();
    m.handle_timeout(at);
    assert!(matches!(
        drain(&mut m, at)[..],
        [Action::Send { attempt: 2 }]
    ));
    m.handle_transport_error(at + 1, 2, TransportError::Lost("reset".into()));
    drain(&mut m, at + 1);
    m.handle_confirm(at + 2, ConfirmAnswer::NotAppended);
    let at = m.poll_timeout().unwrap();
    m.handle_timeout(at);
    drain(&mut m, at);
    let ok = result(&r, CommandStage::Processed, "Ok", Some(2));
    m.handle_response(at + 3, 3, json(200, ResponseBody::CommandResult(ok)), None);
    drain(&mut m, at + 3);
    let attempts = &m.record().attempts;
    assert_eq!(attempts[0].caller_deadline, Some(T0 + 1_000));
    let ended: Vec<_> = attempts.iter().map(|a| a.wait_ended_by).collect();
    assert_eq!(
        ended,
        [
            Some(WaitEnd::Timeout),
            Some(WaitEnd::Lost),
            Some(WaitEnd::Answer)
        ]
    );
    assert!(attempts.iter().all(|a| a.caller_deadline.is_some()));
}

/// The last record a list of persists wrote, running the machine's actions.
fn drain_recording(
    m: &mut IntentMachine,
    now: i64,
    last: &mut Option<IntentRecord>,
) -> Vec<Action> {
    let mut out = Vec::new();
    while let Some(a) = m.poll_action() {
        match a {
            Action::Persist(r) => {
                m.handle_persisted(now, Ok(r.revision + 1));
                *last = Some(*r);
            }
            other => out.push(other),
        }
    }
    out
}

#[test]
fn offline_before_the_first_send_takes_the_attempt_back_and_leaves_the_intent_pending() {
    let (mut m, _) = started(CommandStage::Processed, false, MachineConfig::default());
    let mut stored = None;
    assert_eq!(
        drain_recording(&mut m, T0, &mut stored),
        vec![Action::Send { attempt: 1 }]
    );
    m.handle_offline(T0 + 1);
    let actions = drain_recording(&mut m, T0 + 1, &mut stored);
    let o = done(&actions);
    assert_eq!(
        (o.status, o.appended, o.attempts),
        (Status::Unknown, Some(false), 0)
    );
    assert_eq!(o.reason.as_deref(), Some("offline"));
    assert_eq!(o.error.as_ref().unwrap().error_code.to_string(), "Offline");
    let stored = stored.unwrap();
    assert_eq!(stored.state, IntentState::Pending);
    assert_eq!(stored.reason.as_deref(), Some("offline"));
    assert!(stored.attempts.is_empty(), "no budget spent");
    // Driven again once online: the first attempt is attempt 1, sent at once.
    let mut again = IntentMachine::new(stored, MachineConfig::default(), 7);
    again.start(T0 + 5);
    assert_eq!(drain(&mut again, T0 + 5), vec![Action::Send { attempt: 1 }]);
}

#[test]
fn a_connection_lost_while_offline_waits_unknown_without_asking_history() {
    let (mut m, _) = started(CommandStage::Processed, false, MachineConfig::default());
    let mut stored = None;
    drain_recording(&mut m, T0, &mut stored);
    m.handle_transport_error(T0 + 1, 1, TransportError::Offline("Failed to fetch".into()));
    let actions = drain_recording(&mut m, T0 + 1, &mut stored);
    assert!(
        matches!(actions.as_slice(), [Action::Confirm { .. }]),
        "{actions:?}"
    );
    // The driver finds the runtime offline: the query is not asked.
    m.handle_offline(T0 + 2);
    let actions = drain_recording(&mut m, T0 + 2, &mut stored);
    let o = done(&actions);
    assert_eq!(
        (o.status, o.appended, o.attempts),
        (Status::Unknown, None, 1)
    );
    let stored = stored.unwrap();
    assert_eq!(stored.state, IntentState::Unknown);
    assert_eq!(
        stored.attempts[0].wait_ended_by,
        Some(crate::journal::WaitEnd::Offline)
    );
    // Driven again: history first, never a blind resend.
    let mut again = IntentMachine::new(stored, MachineConfig::default(), 7);
    again.start(T0 + 5);
    assert!(matches!(
        drain(&mut again, T0 + 5).as_slice(),
        [Action::Confirm { .. }]
    ));
}

#[test]
fn offline_outside_a_send_or_a_query_changes_nothing() {
    let (mut m, _) = started(CommandStage::Processed, false, MachineConfig::default());
    // Persisting the first attempt: not a send yet.
    m.handle_offline(T0);
    let actions = drain(&mut m, T0);
    assert_eq!(actions, vec![Action::Send { attempt: 1 }]);
}

#[test]
fn a_wait_past_processed_asks_history_for_the_appended_version_and_keeps_it() {
    let (mut m, _) = started(CommandStage::Snapshot, false, MachineConfig::default());
    let mut stored = None;
    drain_recording(&mut m, T0, &mut stored);
    m.handle_transport_error(T0 + 1, 1, TransportError::Lost("reset".into()));
    let actions = drain_recording(&mut m, T0 + 1, &mut stored);
    assert!(
        matches!(
            actions.as_slice(),
            [Action::Confirm {
                need_facts: true,
                ..
            }]
        ),
        "{actions:?}"
    );
    m.handle_confirm(
        T0 + 2,
        ConfirmAnswer::Appended {
            version: Some(7),
            command_id: None,
        },
    );
    let actions = drain_recording(&mut m, T0 + 2, &mut stored);
    let o = done(&actions);
    assert_eq!(
        (o.status, o.downstream_pending),
        (Status::Succeeded, Some(CommandStage::Snapshot))
    );
    let stored = stored.unwrap();
    assert_eq!(stored.appended_version, Some(7));
    assert_eq!(Outcome::from_record(&stored).appended_version, Some(7));
}

#[test]
fn a_caller_that_left_is_recorded_on_the_attempt_and_the_drive_goes_on() {
    let (mut m, _) = started(CommandStage::Processed, false, MachineConfig::default());
    let mut stored = None;
    drain_recording(&mut m, T0, &mut stored);
    m.caller_left();
    m.handle_transport_error(T0 + 1, 1, TransportError::Lost("reset".into()));
    let actions = drain_recording(&mut m, T0 + 1, &mut stored);
    assert!(
        matches!(actions.as_slice(), [Action::Confirm { .. }]),
        "the drive goes on"
    );
    let stored = stored.unwrap();
    assert_eq!(
        stored.attempts[0].wait_ended_by,
        Some(crate::journal::WaitEnd::Cancelled)
    );
    assert!(matches!(
        stored.attempts[0].outcome,
        Some(crate::journal::AttemptOutcome::Unknown(_))
    ));
}

/// A 404 with no stage (no route) on a command not marked `create` says
/// what usually causes it; a missing aggregate (NotFound at PROCESSED, a
/// CommandResult) and a create's 404 do not.
#[test]
fn a_route_miss_on_a_command_not_marked_create_hints_at_create() {
    const HINT: &str = " (a create needs create: true)";
    let no_route = |code: ErrorCode| {
        let (mut m, _) = started(CommandStage::Processed, false, MachineConfig::default());
        drain(&mut m, T0);
        let body = ResponseBody::ErrorInfo(ErrorInfo {
            error_code: code,
            error_msg: "No route for /account/a-1/create_account.".into(),
            binding_errors: vec![],
            succeeded: Some(false),
        });
        m.handle_response(T0 + 1, 1, json(404, body), None);
        let o = done(&drain(&mut m, T0 + 1)).clone();
        assert_eq!((o.status, o.appended), (Status::Rejected, Some(false)));
        o
    };
    for code in [
        ErrorCode::NotFound,
        ErrorCode::Other("HttpStatus404".into()),
    ] {
        let hinted = no_route(code.clone()).with_create_hint(false);
        assert_eq!(
            hinted.error.unwrap().error_msg,
            format!("No route for /account/a-1/create_account.{HINT}")
        );
        let create = no_route(code).with_create_hint(true);
        assert!(!create.error.unwrap().error_msg.contains("create: true"));
    }
    // An aggregate that does not exist: NotFound at PROCESSED, with its CommandResult.
    let (mut m, r) = started(CommandStage::Processed, false, MachineConfig::default());
    drain(&mut m, T0);
    let missing = result(&r, CommandStage::Processed, "NotFound", None);
    m.handle_response(
        T0 + 1,
        1,
        json(404, ResponseBody::CommandResult(missing)),
        None,
    );
    let actions = drain(&mut m, T0 + 1);
    if let Some(Action::Confirm { .. }) = actions.first() {
        m.handle_confirm(T0 + 2, ConfirmAnswer::NotAppended);
    }
    let o = done(&drain(&mut m, T0 + 2)).clone().with_create_hint(false);
    assert_eq!(o.error_code().unwrap().as_str(), "NotFound");
    assert!(!o.error.unwrap().error_msg.contains("create: true"));
}

/// Drives `m` through a lost first attempt and history's "not appended",
/// to its second attempt's send; returns when it is due.
fn to_second_attempt(m: &mut IntentMachine) -> i64 {
    drain(m, T0);
    m.handle_transport_error(T0 + 1, 1, TransportError::Lost("reset".into()));
    drain(m, T0 + 1);
    m.handle_confirm(T0 + 2, ConfirmAnswer::NotAppended);
    let at = m.poll_timeout().unwrap();
    m.handle_timeout(at);
    assert!(matches!(drain(m, at)[..], [Action::Send { attempt: 2 }]));
    at
}

// Wow 9.3: a gateway-only service lets a resent duplicate through at SENT
// and the processing node refuses it later, so a resend's SENT says nothing.
#[test]
fn a_resend_accepted_at_sent_succeeds_only_once_history_shows_it_appended() {
    let (mut m, r) = started(CommandStage::Sent, false, MachineConfig::default());
    let at = to_second_attempt(&mut m);
    let sent = result(&r, CommandStage::Sent, "Ok", None);
    m.handle_response(
        at + 1,
        2,
        json(200, ResponseBody::CommandResult(sent)),
        None,
    );
    assert!(
        matches!(drain(&mut m, at + 1)[..], [Action::Confirm { .. }]),
        "asked history, not reported"
    );
    m.handle_confirm(
        at + 2,
        ConfirmAnswer::Appended {
            version: Some(4),
            command_id: Some("cmd-1".into()),
        },
    );
    let o = done(&drain(&mut m, at + 2)).clone();
    assert_eq!((o.status, o.appended), (Status::Succeeded, Some(true)));
    assert_eq!(o.appended_version, Some(4));
    assert_eq!(o.result.map(|r| r.stage), Some(CommandStage::Sent));
}

#[test]
fn a_resend_accepted_at_sent_that_history_never_shows_escalates_and_is_not_sent_again() {
    let config = MachineConfig {
        max_confirms: 3,
        ..MachineConfig::default()
    };
    let (mut m, r) = started(CommandStage::Sent, false, config);
    let at = to_second_attempt(&mut m);
    let sent = result(&r, CommandStage::Sent, "Ok", None);
    m.handle_response(
        at + 1,
        2,
        json(200, ResponseBody::CommandResult(sent)),
        None,
    );
    let mut now = at + 1;
    let mut actions = drain(&mut m, now);
    for _ in 0..3 {
        assert!(
            matches!(actions[..], [Action::Confirm { .. }]),
            "{actions:?}"
        );
        m.handle_confirm(now, ConfirmAnswer::NotAppended);
        actions = drain(&mut m, now);
        if actions.is_empty() {
            now = m.poll_timeout().unwrap();
            m.handle_timeout(now);
            actions = drain(&mut m, now);
        }
    }
    assert!(matches!(actions[0], Action::Done(_)), "{actions:?}");
    assert!(!actions.iter().any(|a| matches!(a, Action::Send { .. })));
    let o = done(&actions);
    assert_eq!(
        (o.status, o.appended, o.attempts),
        (Status::Escalated, None, 2)
    );
    assert!(o
        .reason
        .as_deref()
        .unwrap()
        .contains("a resend was accepted at SENT"));
}

#[test]
fn a_first_attempt_accepted_at_sent_is_the_wait_the_caller_asked_for() {
    let (mut m, r) = started(CommandStage::Sent, false, MachineConfig::default());
    drain(&mut m, T0);
    let sent = result(&r, CommandStage::Sent, "Ok", None);
    m.handle_response(
        T0 + 1,
        1,
        json(200, ResponseBody::CommandResult(sent)),
        None,
    );
    let o = done(&drain(&mut m, T0 + 1)).clone();
    assert_eq!(o.status, Status::Succeeded);
}

// A processing node's window (Wow 9.3) can call a requestId a duplicate
// that history does not hold: sent again with it, bounded, then escalated.
#[test]
fn a_duplicate_history_does_not_show_is_sent_again_then_escalated() {
    let config = MachineConfig {
        max_attempts: 2,
        ..MachineConfig::default()
    };
    let (mut m, r) = started(CommandStage::Processed, false, config);
    let (actions, sends) = run_to_outcome(&mut m, |m, now, attempt| {
        let dup = result(&r, CommandStage::Processed, "DuplicateRequestId", None);
        let answer = json(400, ResponseBody::CommandResult(dup));
        m.handle_response(now, attempt, answer, None);
    });
    assert!(matches!(actions[0], Action::Done(_)), "{actions:?}");
    let outcome = done(&actions);
    assert_eq!(sends, 2, "the same requestId once more, then no more");
    assert_eq!(
        (outcome.status, outcome.appended),
        (Status::Escalated, None)
    );
    let reason = outcome.reason.as_deref().unwrap();
    assert!(reason.contains("DuplicateRequestId 2 times"), "{reason}");
    assert_eq!(m.record().state, IntentState::Escalated);
}

#[test]
fn the_callers_deadline_and_the_servers_wait_deadline_are_told_apart() {
    let config = MachineConfig {
        caller_timeout_ms: 1_000,
        max_confirms: 1,
        ..MachineConfig::default()
    };
    let (mut m, r) = started(CommandStage::Processed, false, config.clone());
    drain(&mut m, T0);
    m.handle_timeout(T0 + 1_000);
    drain(&mut m, T0 + 1_000);
    m.handle_confirm(T0 + 1_001, ConfirmAnswer::Unavailable("down".into()));
    let ours = done(&drain(&mut m, T0 + 1_001)).clone();
    let (mut m, _) = started(CommandStage::Processed, false, config);
    drain(&mut m, T0);
    let mut theirs = result(&r, CommandStage::Sent, "RequestTimeout", None);
    theirs.error_msg = "Wait timeout.".into();
    m.handle_response(
        T0 + 5,
        1,
        json(408, ResponseBody::CommandResult(theirs)),
        None,
    );
    drain(&mut m, T0 + 5);
    m.handle_confirm(T0 + 6, ConfirmAnswer::Unavailable("down".into()));
    let server = done(&drain(&mut m, T0 + 6)).clone();
    let msg = |o: &Outcome| o.error.as_ref().unwrap().error_msg.clone();
    assert!(
        msg(&ours).starts_with("caller timeout (timeoutMs), not the server's wait deadline"),
        "{}",
        msg(&ours)
    );
    assert_eq!(msg(&server), "Wait timeout.");
    assert_eq!(
        m.record().attempts[0].wait_ended_by,
        Some(crate::journal::WaitEnd::Answer)
    );
}
