//! A stage stream is decoded from UTF-8 by the runtime (`textReader` in
//! network.js, a `TextDecoderStream`) and its text fed to the core's SSE
//! decoder: in each engine, the events and the end are what the core's own
//! decoding of the same bytes gives, however the bytes are cut into chunks
//! (a character split across chunks, bad bytes, a BOM or two, a sequence
//! left unfinished at the end).

use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_futures::JsFuture;
use wasm_bindgen_test::wasm_bindgen_test;

use crate::core::protocol::sse::{SseDecoder, SseEvent};

/// What the runtime's decoding hands the module, chunk by chunk.
async fn texts(chunks: &[&[u8]]) -> Vec<String> {
    let make = js_sys::Function::new_with_args(
        "chunks",
        "return new ReadableStream({ start(c) { for (const x of chunks) c.enqueue(x); c.close(); } })",
    );
    let all: js_sys::Array = chunks
        .iter()
        .map(|c| JsValue::from(js_sys::Uint8Array::from(*c)))
        .collect();
    let stream: web_sys::ReadableStream =
        make.call1(&JsValue::NULL, &all).unwrap().unchecked_into();
    let reader = super::executor::text_reader(&stream);
    let mut out = Vec::new();
    loop {
        let read = JsFuture::from(reader.read()).await.unwrap();
        if js_sys::Reflect::get(&read, &"done".into())
            .unwrap()
            .is_truthy()
        {
            return out;
        }
        out.push(
            js_sys::Reflect::get(&read, &"value".into())
                .unwrap()
                .as_string()
                .unwrap(),
        );
    }
}

fn drained(decoder: &mut SseDecoder, fed: bool) -> (Vec<SseEvent>, bool) {
    let mut events = Vec::new();
    while let Some(e) = decoder.next_event() {
        events.push(e);
    }
    (events, fed && decoder.finish().is_ok())
}

#[wasm_bindgen_test]
async fn the_runtimes_text_decodes_as_the_cores_bytes_do_however_cut() {
    let streams: [&[u8]; 6] = [
        "\u{FEFF}id: 1\ndata: ü🧾 漢字\n\n".as_bytes(),
        "\u{FEFF}\u{FEFF}data: x\r\n\r\n".as_bytes(),
        b"data: a \xff\xfe b \xe2\x82 c\n\ndata: \xf0\x9f\n\n",
        "event: e\r\ndata: é\rdata: ü\n\n: comment ✓\n\n".as_bytes(),
        b"data: a\n\n\xe2\x82",
        "data: 🧾🧾🧾🧾\n\ndata: x".as_bytes(),
    ];
    for bytes in streams {
        // Every single cut, then one byte per chunk.
        let mut cuts: Vec<Vec<&[u8]>> = (0..=bytes.len())
            .map(|i| vec![&bytes[..i], &bytes[i..]])
            .collect();
        cuts.push(bytes.chunks(1).collect());
        for chunks in cuts {
            let mut ours = SseDecoder::default();
            let fed = chunks.iter().all(|c| ours.feed(c).is_ok());
            let want = drained(&mut ours, fed);
            let mut theirs = SseDecoder::default();
            let fed = texts(&chunks)
                .await
                .iter()
                .all(|t| theirs.push_text(t).is_ok());
            assert_eq!(drained(&mut theirs, fed), want, "{chunks:?}");
        }
    }
}
