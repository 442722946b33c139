//! The sans-IO intent state machine: timeout → confirm against history →
//! retry with the same requestId, or stay unknown and escalate.

pub mod backoff;
pub mod history;
pub mod intent_machine;
pub mod outcome;
pub mod probe;

pub use backoff::{backoff_ms, Jitter};
pub use history::{Availability, GateConfig, HistoryGate, Look, LookAnswer, Said, Ticket};
pub use intent_machine::{Action, ConfirmAnswer, IntentMachine, MachineConfig, TransportError};
pub use outcome::{Outcome, Status, SuccessValue};
pub use probe::{Granted, Probe, ProbeAction};

#[cfg(test)]
mod history_tests;
#[cfg(test)]
mod probe_tests;
#[cfg(test)]
mod tests;
