//! Scopes over the in-memory store: places, turns, withdrawals, and a
//! simulation of drivers, answers, confirmations and withdrawals in any
//! interleaving.

use super::*;
use crate::protocol::test_support::{block_on, test};

const NOW: i64 = 1_764_297_052_692;

fn scoped(key: Option<&str>, scope: Option<&str>, amount: i64) -> NewIntent {
    NewIntent {
        scope: scope.map(str::to_owned),
        intent_key: key.map(str::to_owned),
        aggregate: AggregateIdentity {
            resource: "account".into(),
            aggregate_id: "acc-1".into(),
            ..AggregateIdentity::default()
        },
        command: super::tests::command("/account/acc-1/lock_amount", false, amount),
    }
}

fn begin(journal: &Journal<MemoryStore>, n: i64, intent: NewIntent) -> IntentRecord {
    let mut rng = SeededRandom::new(n as u64 + 1);
    let begun = block_on(journal.begin_for_drive(NOW + n, intent, &mut rng)).unwrap();
    begun.record().clone()
}

/// What the machine writes before an attempt's first byte.
fn begin_attempt(
    journal: &Journal<MemoryStore>,
    record: &mut IntentRecord,
) -> Result<(), JournalError> {
    record.state = IntentState::Sending;
    record.waits_for = None;
    record.attempts.push(Attempt {
        number: record.attempts.len() as u32 + 1,
        sent_at: NOW,
        command_id: None,
        ended_at: None,
        outcome: None,
        caller_deadline: None,
        wait_ended_by: None,
    });
    block_on(journal.save(record, NOW))
}

fn settle(journal: &Journal<MemoryStore>, record: &mut IntentRecord, state: IntentState) {
    record.state = state;
    block_on(journal.save(record, NOW)).unwrap();
}

fn ahead(journal: &Journal<MemoryStore>, record: &IntentRecord) -> Option<String> {
    block_on(journal.ahead_of(record))
        .unwrap()
        .map(|(head, _)| head.intent_id)
}

#[test]
fn a_scoped_intent_is_written_at_once_in_its_place_queued_behind_the_unsettled_one() {
    let journal = Journal::new(MemoryStore::new(), "n");
    let first = begin(&journal, 0, scoped(None, Some("cart"), 1));
    let second = begin(&journal, 1, scoped(None, Some("cart"), 2));
    let elsewhere = begin(&journal, 2, scoped(None, Some("other"), 3));
    let unscoped = begin(&journal, 3, scoped(None, None, 4));

    assert_eq!(
        (first.state, first.scope_seq, first.revision),
        (IntentState::Pending, Some(1), 1)
    );
    assert_eq!(second.state, IntentState::Queued);
    assert_eq!(second.scope_seq, Some(2));
    assert_eq!(second.waits_for.as_deref(), Some(first.intent_id.as_str()));
    assert_eq!(
        elsewhere.state,
        IntentState::Pending,
        "another scope does not wait"
    );
    // Every record is written in this build's schema (the body as text),
    // which builds before it leave alone; an unscoped one is not written yet.
    assert_eq!((first.schema_version, second.schema_version), (4, 4));
    assert_eq!(
        (unscoped.schema_version, unscoped.revision, unscoped.scope),
        (4, 0, None)
    );

    assert_eq!(ahead(&journal, &first), None);
    assert_eq!(ahead(&journal, &second), Some(first.intent_id.clone()));
    let outcome = crate::machine::Outcome::from_record(&second);
    assert_eq!(outcome.status, crate::machine::Status::Unknown);
    assert_eq!(outcome.appended, Some(false));
    let error = outcome.error.unwrap();
    assert_eq!(error.error_code.as_str(), "Queued");
    assert!(
        error.error_msg.contains(&first.intent_id),
        "{}",
        error.error_msg
    );
}

