//! `CommandStage`: how far a command has travelled (PROTOCOL §4).

use serde::{Deserialize, Serialize};

use super::json_codec::JsonError;
use super::json_codec::{read_name, FromJson, JsonOut, ToJson, UNKNOWN_NAME};
use super::json_value::JsonValue;

/// A command's processing stage, in the server's declaration order.
///
/// `Ord` follows that order, so `Sent < Processed < Snapshot < …`; note that
/// the four stages after PROCESSED are independent branches, not a chain:
/// use [`CommandStage::previous`] for the real relation.
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, Default,
)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum CommandStage {
    /// Accepted by the command bus.
    #[default]
    Sent,
    /// The aggregate executed the command and its events were persisted.
    Processed,
    /// Snapshot processing done.
    Snapshot,
    /// Projection of the generated events done.
    Projected,
    /// An event processor handled the events.
    EventHandled,
    /// A saga handled the events and sent the commands it produced.
    SagaHandled,
}

impl CommandStage {
    /// Every stage, in declaration order.
    pub const ALL: [CommandStage; 6] = [
        CommandStage::Sent,
        CommandStage::Processed,
        CommandStage::Snapshot,
        CommandStage::Projected,
        CommandStage::EventHandled,
        CommandStage::SagaHandled,
    ];

    /// The wire name (`"SENT"`, `"EVENT_HANDLED"`, …).
    pub const fn as_str(self) -> &'static str {
        match self {
            CommandStage::Sent => "SENT",
            CommandStage::Processed => "PROCESSED",
            CommandStage::Snapshot => "SNAPSHOT",
            CommandStage::Projected => "PROJECTED",
            CommandStage::EventHandled => "EVENT_HANDLED",
            CommandStage::SagaHandled => "SAGA_HANDLED",
        }
    }

    /// Parses a wire name exactly as written (SSE event names are case-sensitive).
    pub(crate) fn from_wire(name: &str) -> Option<CommandStage> {
        CommandStage::ALL.into_iter().find(|s| s.as_str() == name)
    }

    /// Parses a header value the way the server does: upper-cased, then matched.
    pub fn from_header(value: &str) -> Option<CommandStage> {
        CommandStage::ALL
            .into_iter()
            .find(|s| s.as_str().eq_ignore_ascii_case(value.trim()))
    }

    /// The stages whose signals a wait for `self` also accepts.
    pub const fn previous(self) -> &'static [CommandStage] {
        match self {
            CommandStage::Sent => &[],
            CommandStage::Processed => &[CommandStage::Sent],
            _ => &[CommandStage::Sent, CommandStage::Processed],
        }
    }

    /// Whether `stage` is one of `self`'s previous stages.
    pub fn is_previous(self, stage: CommandStage) -> bool {
        self.previous().contains(&stage)
    }

    /// Whether a wait for `self` is notified by a signal of `processing`
    /// (`this == processing || processing in previous`).
    pub fn should_notify(self, processing: CommandStage) -> bool {
        self == processing || self.is_previous(processing)
    }

    /// Whether a wait for this stage filters signals by processor/function.
    pub const fn should_wait_function(self) -> bool {
        matches!(
            self,
            CommandStage::Projected | CommandStage::EventHandled | CommandStage::SagaHandled
        )
    }

    /// Whether reaching this stage successfully implies the events were appended.
    pub(crate) const fn implies_appended(self) -> bool {
        !matches!(self, CommandStage::Sent)
    }
}

impl ::core::fmt::Display for CommandStage {
    fn fmt(&self, f: &mut ::core::fmt::Formatter<'_>) -> ::core::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl ToJson for CommandStage {
    fn write_json(&self, out: &mut JsonOut) {
        self.as_str().write_json(out)
    }
}

impl FromJson for CommandStage {
    fn from_json(value: JsonValue) -> Result<Self, JsonError> {
        CommandStage::from_wire(read_name(&value)?).ok_or(UNKNOWN_NAME)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::test_support::test;

    #[test]
    fn wire_names_round_trip_and_follow_declaration_order() {
        let names: Vec<&str> = CommandStage::ALL.iter().map(|s| s.as_str()).collect();
        assert_eq!(
            names,
            [
                "SENT",
                "PROCESSED",
                "SNAPSHOT",
                "PROJECTED",
                "EVENT_HANDLED",
                "SAGA_HANDLED"
            ]
        );
        for s in CommandStage::ALL {
            assert_eq!(CommandStage::from_wire(s.as_str()), Some(s));
        }
        assert!(CommandStage::ALL.windows(2).all(|w| w[0] < w[1]));
        assert_eq!(CommandStage::from_wire("processed"), None);
        assert_eq!(
            CommandStage::from_header(" processed "),
            Some(CommandStage::Processed)
        );
        assert_eq!(CommandStage::from_header("DONE"), None);
    }

    #[test]
    fn previous_relations_match_the_server() {
        use CommandStage::*;
        assert!(Sent.previous().is_empty());
        assert_eq!(Processed.previous(), &[Sent]);
        for s in [Snapshot, Projected, EventHandled, SagaHandled] {
            assert_eq!(s.previous(), &[Sent, Processed]);
            assert!(s.should_notify(Sent) && s.should_notify(Processed) && s.should_notify(s));
        }
        // The branches after PROCESSED do not notify each other.
        assert!(!Snapshot.should_notify(Projected));
        assert!(!SagaHandled.should_notify(EventHandled));
        assert!(!Processed.should_notify(Snapshot));
        assert_eq!(
            CommandStage::ALL.map(|s| s.should_wait_function()),
            [false, false, false, true, true, true]
        );
        assert!(!Sent.implies_appended() && Processed.implies_appended());
    }

    #[test]
    fn serde_uses_wire_names() {
        let json = serde_json::to_string(&CommandStage::EventHandled).unwrap();
        assert_eq!(json, "\"EVENT_HANDLED\"");
        let back: CommandStage = serde_json::from_str("\"SAGA_HANDLED\"").unwrap();
        assert_eq!(back, CommandStage::SagaHandled);
        assert!(serde_json::from_str::<CommandStage>("\"DONE\"").is_err());
    }
}
