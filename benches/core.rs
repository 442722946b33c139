//! Criterion benches of the pure core: the intent state machine (steps/s
//! over a whole send → confirm → retry → succeed lifecycle) and the SSE
//! decoder plus element decoding (MB/s). `npm run bench` prints them.

#![allow(clippy::disallowed_macros)] // a bench: format! is allowed here (clippy.toml)

use criterion::{criterion_group, criterion_main, BatchSize, Criterion, Throughput};
use wow_command_client::core::journal::{
    new_record, AggregateIdentity, CommandSpec, IntentRecord, NewIntent, RequestIdPolicy,
    SeededRandom, WaitSpec,
};
use wow_command_client::core::machine::{
    Action, ConfirmAnswer, IntentMachine, MachineConfig, Status,
};
use wow_command_client::core::protocol::{
    float_text, CommandStage, JsonResponse, JsonValue, ResponseBody, SseDecoder, StreamElement,
};

fn record() -> IntentRecord {
    let intent = NewIntent {
        scope: None,
        intent_key: None,
        aggregate: AggregateIdentity {
            resource: "account".into(),
            aggregate_id: "a1".into(),
            ..AggregateIdentity::default()
        },
        command: CommandSpec {
            method: "PUT".into(),
            path: "/account/a1/lock_amount".into(),
            body: JsonValue::empty_object().into(),
            expected_version: None,
            create: false,
            wait: WaitSpec {
                stage: CommandStage::Processed,
                context: None,
                processor: None,
                function: None,
                tail_stage: None,
                timeout_ms: 30_000,
            },
            headers: vec![],
        },
    };
    new_record(
        "bench",
        RequestIdPolicy::default(),
        float_text,
        0,
        intent,
        &mut SeededRandom::new(1),
    )
    .unwrap()
    .0
}

fn result_json(request_id: &str, stage: &str, code: &str, version: u32) -> String {
    format!(
        r#"{{"id":"sig-{stage}","waitCommandId":"cmd-1","stage":"{stage}","contextName":"transfer-service","aggregateName":"account","tenantId":"(0)","aggregateId":"a1","aggregateVersion":{version},"requestId":"{request_id}","commandId":"cmd-1","function":{{"functionKind":"COMMAND","contextName":"transfer-service","processorName":"Account","name":"onCommand"}},"errorCode":"{code}","errorMsg":"","result":{{}},"signalTime":1796050050553,"succeeded":{}}}"#,
        code == "Ok"
    )
}

/// One lifecycle: a timeout, a confirmation that finds nothing, a retry
/// that succeeds. Returns how many inputs and actions it took, and whether
/// it ended succeeded.
fn lifecycle(record: IntentRecord, ok: &ResponseBody) -> (u64, bool) {
    let mut m = IntentMachine::new(record, MachineConfig::default(), 7);
    let mut now = 0;
    let mut steps = 1;
    let mut sends = 0;
    m.start(now);
    loop {
        let Some(action) = m.poll_action() else {
            // Nothing to do until the next timer: advance the clock to it.
            let Some(at) = m.poll_timeout() else {
                return (steps, false);
            };
            now = now.max(at);
            m.handle_timeout(now);
            steps += 1;
            continue;
        };
        steps += 1;
        match action {
            Action::Persist(r) => m.handle_persisted(now, Ok(r.revision + 1)),
            // The first attempt gets no answer: its timer fires above.
            Action::Send { .. } if sends == 0 => sends += 1,
            Action::Send { attempt } => {
                sends += 1;
                let response = JsonResponse {
                    status: 200,
                    error_code_header: None,
                    body: ok.clone(),
                };
                m.handle_response(now, attempt, response, None);
            }
            Action::Confirm { .. } => m.handle_confirm(now, ConfirmAnswer::NotAppended),
            Action::Done(outcome) => {
                return (steps, outcome.status == Status::Succeeded && sends == 2)
            }
            _ => continue,
        }
        steps += 1;
    }
}

fn machine(c: &mut Criterion) {
    let record = record();
    let ok = ResponseBody::from_json_text(&result_json(&record.request_id, "PROCESSED", "Ok", 2));
    let (steps, succeeded) = lifecycle(record.clone(), &ok);
    assert!(
        succeeded,
        "the benchmarked lifecycle must end succeeded after one retry"
    );
    let mut group = c.benchmark_group("machine");
    group.throughput(Throughput::Elements(steps));
    group.bench_function("timeout_confirm_retry_succeed", |b| {
        b.iter_batched(
            || record.clone(),
            |r| lifecycle(r, &ok),
            BatchSize::SmallInput,
        )
    });
    group.finish();
}

fn sse(c: &mut Criterion) {
    let stages = [
        "SENT",
        "PROCESSED",
        "SNAPSHOT",
        "PROJECTED",
        "EVENT_HANDLED",
        "SAGA_HANDLED",
    ];
    let mut stream = String::new();
    for i in 0..2_000 {
        let stage = stages[i % stages.len()];
        let data = result_json("0190f0aa-0000-7000-8000-000000000001", stage, "Ok", 2);
        stream.push_str(&format!("id:sig-{i}\nevent:{stage}\ndata:{data}\n\n"));
    }
    let bytes = stream.into_bytes();
    let mut group = c.benchmark_group("sse");
    group.throughput(Throughput::Bytes(bytes.len() as u64));
    group.bench_function("decode_frames_4k_chunks", |b| {
        b.iter(|| {
            let mut decoder = SseDecoder::default();
            let mut events = 0;
            for chunk in bytes.chunks(4096) {
                decoder.feed(chunk).unwrap();
                while decoder.next_event().is_some() {
                    events += 1;
                }
            }
            events
        })
    });
    group.bench_function("decode_frames_and_elements", |b| {
        b.iter(|| {
            let mut decoder = SseDecoder::default();
            let mut succeeded = 0;
            for chunk in bytes.chunks(4096) {
                decoder.feed(chunk).unwrap();
                while let Some(event) = decoder.next_event() {
                    let body = ResponseBody::from_json_text(&event.data);
                    let element = StreamElement::from_event(event.event.as_deref(), body).unwrap();
                    succeeded += usize::from(element.is_succeeded());
                }
            }
            succeeded
        })
    });
    group.finish();
}

criterion_group!(benches, machine, sse);
criterion_main!(benches);