#[test]
fn settled_predecessors_release_the_next_and_unknown_or_escalated_ones_hold_it() {
    for (state, holds) in [
        (IntentState::Sending, true),
        (IntentState::Unknown, true),
        (IntentState::Escalated, true),
        (IntentState::Succeeded, false),
        (IntentState::Rejected, false),
        (IntentState::Conflict, false),
        (IntentState::Withdrawn, false),
    ] {
        let journal = Journal::new(MemoryStore::new(), "n");
        let mut first = begin(&journal, 0, scoped(None, Some("s"), 1));
        let second = begin(&journal, 1, scoped(None, Some("s"), 2));
        let third = begin(&journal, 2, scoped(None, Some("s"), 3));
        begin_attempt(&journal, &mut first).unwrap();
        settle(&journal, &mut first, state);
        let expected = if holds {
            Some(first.intent_id.clone())
        } else {
            None
        };
        assert_eq!(ahead(&journal, &second), expected, "{state:?}");
        // The third always waits: for the first, or now for the second.
        let waits = if holds { &first } else { &second };
        assert_eq!(
            ahead(&journal, &third),
            Some(waits.intent_id.clone()),
            "{state:?}"
        );
    }
}

#[test]
fn a_queued_intent_is_withdrawn_and_an_attempted_one_is_refused_unchanged() {
    let journal = Journal::new(MemoryStore::new(), "n");
    let mut first = begin(&journal, 0, scoped(None, Some("s"), 1));
    let second = begin(&journal, 1, scoped(None, Some("s"), 2));
    let third = begin(&journal, 2, scoped(None, Some("s"), 3));
    begin_attempt(&journal, &mut first).unwrap();

    let refused = block_on(journal.withdraw(NOW, &first.intent_id));
    assert!(
        matches!(&refused, Err(JournalError::NotWithdrawable { record })
            if record.state == IntentState::Sending && record.attempts.len() == 1),
        "{refused:?}"
    );
    let message = refused.unwrap_err().message();
    assert!(message.contains("only history can tell"), "{message}");
    let stored = block_on(journal.find(&first.intent_id)).unwrap().unwrap();
    assert_eq!(stored, first, "a refused withdrawal changes nothing");

    let withdrawn = block_on(journal.withdraw(NOW, &second.intent_id))
        .unwrap()
        .unwrap();
    assert_eq!(withdrawn.state, IntentState::Withdrawn);
    assert_eq!(
        (withdrawn.appended, withdrawn.waits_for.clone()),
        (Some(false), None)
    );
    let outcome = crate::machine::Outcome::from_record(&withdrawn);
    assert_eq!(outcome.status, crate::machine::Status::Rejected);
    assert_eq!(outcome.error.unwrap().error_code.as_str(), "Withdrawn");
    // Withdrawing again writes nothing and says the same.
    let again = block_on(journal.withdraw(NOW, &second.intent_id))
        .unwrap()
        .unwrap();
    assert_eq!(again.revision, withdrawn.revision);
    // The third now waits for the first only.
    assert_eq!(ahead(&journal, &third), Some(first.intent_id.clone()));
    assert_eq!(
        block_on(journal.withdraw(NOW, "no-such-intent")).unwrap(),
        None
    );

    // The scope: only queued intents go, and they are counted.
    let fourth = begin(&journal, 3, scoped(None, Some("s"), 4));
    let ids = |v: Vec<IntentRecord>| v.into_iter().map(|r| r.intent_id).collect::<Vec<_>>();
    let mut withdrawn = ids(block_on(journal.withdraw_scope(NOW, "s")).unwrap());
    withdrawn.sort();
    let mut expected = vec![third.intent_id.clone(), fourth.intent_id.clone()];
    expected.sort();
    assert_eq!(withdrawn, expected);
    assert!(block_on(journal.withdraw_scope(NOW, "s"))
        .unwrap()
        .is_empty());
    for id in [&third.intent_id, &fourth.intent_id] {
        let r = block_on(journal.find(id)).unwrap().unwrap();
        assert_eq!(r.state, IntentState::Withdrawn);
    }
    let first_now = block_on(journal.find(&first.intent_id)).unwrap().unwrap();
    assert_eq!(
        first_now.state,
        IntentState::Sending,
        "the head is left as it is"
    );
}

