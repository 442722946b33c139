use super::*;
use crate::journal::{Listing, MemoryStore, RecordStore, StoreError, StoredRecord, Unavailable};
use crate::protocol::test_support::{block_on, test};
use crate::protocol::JsonValue;

const T0: u64 = 1_700_000_000_000;
const LEASE: u64 = 1_000;

fn consumer() -> Consumer<MemoryStore> {
    Consumer::new(MemoryStore::new(), "orders", LEASE)
}

fn run(delivery: Delivery) -> EffectRecord {
    match delivery {
        Delivery::Run(r) => r,
        other => panic!("expected Run, got {other:?}"),
    }
}

#[test]
fn first_delivery_runs_and_a_redelivery_is_skipped_with_the_result() {
    let c = consumer();
    let started = run(block_on(c.deliver("evt-1", T0, "a", false)).unwrap());
    assert_eq!(started.state, EffectState::Started);
    assert_eq!(started.attempt, 1);
    assert_eq!(started.revision, 1);
    let result = JsonValue::String("mail-42".into());
    let done = block_on(c.complete(&started, T0 + 5, Some(result.clone()))).unwrap();
    assert_eq!(done.state, EffectState::Done);
    for owner in ["a", "b"] {
        match block_on(c.deliver("evt-1", T0 + 10, owner, false)).unwrap() {
            Delivery::Skip(r) => {
                assert_eq!(r.result, Some(result.clone()));
                assert!(!r.reconciled);
            }
            other => panic!("expected Skip, got {other:?}"),
        }
    }
}

#[test]
fn a_live_deliverer_makes_others_wait_until_it_is_done() {
    let c = consumer();
    let started = run(block_on(c.deliver("evt-1", T0, "a", false)).unwrap());
    match block_on(c.deliver("evt-1", T0 + 1, "b", false)).unwrap() {
        Delivery::Busy { until, .. } => assert_eq!(until, T0 + LEASE),
        other => panic!("expected Busy, got {other:?}"),
    }
    block_on(c.complete(&started, T0 + 2, None)).unwrap();
    assert!(matches!(
        block_on(c.deliver("evt-1", T0 + 3, "b", false)).unwrap(),
        Delivery::Skip(_)
    ));
}

#[test]
fn a_crash_between_effect_and_record_goes_to_reconciliation_never_to_the_effect() {
    let c = consumer();
    let started = run(block_on(c.deliver("evt-1", T0, "a", false)).unwrap());
    // "a" ran the effect and died before `complete`. Without a lock, the
    // record is Busy until the lease ends, then reconciled.
    assert!(matches!(
        block_on(c.deliver("evt-1", T0 + LEASE - 1, "b", false)).unwrap(),
        Delivery::Busy { .. }
    ));
    let found = match block_on(c.deliver("evt-1", T0 + LEASE, "b", false)).unwrap() {
        Delivery::Reconcile(r) => r,
        other => panic!("expected Reconcile, got {other:?}"),
    };
    assert_eq!(found, started);
    // With the identity's lock held, the holder is known gone at once.
    assert!(matches!(
        block_on(c.deliver("evt-1", T0 + 1, "b", true)).unwrap(),
        Delivery::Reconcile(_)
    ));
    // The external system says it happened: recorded done, not run again.
    let answer = Reconciliation::Done(Some(JsonValue::Bool(true)));
    match block_on(c.reconciled(&found, T0 + LEASE, "b", answer)).unwrap() {
        Delivery::Skip(r) => {
            assert!(r.reconciled);
            assert_eq!(r.attempt, 1);
            assert_eq!(r.state, EffectState::Done);
        }
        other => panic!("expected Skip, got {other:?}"),
    }
}

#[test]
fn a_reconciliation_that_finds_nothing_starts_the_next_attempt() {
    let c = consumer();
    let started = run(block_on(c.deliver("evt-1", T0, "a", false)).unwrap());
    let next = run(block_on(c.reconciled(&started, T0 + LEASE, "b", Reconciliation::Run)).unwrap());
    assert_eq!(next.attempt, 2);
    assert_eq!(next.owner, "b");
    assert_eq!(next.lease_until, T0 + 2 * LEASE);
    // The old deliverer waking up cannot record over the new attempt.
    assert!(matches!(
        block_on(c.complete(&started, T0 + LEASE + 1, None)),
        Err(ConsumerError::Superseded { current: Some(_) })
    ));
}

#[test]
fn a_failed_effect_is_reconciled_on_the_next_delivery_without_waiting() {
    let c = consumer();
    let started = run(block_on(c.deliver("evt-1", T0, "a", false)).unwrap());
    let failed = block_on(c.fail(&started, T0 + 3, "TypeError: network")).unwrap();
    assert_eq!(failed.state, EffectState::Started);
    assert_eq!(failed.last_error.as_deref(), Some("TypeError: network"));
    assert!(matches!(
        block_on(c.deliver("evt-1", T0 + 4, "a", false)).unwrap(),
        Delivery::Reconcile(_)
    ));
}

