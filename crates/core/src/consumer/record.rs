//! `EffectRecord`: what a consumer remembers of one input identity.

use serde::{Deserialize, Serialize};

use crate::journal::record::check_schema_version;
use crate::journal::{RecordError, RecordKind, StoredRecord};
use crate::protocol::json_codec::{read_name, wire_object, UNKNOWN_NAME};
use crate::protocol::{FromJson, JsonError, JsonOut, JsonValue, ToJson};

/// The schema version this build writes.
pub(crate) const EFFECT_SCHEMA_VERSION: u32 = 1;

/// The longest identity accepted (an event id, message id or business key).
pub(crate) const MAX_IDENTITY_LEN: usize = 512;

/// Where an identity's effect stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "camelCase")]
pub enum EffectState {
    /// Recorded before the effect ran; not known to be finished.
    #[default]
    Started,
    /// The effect finished and its result is recorded.
    Done,
}

wire_object! {
    /// An input identity's record in the consumer's store: started before the
    /// effect, done after it.
    #[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
    #[serde(rename_all = "camelCase")]
    pub struct EffectRecord {
        /// The stored layout's version.
        schema_version: u32 => "schemaVersion" put / req,
        /// Storage namespace.
        namespace: String => "namespace" put / req,
        /// The input identity: also the external system's idempotency key.
        identity: String => "identity" put / req,
        /// Where the effect stands.
        state: EffectState => "state" put / req,
        /// How many times the effect was started (more than 1 only after a
        /// reconciliation said to run it again).
        attempt: u32 => "attempt" put / req,
        /// The deliverer that started the current attempt.
        owner: String => "owner" put / req,
        /// When the current attempt started (ms since the epoch).
        started_at: u64 => "startedAt" put / req,
        /// Until when its deliverer counts as alive where no lock tells.
        lease_until: u64 => "leaseUntil" put / req,
        /// When it was recorded done.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        finished_at: Option<u64> => "finishedAt" some / opt,
        /// The effect's result (JSON), once done.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        result: Option<JsonValue> => "result" some / opt,
        /// Whether `done` came from a reconciliation rather than the effect's own return.
        #[serde(default)]
        reconciled: bool => "reconciled" put / or_default,
        /// The last failure of the effect, if it threw.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        last_error: Option<String> => "lastError" some / opt,
        /// Compare-and-swap revision: 0 before the first write.
        #[serde(default)]
        revision: u64 => "revision" put / or_default,
    }
}

impl ToJson for EffectState {
    fn write_json(&self, out: &mut JsonOut) {
        match self {
            EffectState::Started => "started",
            EffectState::Done => "done",
        }
        .write_json(out)
    }
}

impl FromJson for EffectState {
    fn from_json(value: JsonValue) -> Result<Self, JsonError> {
        match read_name(&value)? {
            "started" => Ok(EffectState::Started),
            "done" => Ok(EffectState::Done),
            _ => Err(UNKNOWN_NAME),
        }
    }
}

impl StoredRecord for EffectRecord {
    const KIND: RecordKind = RecordKind::Effect;
    fn namespace(&self) -> &str {
        &self.namespace
    }
    fn id(&self) -> &str {
        &self.identity
    }
    fn revision(&self) -> u64 {
        self.revision
    }
    fn set_revision(&mut self, revision: u64) {
        self.revision = revision;
    }
    fn check_schema(version: Option<u64>) -> Result<(), RecordError> {
        check_schema_version(version, EFFECT_SCHEMA_VERSION)
    }
}

/// Accepts an identity: non-empty, at most `MAX_IDENTITY_LEN` (512) bytes, no
/// control characters (it becomes a storage key and a lock name).
pub(crate) fn check_identity(identity: &str) -> Result<(), String> {
    if identity.trim().is_empty() {
        return Err("the identity is empty".into());
    }
    if identity.len() > MAX_IDENTITY_LEN {
        return Err(crate::text::text!(
            "the identity is ",
            identity.len(),
            " bytes; at most ",
            MAX_IDENTITY_LEN
        ));
    }
    if identity.chars().any(char::is_control) {
        return Err("the identity contains control characters".into());
    }
    Ok(())
}