#[test]
fn a_withdrawal_and_a_first_attempt_racing_end_in_exactly_one_of_them() {
    // Withdrawn first: the attempt's write, on the revision it read, loses.
    let journal = Journal::new(MemoryStore::new(), "n");
    let first = begin(&journal, 0, scoped(None, Some("s"), 1));
    let mut read_by_driver = first.clone();
    block_on(journal.withdraw(NOW, &first.intent_id)).unwrap();
    assert!(matches!(
        begin_attempt(&journal, &mut read_by_driver),
        Err(JournalError::Storage(StoreError::Conflict { .. }))
    ));
    let stored = block_on(journal.find(&first.intent_id)).unwrap().unwrap();
    assert_eq!(
        (stored.state, stored.attempts.len()),
        (IntentState::Withdrawn, 0)
    );

    // The attempt first: the withdrawal reads again and refuses.
    let journal = Journal::new(MemoryStore::new(), "n");
    let mut first = begin(&journal, 0, scoped(None, Some("s"), 1));
    begin_attempt(&journal, &mut first).unwrap();
    assert!(matches!(
        block_on(journal.withdraw(NOW, &first.intent_id)),
        Err(JournalError::NotWithdrawable { .. })
    ));
}

#[test]
fn a_withdrawn_key_sent_again_takes_a_new_place_at_the_end_of_its_scope() {
    let journal = Journal::new(MemoryStore::new(), "n");
    let first = begin(&journal, 0, scoped(None, Some("s"), 1));
    let keyed = begin(&journal, 1, scoped(Some("add-item-7"), Some("s"), 2));
    let third = begin(&journal, 2, scoped(None, Some("s"), 3));
    block_on(journal.withdraw(NOW, "add-item-7")).unwrap();
    let again = begin(&journal, 3, scoped(Some("add-item-7"), Some("s"), 2));
    assert_eq!(
        again.intent_id, keyed.intent_id,
        "the same key, the same requestId"
    );
    assert_eq!(again.state, IntentState::Queued);
    assert_eq!(again.scope_seq, Some(4));
    // It names the last unsettled one: its turn comes when that one settles.
    assert_eq!(again.waits_for.as_deref(), Some(third.intent_id.as_str()));
    assert_eq!(ahead(&journal, &again), Some(first.intent_id.clone()));
    // It listens for the one just before it, not for the head.
    let (_, before) = block_on(journal.ahead_of(&again)).unwrap().unwrap();
    assert_eq!(before, third.intent_id);
    assert_eq!(ahead(&journal, &third), Some(first.intent_id.clone()));
    // The same key given again while it is queued is the same intent, in the same place.
    let replay = begin(&journal, 4, scoped(Some("add-item-7"), Some("s"), 2));
    assert_eq!(
        (replay.scope_seq, replay.revision),
        (Some(4), again.revision)
    );
}

#[cfg(not(target_arch = "wasm32"))]
mod simulation {
    //! Drivers, answers, confirmations and withdrawals in any interleaving,
    //! over one journal: no intent begins an attempt while an earlier one of
    //! its scope is unsettled, first attempts go in the order the records
    //! were written, and a withdrawal never meets an attempted intent.

    use super::*;
    use proptest::prelude::*;

    #[derive(Clone, Copy, Debug)]
    enum Step {
        /// A caller sends into scope `0` or `1`, or unscoped (`2`).
        Begin(u8),
        /// A driver looks at intent `i` (mod the count) and sends it if its turn has come.
        Drive(u8),
        /// Intent `i`'s answer or confirmation settles it in this state.
        Settle(u8, u8),
        /// A caller withdraws intent `i`.
        Withdraw(u8),
        /// A caller withdraws a whole scope.
        WithdrawScope(u8),
    }

    fn step() -> impl Strategy<Value = Step> {
        prop_oneof![
            (0u8..3).prop_map(Step::Begin),
            any::<u8>().prop_map(Step::Drive),
            (any::<u8>(), 0u8..6).prop_map(|(i, s)| Step::Settle(i, s)),
            any::<u8>().prop_map(Step::Withdraw),
            (0u8..2).prop_map(Step::WithdrawScope),
        ]
    }