#[test]
fn bad_identities_are_refused_before_any_write() {
    let c = consumer();
    let long = "x".repeat(513);
    for bad in ["", "  ", "a\nb", long.as_str()] {
        assert!(matches!(
            block_on(c.deliver(bad, T0, "a", false)),
            Err(ConsumerError::InvalidIdentity(_))
        ));
    }
    assert!(block_on(c.list()).unwrap().records.is_empty());
}

#[test]
fn pruning_removes_old_done_records_only() {
    let c = consumer();
    let old = run(block_on(c.deliver("old", T0, "a", false)).unwrap());
    block_on(c.complete(&old, T0, None)).unwrap();
    let recent = run(block_on(c.deliver("recent", T0 + 50, "a", false)).unwrap());
    block_on(c.complete(&recent, T0 + 50, None)).unwrap();
    run(block_on(c.deliver("open", T0, "a", false)).unwrap());
    assert_eq!(block_on(c.prune(T0 + 100, 60)).unwrap(), 1);
    let mut left: Vec<_> = block_on(c.list())
        .unwrap()
        .records
        .into_iter()
        .map(|r| r.identity)
        .collect();
    left.sort();
    assert_eq!(left, ["open", "recent"]);
}

#[test]
fn records_are_namespaced_and_kept_apart_from_intents() {
    let store = MemoryStore::new();
    let a = Consumer::new(store, "a", LEASE);
    run(block_on(a.deliver("evt", T0, "x", false)).unwrap());
    let intents: Listing = block_on(RecordStore::list(a.store(), "a")).unwrap();
    assert!(intents.records.is_empty());
    let other: Listing<EffectRecord> = block_on(a.store().list("b")).unwrap();
    assert!(other.records.is_empty());
}

#[test]
fn future_schemas_are_not_misread() {
    assert!(EffectRecord::check_schema(Some(1)).is_ok());
    assert!(matches!(
        EffectRecord::check_schema(Some(2)),
        Err(crate::journal::RecordError::FutureSchema(2))
    ));
    assert!(EffectRecord::check_schema(None).is_err());
}

/// A store whose writes fail after `writes_ok` successful ones.
struct FailingStore {
    inner: MemoryStore,
    writes_ok: std::cell::Cell<usize>,
}

impl RecordStore<EffectRecord> for FailingStore {
    async fn get(&self, ns: &str, id: &str) -> Result<Option<EffectRecord>, StoreError> {
        self.inner.get(ns, id).await
    }
    async fn put(&self, record: &EffectRecord) -> Result<u64, StoreError> {
        if self.writes_ok.get() == 0 {
            return Err(StoreError::Unavailable {
                kind: Unavailable::QuotaExceeded,
                detail: "QuotaExceededError".into(),
            });
        }
        self.writes_ok.set(self.writes_ok.get() - 1);
        self.inner.put(record).await
    }
    async fn delete(&self, ns: &str, id: &str) -> Result<(), StoreError> {
        RecordStore::<EffectRecord>::delete(&self.inner, ns, id).await
    }
    async fn list(&self, ns: &str) -> Result<Listing<EffectRecord>, StoreError> {
        self.inner.list(ns).await
    }
}

#[test]
fn storage_failure_before_the_effect_refuses_and_after_it_leaves_started() {
    let failing = |writes_ok| {
        Consumer::new(
            FailingStore {
                inner: MemoryStore::new(),
                writes_ok: std::cell::Cell::new(writes_ok),
            },
            "n",
            LEASE,
        )
    };
    // No `started` record → no Run: the effect is never reached.
    let c = failing(0);
    assert!(matches!(
        block_on(c.deliver("evt", T0, "a", false)),
        Err(ConsumerError::Storage(StoreError::Unavailable { .. }))
    ));
    // `done` not recorded → `started` stays: the next delivery reconciles.
    let c = failing(1);
    let started = run(block_on(c.deliver("evt", T0, "a", false)).unwrap());
    assert!(matches!(
        block_on(c.complete(&started, T0 + 1, None)),
        Err(ConsumerError::Storage(_))
    ));
    assert!(matches!(
        block_on(c.deliver("evt", T0 + 2, "a", true)).unwrap(),
        Delivery::Reconcile(_)
    ));
}

#[cfg(not(target_arch = "wasm32"))]
mod simulation {
    //! Deliverers of one identity interleaved at random, crashing at random
    //! points, against a model external system that honestly answers the
    //! reconciliation. Invariants: the effect happens exactly once in the
    //! end; never twice; a skip always carries the recorded result.

    use super::*;
    use proptest::prelude::*;

    #[derive(Clone, Copy, Debug, PartialEq)]
    enum Step {
        Deliver,
        Effect,
        Complete,
        Crashed,
        Finished,
    }

