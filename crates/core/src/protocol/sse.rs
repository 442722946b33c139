//! An incremental `text/event-stream` decoder (WHATWG HTML §9.2.6).
//!
//! Bytes go in as they arrive, split anywhere — inside a UTF-8 sequence or
//! between `\r` and `\n` — and complete events come out at once, never
//! waiting for the stream's end. Memory is bounded: an event larger than
//! the configured maximum is a typed error, and the decoder stops.

use std::collections::VecDeque;

/// Default bound on one event (data, event type and the current line): 1 MiB.
pub(crate) const DEFAULT_MAX_EVENT_BYTES: usize = 1 << 20;

/// One dispatched event.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SseEvent {
    /// The `event:` field; `None` means the default type `message`.
    pub event: Option<String>,
    /// The `data:` lines joined with `\n`.
    pub data: String,
    /// The last event id at dispatch (it persists across events, per the spec).
    pub id: Option<String>,
    /// A `retry:` value seen since the previous event, in ms.
    pub retry: Option<u64>,
}

/// Why the decoder stopped.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SseError {
    /// An event grew past the bound.
    EventTooLarge {
        /// The bound, in bytes.
        limit: usize,
    },
    /// The stream ended inside an event (its data is discarded, per the spec).
    Truncated {
        /// Bytes of the unfinished event.
        pending_bytes: usize,
    },
    /// The decoder already failed; feed it nothing more.
    Stopped,
}

impl SseError {
    /// The message (what `Display` writes), built without `core::fmt`.
    pub fn message(&self) -> String {
        match self {
            SseError::EventTooLarge { limit } => {
                crate::text::text!("SSE event larger than ", limit, " bytes")
            }
            SseError::Truncated { pending_bytes } => crate::text::text!(
                "SSE stream ended inside an event (",
                pending_bytes,
                " bytes pending)"
            ),
            SseError::Stopped => "SSE decoder stopped after an earlier error".into(),
        }
    }
}

impl ::core::fmt::Display for SseError {
    fn fmt(&self, f: &mut ::core::fmt::Formatter<'_>) -> ::core::fmt::Result {
        f.write_str(&self.message())
    }
}

impl std::error::Error for SseError {}

/// The incremental decoder.
#[derive(Debug)]
pub struct SseDecoder {
    max_event_bytes: usize,
    /// Bytes of an unfinished UTF-8 sequence from the previous chunk.
    utf8_tail: [u8; 4],
    utf8_tail_len: usize,
    /// Whether the first character (a possible BOM) has been seen.
    started: bool,
    /// The last chunk ended on `\r`: a leading `\n` next belongs to it.
    pending_cr: bool,
    line: String,
    data: String,
    has_data: bool,
    event_type: Option<String>,
    last_id: Option<String>,
    retry: Option<u64>,
    ready: VecDeque<SseEvent>,
    failed: bool,
}

impl Default for SseDecoder {
    fn default() -> Self {
        SseDecoder::new(DEFAULT_MAX_EVENT_BYTES)
    }
}

/// One step of UTF-8 decoding at the front of `bytes`.
enum Utf8Step {
    Char(char, usize),
    Invalid(usize),
    Incomplete,
}

fn first_char(bytes: &[u8]) -> Utf8Step {
    let valid = match std::str::from_utf8(bytes) {
        Ok(s) => s,
        Err(e) if e.valid_up_to() > 0 => match std::str::from_utf8(&bytes[..e.valid_up_to()]) {
            Ok(s) => s,
            Err(_) => return Utf8Step::Invalid(1),
        },
        Err(e) => {
            return match e.error_len() {
                Some(n) => Utf8Step::Invalid(n),
                None => Utf8Step::Incomplete,
            }
        }
    };
    match valid.chars().next() {
        Some(c) => Utf8Step::Char(c, c.len_utf8()),
        None => Utf8Step::Incomplete,
    }
}

impl SseDecoder {
    /// A decoder that refuses events larger than `max_event_bytes`.
    pub fn new(max_event_bytes: usize) -> SseDecoder {
        SseDecoder {
            max_event_bytes,
            utf8_tail: [0; 4],
            utf8_tail_len: 0,
            started: false,
            pending_cr: false,
            line: String::new(),
            data: String::new(),
            has_data: false,
            event_type: None,
            last_id: None,
            retry: None,
            ready: VecDeque::new(),
            failed: false,
        }
    }

