//! Any bytes, split at any points, never panic the SSE decoder, never yield
//! an event past its bound, and yield the same events as one whole feed.
#![no_main]

use libfuzzer_sys::fuzz_target;
use wow_command_client::core::protocol::{SseDecoder, SseEvent};

fn run(chunks: &[&[u8]]) -> (Vec<SseEvent>, bool) {
    let mut d = SseDecoder::new(256);
    let mut events = Vec::new();
    for chunk in chunks {
        if d.feed(chunk).is_err() {
            return (events, false);
        }
        while let Some(e) = d.next_event() {
            assert!(e.data.len() <= 256);
            events.push(e);
        }
    }
    let _ = d.finish();
    (events, true)
}

fuzz_target!(|data: &[u8]| {
    let (cut, bytes) = match data.split_first() {
        Some((c, rest)) => (*c as usize % (rest.len() + 1), rest),
        None => return,
    };
    let whole = run(&[bytes]);
    let split = run(&[&bytes[..cut], &bytes[cut..]]);
    if whole.1 && split.1 {
        assert_eq!(whole.0, split.0);
    }
});