    struct Deliverer {
        owner: String,
        step: Step,
        record: Option<EffectRecord>,
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(512))]
        #[test]
        fn the_effect_happens_exactly_once(
            schedule in prop::collection::vec((0usize..4, any::<bool>(), 0u64..400), 1..80),
            locks in any::<bool>(),
        ) {
            let c = consumer();
            let mut effects = 0u32;
            let mut now = T0;
            let mut deliverers: Vec<Deliverer> = (0..4)
                .map(|i| Deliverer { owner: format!("d{i}"), step: Step::Deliver, record: None })
                .collect();
            // With locks, one deliverer at a time past `deliver`: model the
            // lock as "held by whoever is between Run and its end".
            let mut holder: Option<usize> = None;
            let drive = |d: &mut Deliverer, i: usize, crash: bool, now: u64, effects: &mut u32, holder: &mut Option<usize>| -> Result<(), TestCaseError> {
                if crash && d.step != Step::Finished && d.step != Step::Crashed {
                    d.step = Step::Crashed;
                    if *holder == Some(i) { *holder = None; }
                    return Ok(());
                }
                match d.step {
                    Step::Deliver => {
                        if locks {
                            if holder.is_some_and(|h| h != i) { return Ok(()); }
                            *holder = Some(i);
                        }
                        let exclusive = locks;
                        let decision = match block_on(c.deliver("evt", now, &d.owner, exclusive)) {
                            Ok(decision) => decision,
                            Err(ConsumerError::Superseded { .. }) => return Ok(()),
                            Err(e) => return Err(TestCaseError::fail(format!("{e}"))),
                        };
                        match decision {
                            Delivery::Run(r) => { d.record = Some(r); d.step = Step::Effect; }
                            Delivery::Skip(r) => {
                                prop_assert_eq!(r.result, Some(JsonValue::Bool(true)));
                                d.step = Step::Finished;
                                if *holder == Some(i) { *holder = None; }
                            }
                            Delivery::Reconcile(r) => {
                                let answer = if *effects > 0 {
                                    Reconciliation::Done(Some(JsonValue::Bool(true)))
                                } else {
                                    Reconciliation::Run
                                };
                                match block_on(c.reconciled(&r, now, &d.owner, answer)) {
                                    Ok(Delivery::Run(r)) => { d.record = Some(r); d.step = Step::Effect; }
                                    Ok(_) => { d.step = Step::Finished; if *holder == Some(i) { *holder = None; } }
                                    Err(_) => {}
                                }
                            }
                            Delivery::Busy { .. } => {
                                prop_assert!(!locks, "a lock holder never sees a live owner");
                            }
                        }
                    }
                    Step::Effect => {
                        // Without locks the lease is the exclusion: a
                        // deliverer that overran it is presumed dead (the
                        // documented limit: effects must finish within the
                        // lease, or renew it).
                        let lease_until = d.record.as_ref().map_or(0, |r| r.lease_until);
                        if !locks && now >= lease_until {
                            d.step = Step::Crashed;
                            return Ok(());
                        }
                        *effects += 1;
                        d.step = Step::Complete;
                    }
                    Step::Complete => {
                        let r = d.record.take().unwrap();
                        match block_on(c.complete(&r, now, Some(JsonValue::Bool(true)))) {
                            Ok(_) => {}
                            Err(ConsumerError::Superseded { .. }) => {}
                            Err(e) => return Err(TestCaseError::fail(format!("{e}"))),
                        }
                        d.step = Step::Finished;
                        if *holder == Some(i) { *holder = None; }
                    }
                    Step::Crashed | Step::Finished => {}
                }
                Ok(())
            };
            for (who, crash, advance) in schedule {
                now += advance.min(LEASE / 4);
                drive(&mut deliverers[who], who, crash, now, &mut effects, &mut holder)?;
                prop_assert!(effects <= 1, "the effect ran twice");
            }
            // Redeliver until settled: a fresh deliverer each time, as a
            // restarted worker would be.
            for round in 0..20 {
                now += LEASE;
                let mut d = Deliverer { owner: format!("late{round}"), step: Step::Deliver, record: None };
                holder = None;
                for _ in 0..3 {
                    drive(&mut d, 99, false, now, &mut effects, &mut holder)?;
                }
                prop_assert!(effects <= 1, "the effect ran twice");
                if d.step == Step::Finished { break; }
            }
            prop_assert_eq!(effects, 1);
            let record = block_on(c.find("evt")).unwrap().unwrap();
            prop_assert_eq!(record.state, EffectState::Done);
        }
    }
}

/// The wasm build stores effect records through the hand-written codec.
#[test]
fn the_effect_record_codec_matches_the_derives() {
    use crate::protocol::json_codec::assert_same_as_serde;
    let c = consumer();
    let mut r = run(block_on(c.deliver("evt-codec", T0, "a", false)).unwrap());
    assert_same_as_serde(&r);
    r.state = EffectState::Done;
    r.finished_at = Some(T0 + 1);
    r.result = Some(JsonValue::Object(vec![("k".into(), JsonValue::Float(0.5))]));
    r.reconciled = true;
    r.last_error = Some("boom".into());
    assert_same_as_serde(&r);
}
