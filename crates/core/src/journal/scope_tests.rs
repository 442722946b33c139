//! Scopes: the places, turns and withdrawals the engine decides with
//! (`take_place`, `scope::ahead_of`, `withdrawal`), over a scope's records
//! as a listing hands them over. The engine driving them, and the turn
//! checked on every command in every simulated world: engine/tests.rs.

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

/// A scope's records as the engine holds them, one place taken per begin.
#[derive(Default)]
struct Scopes(Vec<IntentRecord>);

impl Scopes {
    /// A new intent, in its place (a scoped one), as the engine begins it.
    fn begin(&mut self, n: i64, intent: NewIntent) -> IntentRecord {
        let policy = RequestIdPolicy::default();
        let (mut record, fingerprint) =
            super::tests::made_with("n", policy, NOW + n, intent, n as u64 + 1);
        if let Some(key) = record.intent_key.clone() {
            if let Some(existing) = self.0.iter().find(|r| r.intent_id == record.intent_id) {
                match replay(&key, existing.clone(), &fingerprint).unwrap() {
                    Begun::Settled(r) if r.state == IntentState::Withdrawn => {
                        record = sent_again(r, record.scope.clone());
                    }
                    begun => return begun.record().clone(),
                }
            }
        }
        take_place(&mut record, &self.0);
        self.write(record.clone());
        record
    }

    fn write(&mut self, record: IntentRecord) {
        self.0.retain(|r| r.intent_id != record.intent_id);
        self.0.push(record);
    }

    fn find(&self, id: &str) -> IntentRecord {
        self.0.iter().find(|r| r.intent_id == id).unwrap().clone()
    }

    /// What the machine writes before an attempt's first byte.
    fn begin_attempt(&mut self, record: &mut IntentRecord) {
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
        self.write(record.clone());
    }

    fn settle(&mut self, record: &mut IntentRecord, state: IntentState) {
        record.state = state;
        self.write(record.clone());
    }

    fn ahead(&self, record: &IntentRecord) -> Option<String> {
        scope::ahead_of(&self.0, record).map(|head| head.intent_id.clone())
    }

    fn withdraw(&mut self, id: &str) -> Result<IntentRecord, JournalError> {
        let record = withdrawal(self.find(id))?;
        self.write(record.clone());
        Ok(record)
    }
}

#[test]
fn a_scoped_intent_takes_its_place_queued_behind_the_unsettled_one() {
    let mut j = Scopes::default();
    let first = j.begin(0, scoped(None, Some("cart"), 1));
    let second = j.begin(1, scoped(None, Some("cart"), 2));
    let elsewhere = j.begin(2, scoped(None, Some("other"), 3));
    let unscoped = j.begin(3, scoped(None, None, 4));

    assert_eq!(
        (first.state, first.scope_seq),
        (IntentState::Pending, Some(1))
    );
    assert_eq!(second.state, IntentState::Queued);
    assert_eq!(second.scope_seq, Some(2));
    assert_eq!(second.waits_for.as_deref(), Some(first.intent_id.as_str()));
    assert_eq!(
        elsewhere.state,
        IntentState::Pending,
        "another scope does not wait"
    );
    // Every record is made in this build's schema (the body as text),
    // which builds before it leave alone; an unscoped one takes no place.
    assert_eq!((first.schema_version, second.schema_version), (4, 4));
    assert_eq!(
        (unscoped.schema_version, unscoped.scope_seq, unscoped.state),
        (4, None, IntentState::Pending)
    );

    assert_eq!(j.ahead(&first), None);
    assert_eq!(j.ahead(&second), Some(first.intent_id.clone()));
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
        let mut j = Scopes::default();
        let mut first = j.begin(0, scoped(None, Some("s"), 1));
        let second = j.begin(1, scoped(None, Some("s"), 2));
        let third = j.begin(2, scoped(None, Some("s"), 3));
        j.begin_attempt(&mut first);
        j.settle(&mut first, state);
        let expected = if holds {
            Some(first.intent_id.clone())
        } else {
            None
        };
        assert_eq!(j.ahead(&second), expected, "{state:?}");
        // The third always waits: for the first, or now for the second.
        let waits = if holds { &first } else { &second };
        assert_eq!(j.ahead(&third), Some(waits.intent_id.clone()), "{state:?}");
    }
}