    /// Feeds the next chunk of bytes. Complete events become available from
    /// [`SseDecoder::next_event`] immediately.
    pub fn feed(&mut self, mut chunk: &[u8]) -> Result<(), SseError> {
        if self.failed {
            return Err(SseError::Stopped);
        }
        // Finish a UTF-8 sequence split across chunks, exactly as a
        // contiguous decode would (same replacement characters).
        while self.utf8_tail_len > 0 && !chunk.is_empty() {
            let take = chunk.len().min(4);
            let mut joined = [0u8; 8];
            let n = self.utf8_tail_len;
            joined[..n].copy_from_slice(&self.utf8_tail[..n]);
            joined[n..n + take].copy_from_slice(&chunk[..take]);
            let consumed = match first_char(&joined[..n + take]) {
                Utf8Step::Char(c, len) => {
                    let mut buf = [0u8; 4];
                    self.push_text(c.encode_utf8(&mut buf))?;
                    len
                }
                Utf8Step::Invalid(len) => {
                    self.push_text("\u{FFFD}")?;
                    len
                }
                Utf8Step::Incomplete => {
                    self.utf8_tail[n..n + chunk.len()].copy_from_slice(chunk);
                    self.utf8_tail_len += chunk.len();
                    return Ok(());
                }
            };
            if consumed >= n {
                chunk = &chunk[consumed - n..];
                self.utf8_tail_len = 0;
            } else {
                self.utf8_tail.copy_within(consumed..n, 0);
                self.utf8_tail_len = n - consumed;
            }
        }
        loop {
            match std::str::from_utf8(chunk) {
                Ok(text) => return self.push_text(text),
                Err(e) => {
                    let (valid, rest) = chunk.split_at(e.valid_up_to());
                    // `valid` is UTF-8 by construction.
                    self.push_text(std::str::from_utf8(valid).unwrap_or_default())?;
                    match e.error_len() {
                        Some(n) => {
                            self.push_text("\u{FFFD}")?;
                            chunk = &rest[n..];
                        }
                        None => {
                            self.utf8_tail[..rest.len()].copy_from_slice(rest);
                            self.utf8_tail_len = rest.len();
                            return Ok(());
                        }
                    }
                }
            }
        }
    }

    /// The next complete event, if any.
    pub fn next_event(&mut self) -> Option<SseEvent> {
        self.ready.pop_front()
    }

    /// Marks the end of the stream. An unfinished event is discarded (per
    /// the spec) and reported as [`SseError::Truncated`]; events already
    /// complete stay available.
    pub fn finish(&mut self) -> Result<(), SseError> {
        if self.failed {
            return Err(SseError::Stopped);
        }
        let pending = self.line.len() + self.data.len() + self.utf8_tail_len;
        let has_partial = pending > 0 || self.has_data || self.event_type.is_some();
        self.line.clear();
        self.reset_event();
        self.utf8_tail_len = 0;
        if has_partial {
            Err(SseError::Truncated {
                pending_bytes: pending,
            })
        } else {
            Ok(())
        }
    }

    fn fail(&mut self) -> SseError {
        self.failed = true;
        self.line = String::new();
        self.reset_event();
        SseError::EventTooLarge {
            limit: self.max_event_bytes,
        }
    }

    fn event_bytes(&self) -> usize {
        self.line.len() + self.data.len() + self.event_type.as_ref().map_or(0, String::len)
    }

    /// Feeds the next piece of the stream already decoded as UTF-8 (where
    /// the runtime decodes it: a browser's `TextDecoderStream`), as
    /// [`SseDecoder::feed`] does its bytes.
    pub fn push_text(&mut self, mut text: &str) -> Result<(), SseError> {
        if text.is_empty() {
            return Ok(());
        }
        if !self.started {
            self.started = true;
            text = text.strip_prefix('\u{FEFF}').unwrap_or(text);
        }
        if self.pending_cr {
            self.pending_cr = false;
            text = text.strip_prefix('\n').unwrap_or(text);
        }
        while let Some(i) = text.find(['\r', '\n']) {
            self.line.push_str(&text[..i]);
            if self.event_bytes() > self.max_event_bytes {
                return Err(self.fail());
            }
            self.process_line()?;
            let rest = &text[i..];
            text = if let Some(after_crlf) = rest.strip_prefix("\r\n") {
                after_crlf
            } else if rest == "\r" {
                self.pending_cr = true;
                ""
            } else {
                &rest[1..]
            };
        }
        self.line.push_str(text);
        if self.event_bytes() > self.max_event_bytes {
            return Err(self.fail());
        }
        Ok(())
    }

