//! The pure core: no web-sys, no clock, no I/O. Builds and tests on any target.

pub mod protocol;
