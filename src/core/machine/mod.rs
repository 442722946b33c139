//! The sans-IO intent state machine: timeout → confirm against history →
//! retry with the same requestId, or stay unknown and escalate.

pub mod backoff;
pub mod intent_machine;
pub mod outcome;

pub use backoff::{backoff_ms, Jitter};
pub use intent_machine::{Action, ConfirmAnswer, IntentMachine, MachineConfig, TransportError};
pub use outcome::{Outcome, Status};

#[cfg(test)]
mod tests;
