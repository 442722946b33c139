//! The browser layer: thin wrappers over web APIs that execute what the
//! core decides. One file per web API; JS exceptions are captured as
//! `{ name, message }`.

pub mod js_failure;
pub mod locks;
pub mod storage;

pub use js_failure::JsFailure;
