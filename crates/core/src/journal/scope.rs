//! Scopes: the intents of one scope in one namespace are sent one after
//! another, in the order their records were first written. That order is
//! `scopeSeq`, given under the scope's lock when a record is first written
//! (ties, which only a store shared without locks could make, go by
//! intentId), so every tab and worker reading the journal agrees on it.
//!
//! An intent's turn comes when every earlier intent of its scope is settled
//! (succeeded, rejected, conflict or withdrawn) or gone: an unknown or
//! escalated one holds the scope until history answers, never a guess.

use super::record::IntentRecord;

/// Where `record` stands in its scope's order.
fn place(record: &IntentRecord) -> (u64, &str) {
    (record.scope_seq.unwrap_or(0), record.intent_id.as_str())
}

/// The first unsettled intent of `scope` among `records`: the one whose
/// turn it is.
pub fn head<'a>(records: &'a [IntentRecord], scope: &str) -> Option<&'a IntentRecord> {
    records
        .iter()
        .filter(|r| r.scope.as_deref() == Some(scope) && !r.state.is_settled())
        .min_by(|a, b| place(a).cmp(&place(b)))
}

/// The earlier intent of `record`'s scope it must wait for, if any: the
/// scope's head when that is not `record` and comes before it. `None` for
/// an unscoped or settled record, or when its turn has come.
pub fn ahead_of<'a>(
    records: &'a [IntentRecord],
    record: &IntentRecord,
) -> Option<&'a IntentRecord> {
    let scope = record.scope.as_deref()?;
    if record.state.is_settled() {
        return None;
    }
    head(records, scope).filter(|h| h.intent_id != record.intent_id && place(h) < place(record))
}

/// The unsettled intent of `record`'s scope just before it: the one whose
/// settling a waiting `record` listens for (when it settles, `record` is
/// next, or waits for the one before that, if that was withdrawn).
pub(crate) fn just_before<'a>(
    records: &'a [IntentRecord],
    record: &IntentRecord,
) -> Option<&'a IntentRecord> {
    let scope = record.scope.as_deref()?;
    records
        .iter()
        .filter(|r| {
            r.scope.as_deref() == Some(scope) && !r.state.is_settled() && place(r) < place(record)
        })
        .max_by(|a, b| place(a).cmp(&place(b)))
}

/// The last unsettled intent of `scope`: the one a new record of the scope
/// names as the one it waits for.
pub fn last<'a>(records: &'a [IntentRecord], scope: &str) -> Option<&'a IntentRecord> {
    records
        .iter()
        .filter(|r| r.scope.as_deref() == Some(scope) && !r.state.is_settled())
        .max_by(|a, b| place(a).cmp(&place(b)))
}

/// The place a new record of `scope` takes: after every record of it still
/// in the journal.
pub(crate) fn next_seq(records: &[IntentRecord], scope: &str) -> u64 {
    records
        .iter()
        .filter(|r| r.scope.as_deref() == Some(scope))
        .filter_map(|r| r.scope_seq)
        .max()
        .map_or(1, |n| n + 1)
}