#[test]
fn a_queued_intent_is_withdrawn_and_an_attempted_one_is_refused_unchanged() {
    let mut j = Scopes::default();
    let mut first = j.begin(0, scoped(None, Some("s"), 1));
    let second = j.begin(1, scoped(None, Some("s"), 2));
    let third = j.begin(2, scoped(None, Some("s"), 3));
    j.begin_attempt(&mut first);

    let refused = j.withdraw(&first.intent_id);
    assert!(
        matches!(&refused, Err(JournalError::NotWithdrawable { record })
            if record.state == IntentState::Sending && record.attempts.len() == 1),
        "{refused:?}"
    );
    let message = refused.unwrap_err().message();
    assert!(message.contains("only history can tell"), "{message}");
    assert_eq!(
        j.find(&first.intent_id),
        first,
        "a refused withdrawal changes nothing"
    );

    let withdrawn = j.withdraw(&second.intent_id).unwrap();
    assert_eq!(withdrawn.state, IntentState::Withdrawn);
    assert_eq!(
        (withdrawn.appended, withdrawn.waits_for.clone()),
        (Some(false), None)
    );
    let outcome = crate::machine::Outcome::from_record(&withdrawn);
    assert_eq!(outcome.status, crate::machine::Status::Rejected);
    assert_eq!(outcome.error.unwrap().error_code.as_str(), "Withdrawn");
    // The third now waits for the first only.
    assert_eq!(j.ahead(&third), Some(first.intent_id.clone()));
}

#[test]
fn a_withdrawal_and_a_first_attempt_racing_end_in_exactly_one_of_them() {
    // Each is a compare-and-swap on the revision it read.
    let store = MemoryStore::new();
    let mut j = Scopes::default();
    let first = j.begin(0, scoped(None, Some("s"), 1));
    block_on(store.put(&first)).unwrap();
    let read = IntentRecord {
        revision: 1,
        ..first
    };
    // Withdrawn first: the attempt's write, on the revision it read, loses.
    let withdrawn = withdrawal(read.clone()).unwrap();
    assert_eq!(block_on(store.put(&withdrawn)), Ok(2));
    let mut attempted = read.clone();
    Scopes::default().begin_attempt(&mut attempted);
    assert!(matches!(
        block_on(store.put(&attempted)),
        Err(StoreError::Conflict { current: Some(2) })
    ));
    let stored: IntentRecord = block_on(store.get("n", &read.intent_id)).unwrap().unwrap();
    assert_eq!(
        (stored.state, stored.attempts.len()),
        (IntentState::Withdrawn, 0)
    );
    // The attempt first: the withdrawal, read again, is refused.
    assert!(matches!(
        withdrawal(attempted),
        Err(JournalError::NotWithdrawable { .. })
    ));
}

#[test]
fn a_withdrawn_key_sent_again_takes_a_new_place_at_the_end_of_its_scope() {
    let mut j = Scopes::default();
    let first = j.begin(0, scoped(None, Some("s"), 1));
    let keyed = j.begin(1, scoped(Some("add-item-7"), Some("s"), 2));
    let third = j.begin(2, scoped(None, Some("s"), 3));
    j.withdraw(&keyed.intent_id).unwrap();
    let again = j.begin(3, scoped(Some("add-item-7"), Some("s"), 2));
    assert_eq!(
        again.intent_id, keyed.intent_id,
        "the same key, the same requestId"
    );
    assert_eq!(again.state, IntentState::Queued);
    assert_eq!(again.scope_seq, Some(4));
    // It names the last unsettled one: its turn comes when that one settles.
    assert_eq!(again.waits_for.as_deref(), Some(third.intent_id.as_str()));
    assert_eq!(j.ahead(&again), Some(first.intent_id.clone()));
    // It listens for the one just before it, not for the head.
    let before = scope::just_before(&j.0, &again).map(|r| r.intent_id.clone());
    assert_eq!(before, Some(third.intent_id.clone()));
    assert_eq!(j.ahead(&third), Some(first.intent_id.clone()));
    // The same key given again while it is queued is the same intent, in the same place.
    let replay = j.begin(4, scoped(Some("add-item-7"), Some("s"), 2));
    assert_eq!(replay.scope_seq, Some(4));
}
