//! Aggregate state folded from the event store, with a per-aggregate
//! cache that folds only the streams appended since (as Wow's state
//! aggregate cache and snapshots spare it replaying the whole history).

use super::*;

/// Folded aggregates: (aggregate name, id) → (state, version).
pub(super) type Folded = HashMap<(&'static str, String), (Value, i64)>;

/// Applies the events of `streams` (in version order) to `state`, which is
/// the aggregate at `version`; returns the version it is at after them.
fn apply(
    agg: &AggregateType,
    id: &str,
    state: &mut Value,
    version: i64,
    streams: &[DomainEventStream],
) -> i64 {
    for s in streams {
        for e in &s.body {
            let body = serde_json::to_value(&e.body).unwrap_or(Value::Null);
            domain::apply(agg.name, state, id, &e.name, &body);
        }
    }
    streams.last().map_or(version, |s| s.version)
}

impl App {
    /// The aggregate's state from its history, up to version `upto` when given.
    pub(super) fn fold(
        &self,
        agg: &AggregateType,
        id: &str,
        upto: Option<i64>,
    ) -> (Value, i64, Vec<DomainEventStream>) {
        let mut streams = self.store.load(agg.name, id);
        streams.retain(|s| upto.is_none_or(|v| s.version <= v));
        let mut state = Value::Null;
        let version = apply(agg, id, &mut state, 0, &streams);
        (state, version, streams)
    }

    /// The aggregate's latest state and version: the cached fold, moved on
    /// by the streams appended since.
    pub(super) fn latest(&self, agg: &AggregateType, id: &str) -> (Value, i64) {
        let key = (agg.name, id.to_owned());
        let cached = self.folded.lock().unwrap().get(&key).cloned();
        let (mut state, version) = cached.unwrap_or((Value::Null, 0));
        let version = apply(
            agg,
            id,
            &mut state,
            version,
            &self.store.load_after(agg.name, id, version),
        );
        let mut folded = self.folded.lock().unwrap();
        if folded.get(&key).is_none_or(|(_, at)| *at < version) {
            folded.insert(key, (state.clone(), version));
        }
        (state, version)
    }
}
