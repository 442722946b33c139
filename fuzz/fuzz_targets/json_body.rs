//! Any text decodes to a typed body or a typed error, never a panic; an SSE
//! element built from it is classified without panicking either.
#![no_main]

use libfuzzer_sys::fuzz_target;
use wow_command_client::core::protocol::{ResponseBody, StreamElement};

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let (name, json) = text.split_once('\n').unwrap_or(("PROCESSED", text));
    let body = ResponseBody::from_json_text(json);
    let _ = body.error_code();
    let _ = StreamElement::from_event(Some(name), body);
});