    fn process_line(&mut self) -> Result<(), SseError> {
        let line = std::mem::take(&mut self.line);
        if line.is_empty() {
            self.dispatch();
        } else if !line.starts_with(':') {
            // By bytes: `:` is ASCII, never inside a UTF-8 sequence.
            let (field, value) = match line.bytes().position(|b| b == b':') {
                Some(i) => (
                    &line[..i],
                    line[i + 1..].strip_prefix(' ').unwrap_or(&line[i + 1..]),
                ),
                None => (line.as_str(), ""),
            };
            match field {
                "event" => self.event_type = Some(value.to_owned()),
                "data" => {
                    if self.has_data {
                        self.data.push('\n');
                    }
                    self.data.push_str(value);
                    self.has_data = true;
                }
                "id" if !value.contains('\0') => self.last_id = Some(value.to_owned()),
                "retry" if !value.is_empty() && value.bytes().all(|b| b.is_ascii_digit()) => {
                    self.retry = crate::text::parse_decimal(value);
                }
                _ => {}
            }
        }
        // Reuse the line's allocation.
        self.line = line;
        self.line.clear();
        if self.event_bytes() > self.max_event_bytes {
            return Err(self.fail());
        }
        Ok(())
    }

    fn dispatch(&mut self) {
        if !self.has_data {
            self.reset_event();
            return;
        }
        let event = SseEvent {
            event: self.event_type.take().filter(|t| !t.is_empty()),
            data: std::mem::take(&mut self.data),
            id: self.last_id.clone(),
            retry: self.retry.take(),
        };
        self.has_data = false;
        self.ready.push_back(event);
    }

    fn reset_event(&mut self) {
        self.data.clear();
        self.has_data = false;
        self.event_type = None;
        self.retry = None;
    }
}

/// Decodes a whole transcript at once (tests, fixtures).
#[cfg(test)]
pub(crate) fn decode_all(bytes: &[u8]) -> Result<Vec<SseEvent>, SseError> {
    let mut decoder = SseDecoder::default();
    decoder.feed(bytes)?;
    let mut events = Vec::new();
    while let Some(e) = decoder.next_event() {
        events.push(e);
    }
    decoder.finish()?;
    Ok(events)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::test_support::test;

    pub(crate) const TRANSCRIPT: &str = include_str!("../../../../tests/fixtures/sse_snapshot.txt");

    fn ev(event: &str, data: &str, id: &str) -> SseEvent {
        SseEvent {
            event: Some(event.into()),
            data: data.into(),
            id: Some(id.into()),
            retry: None,
        }
    }

    #[test]
    fn decodes_the_reference_transcript() {
        let events = decode_all(TRANSCRIPT.as_bytes()).unwrap();
        let names: Vec<_> = events.iter().map(|e| e.event.as_deref().unwrap()).collect();
        assert_eq!(names, ["SENT", "PROCESSED", "SNAPSHOT"]);
        assert_eq!(events[0].id.as_deref(), Some("0V3oCwcv0001002"));
        assert!(events[1].data.starts_with("{\"id\":\"0V3oCwbn0001001\""));
    }

    #[test]
    fn handles_every_line_ending_comments_bom_and_multiline_data() {
        let text = "\u{FEFF}: comment\r\nid: 1\revent:E\ndata: a\r\ndata:b\n\ndata\n\n";
        let events = decode_all(text.as_bytes()).unwrap();
        assert_eq!(events[0], ev("E", "a\nb", "1"));
        assert_eq!(
            events[1],
            SseEvent {
                event: None,
                data: String::new(),
                id: Some("1".into()),
                retry: None
            }
        );
        assert_eq!(events.len(), 2);
    }

    #[test]
    fn retry_unknown_fields_and_events_without_data() {
        let text = "retry: 3000\nfoo: bar\nevent: X\n\nretry: x1\ndata: d\n\n";
        let events = decode_all(text.as_bytes()).unwrap();
        // The first block has no data: no dispatch, and its type is reset.
        assert_eq!(events.len(), 1);
        assert_eq!(events[0].event, None);
        assert_eq!(events[0].retry, None);
        let text = "retry: 250\ndata: d\n\n";
        assert_eq!(decode_all(text.as_bytes()).unwrap()[0].retry, Some(250));
        let text = "id: a\0b\ndata: d\n\n";
        assert_eq!(decode_all(text.as_bytes()).unwrap()[0].id, None);
    }

    #[test]
    fn a_split_crlf_is_one_line_ending() {
        let mut d = SseDecoder::default();
        d.feed(b"data: x\r").unwrap();
        d.feed(b"\n\r").unwrap();
        d.feed(b"\ndata: y\r\r").unwrap();
        assert_eq!(d.next_event().unwrap().data, "x");
        assert_eq!(d.next_event().unwrap().data, "y");
        assert!(d.next_event().is_none());
        d.finish().unwrap();
    }

    #[test]
    fn events_come_out_as_soon_as_they_are_complete() {
        let mut d = SseDecoder::default();
        d.feed(b"event:SENT\ndata:{}\n").unwrap();
        assert!(d.next_event().is_none());
        d.feed(b"\n").unwrap();
        assert_eq!(d.next_event().unwrap().event.as_deref(), Some("SENT"));
    }

    #[test]
    fn utf8_split_inside_a_character_and_invalid_bytes() {
        let text = "data: caf\u{e9} \u{1F600}\n\n".as_bytes();
        for cut in 0..text.len() {
            let mut d = SseDecoder::default();
            d.feed(&text[..cut]).unwrap();
            d.feed(&text[cut..]).unwrap();
            assert_eq!(
                d.next_event().unwrap().data,
                "caf\u{e9} \u{1F600}",
                "cut {cut}"
            );
        }
        let events = decode_all(b"data: a\xffb\xe2\x82\n\n").unwrap();
        assert_eq!(events[0].data, "a\u{FFFD}b\u{FFFD}");
    }

    #[test]
    fn an_oversized_event_is_a_typed_error_and_stops_the_decoder() {
        let mut d = SseDecoder::new(64);
        let big = format!("data: {}\n", "x".repeat(100));
        assert_eq!(
            d.feed(big.as_bytes()),
            Err(SseError::EventTooLarge { limit: 64 })
        );
        assert_eq!(d.feed(b"\n"), Err(SseError::Stopped));
        // Many small lines add up too.
        let mut d = SseDecoder::new(64);
        let err = (0..40).find_map(|_| d.feed(b"data: abc\n").err());
        assert_eq!(err, Some(SseError::EventTooLarge { limit: 64 }));
        // A line without an end is bounded as well.
        let mut d = SseDecoder::new(64);
        assert!(d.feed(&[b'x'; 65]).is_err());
    }

    #[test]
    fn a_stream_cut_inside_an_event_is_reported_truncated() {
        let mut d = SseDecoder::default();
        d.feed(b"event:SENT\ndata:{}\n\nevent:PROCESSED\ndata:{\"id\"")
            .unwrap();
        assert!(d.next_event().is_some());
        assert!(matches!(d.finish(), Err(SseError::Truncated { .. })));
        assert!(decode_all(b"data: x\n\n").is_ok());
    }
}

