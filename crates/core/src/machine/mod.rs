//! The sans-IO intent state machine: timeout → confirm against history →
//! retry with the same requestId, or stay unknown and escalate.

pub mod backoff;
pub mod history;
pub(crate) mod intent_machine;
pub mod outcome;
pub mod probe;

pub use backoff::backoff_ms;

pub(crate) use history::Ticket;
pub use history::{Availability, GateConfig, Look, LookAnswer, Said};
pub use intent_machine::{Action, ConfirmAnswer, IntentMachine, MachineConfig, TransportError};
pub use outcome::{Outcome, Status, SuccessValue};
pub(crate) use probe::Granted;
pub use probe::{Probe, ProbeAction};

#[cfg(test)]
mod history_tests;
#[cfg(test)]
mod probe_tests;
#[cfg(test)]
mod tests;