    const AFTER_ANSWER: [IntentState; 6] = [
        IntentState::Succeeded,
        IntentState::Rejected,
        IntentState::Conflict,
        IntentState::Unknown,
        IntentState::Escalated,
        // An answer that proves nothing stored and a resend due: back to the wire.
        IntentState::Sending,
    ];

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(256))]
        #[test]
        fn no_intent_is_sent_while_an_earlier_one_of_its_scope_is_unsettled(
            steps in prop::collection::vec(step(), 1..60),
        ) {
            let journal = Journal::new(MemoryStore::new(), "n");
            let mut ids: Vec<String> = Vec::new();
            let mut first_sent: Vec<String> = Vec::new();
            for (n, step) in steps.into_iter().enumerate() {
                let n = n as i64;
                let pick = |i: u8| (!ids.is_empty()).then(|| ids[i as usize % ids.len()].clone());
                match step {
                    Step::Begin(s) => {
                        let scope = ["a", "b"].get(s as usize).copied();
                        let mut r = begin(&journal, n, scoped(None, scope, n));
                        if r.revision == 0 {
                            // An unscoped intent is written by its first attempt.
                            begin_attempt(&journal, &mut r).unwrap();
                            first_sent.push(r.intent_id.clone());
                        }
                        ids.push(r.intent_id);
                    }
                    Step::Drive(i) => {
                        let Some(id) = pick(i) else { continue };
                        let mut r = block_on(journal.find(&id)).unwrap().unwrap();
                        if !matches!(r.state, IntentState::Pending | IntentState::Queued) {
                            continue;
                        }
                        if block_on(journal.ahead_of(&r)).unwrap().is_some() {
                            continue;
                        }
                        // The invariant, checked against everything stored now.
                        let all = block_on(journal.list()).unwrap().records;
                        for other in all.iter().filter(|o| o.scope == r.scope && o.scope.is_some()) {
                            if (other.scope_seq, &other.intent_id) < (r.scope_seq, &r.intent_id) {
                                prop_assert!(other.state.is_settled(), "{} sent while {} is {:?}", r.intent_id, other.intent_id, other.state);
                            }
                        }
                        begin_attempt(&journal, &mut r).unwrap();
                        if r.attempts.len() == 1 {
                            first_sent.push(r.intent_id.clone());
                        }
                    }
                    Step::Settle(i, s) => {
                        let Some(id) = pick(i) else { continue };
                        let mut r = block_on(journal.find(&id)).unwrap().unwrap();
                        if matches!(r.state, IntentState::Sending | IntentState::Unknown | IntentState::Escalated) {
                            settle(&journal, &mut r, AFTER_ANSWER[s as usize]);
                        }
                    }
                    Step::Withdraw(i) => {
                        let Some(id) = pick(i) else { continue };
                        let before = block_on(journal.find(&id)).unwrap().unwrap();
                        match block_on(journal.withdraw(NOW, &id)) {
                            Ok(Some(r)) => {
                                prop_assert!(before.attempts.is_empty());
                                prop_assert_eq!(r.state, IntentState::Withdrawn);
                            }
                            Err(JournalError::NotWithdrawable { .. }) => {
                                prop_assert!(!before.attempts.is_empty() || before.state.is_settled());
                                let after = block_on(journal.find(&id)).unwrap().unwrap();
                                prop_assert_eq!(after, before);
                            }
                            other => prop_assert!(false, "{other:?}"),
                        }
                    }
                    Step::WithdrawScope(s) => {
                        block_on(journal.withdraw_scope(NOW, ["a", "b"][s as usize])).unwrap();
                    }
                }
            }
            // Per scope, first attempts went in the order of the places taken.
            let all = block_on(journal.list()).unwrap().records;
            for scope in ["a", "b"] {
                let seq_of = |id: &String| all.iter().find(|r| &r.intent_id == id).and_then(|r| (r.scope.as_deref() == Some(scope)).then_some(r.scope_seq));
                let order: Vec<u64> = first_sent.iter().filter_map(seq_of).flatten().collect();
                let mut sorted = order.clone();
                sorted.sort_unstable();
                prop_assert_eq!(order, sorted, "scope {}", scope);
            }
        }
    }
}