#[cfg(all(test, not(target_arch = "wasm32")))]
mod properties {
    use super::*;
    use proptest::prelude::*;

    fn decode_chunked(bytes: &[u8], cuts: &[usize]) -> (Vec<SseEvent>, Result<(), SseError>) {
        let mut d = SseDecoder::default();
        let mut events = Vec::new();
        let mut start = 0;
        let mut points: Vec<usize> = cuts.iter().map(|c| c % (bytes.len() + 1)).collect();
        points.sort_unstable();
        points.push(bytes.len());
        for end in points {
            d.feed(&bytes[start..end]).unwrap();
            while let Some(e) = d.next_event() {
                events.push(e);
            }
            start = end;
        }
        (events, d.finish())
    }

    fn transcript() -> impl Strategy<Value = Vec<u8>> {
        let line = prop_oneof![
            Just("event:SENT".to_string()),
            Just("event: PROCESSED".to_string()),
            Just("id:0V3o".to_string()),
            Just(": keep-alive".to_string()),
            Just("retry: 10".to_string()),
            Just(String::new()),
            "data:[ -~\u{e9}\u{1F600}]{0,12}",
        ];
        let ending = prop_oneof![Just("\n"), Just("\r\n"), Just("\r")];
        prop::collection::vec((line, ending), 0..24).prop_map(|lines| {
            let mut s = String::new();
            for (l, e) in lines {
                s.push_str(&l);
                s.push_str(e);
            }
            s.into_bytes()
        })
    }

    proptest! {
        #[test]
        fn any_chunking_yields_the_same_events(
            bytes in transcript(),
            cuts in prop::collection::vec(any::<usize>(), 0..12),
        ) {
            let whole = decode_chunked(&bytes, &[]);
            let chunked = decode_chunked(&bytes, &cuts);
            prop_assert_eq!(whole, chunked);
        }

        #[test]
        fn arbitrary_bytes_never_panic_and_stay_bounded(
            bytes in prop::collection::vec(any::<u8>(), 0..512),
            cuts in prop::collection::vec(any::<usize>(), 0..8),
        ) {
            let mut d = SseDecoder::new(128);
            let mut start = 0;
            let mut points: Vec<usize> = cuts.iter().map(|c| c % (bytes.len() + 1)).collect();
            points.sort_unstable();
            points.push(bytes.len());
            for end in points {
                if d.feed(&bytes[start..end]).is_err() { break; }
                while let Some(e) = d.next_event() {
                    prop_assert!(e.data.len() <= 128);
                }
                start = end;
            }
        }
    }
}
