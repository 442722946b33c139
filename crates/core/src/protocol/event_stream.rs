//! `DomainEventStream`: one append in the authoritative history (PROTOCOL §5.2).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::json_value::JsonValue;

/// One domain event inside a stream.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DomainEvent {
    /// Event id.
    pub id: String,
    /// snake_case event name, e.g. `amount_locked`.
    pub name: String,
    /// Schema revision, `0.0.1` by default.
    #[serde(default = "default_revision")]
    pub revision: String,
    /// Fully-qualified body type.
    pub body_type: String,
    /// The event body, as received.
    pub body: JsonValue,
}

fn default_revision() -> String {
    "0.0.1".to_owned()
}

/// One atomic append: the events one command produced on one aggregate.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DomainEventStream {
    /// Stream id.
    pub id: String,
    /// Bounded context.
    pub context_name: String,
    /// Aggregate name.
    pub aggregate_name: String,
    /// Propagated message header (`upstream_id`, `command_wait_*`, …).
    #[serde(default)]
    pub header: BTreeMap<String, String>,
    /// Aggregate id.
    pub aggregate_id: String,
    /// Tenant id.
    pub tenant_id: String,
    /// Owner id (default empty).
    #[serde(default)]
    pub owner_id: String,
    /// Space id (default empty).
    #[serde(default)]
    pub space_id: String,
    /// The command that produced it.
    pub command_id: String,
    /// That command's requestId: the idempotency key.
    pub request_id: String,
    /// Aggregate version after this stream (first stream = 1).
    pub version: i64,
    /// The events.
    pub body: Vec<DomainEvent>,
    /// Append time, epoch ms.
    pub create_time: i64,
    /// Mongo query results only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub size: Option<i64>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::test_support::test;

    const FIXTURE: &str = include_str!("../../../../tests/fixtures/domain_event_stream.json");

    #[test]
    fn decodes_the_reference_stream_and_keeps_bodies() {
        let streams: Vec<DomainEventStream> = serde_json::from_str(FIXTURE).unwrap();
        let s = &streams[0];
        assert_eq!(s.request_id, "7f1d2c1e-0000-4000-8000-000000000002");
        assert_eq!(s.version, 2);
        assert_eq!(s.body.len(), 2);
        assert_eq!(s.body[1].name, "prepared");
        assert_eq!(
            s.body[1].body.get("to").and_then(JsonValue::as_str),
            Some("targetId")
        );
        assert_eq!(
            s.header.get("upstream_id").map(String::as_str),
            Some("0V3oCVyv000100L")
        );
        assert_eq!(s.owner_id, "");
        let again: DomainEventStream =
            serde_json::from_str(&serde_json::to_string(s).unwrap()).unwrap();
        assert_eq!(&again, s);
    }

    #[test]
    fn a_stream_without_request_id_is_refused() {
        let text = FIXTURE.replace(
            "\"requestId\": \"7f1d2c1e-0000-4000-8000-000000000002\",",
            "",
        );
        let err = serde_json::from_str::<Vec<DomainEventStream>>(&text).unwrap_err();
        assert!(err.to_string().contains("requestId"), "{err}");
    }
}
