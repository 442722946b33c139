//! The module's allocator, in each engine: random allocations, growths,
//! shrinks and frees, from a few bytes to megabytes (linear memory grows
//! many times), each buffer filled with its own byte and checked before it
//! changes. Two buffers handed overlapping memory, or a chunk's metadata
//! written over, show as a wrong byte here (and, in a debug build, as the
//! allocator's own assertion failing).

use wasm_bindgen_test::wasm_bindgen_test;

/// A small deterministic generator (xorshift64): the same run in each engine.
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: usize) -> usize {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 % n as u64) as usize
    }

    fn size(&mut self) -> usize {
        match self.below(20) {
            0..=11 => 1 + self.below(64),
            12..=15 => 64 + self.below(4_096),
            16..=18 => 4_096 + self.below(300_000),
            _ => 300_000 + self.below(3_000_000),
        }
    }
}

/// Every byte of `buffer` is `fill` (compared a block at a time: a byte
/// loop of a debug build would take seconds over these sizes).
fn check(buffer: &[u8], fill: u8) {
    let block = [fill; 4_096];
    for (i, part) in buffer.chunks(block.len()).enumerate() {
        assert!(
            part == &block[..part.len()],
            "a {}-byte buffer of {fill}s has another byte in its block {i}",
            buffer.len()
        );
    }
}

#[wasm_bindgen_test]
fn buffers_never_share_memory_however_they_grow_and_shrink() {
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    let mut live: Vec<(Vec<u8>, u8)> = Vec::new();
    for round in 0..6_000u32 {
        let fill = (round % 251) as u8;
        match rng.below(10) {
            0..=3 => live.push((vec![fill; rng.size()], fill)),
            4..=6 if !live.is_empty() => {
                let (buffer, was) = live.swap_remove(rng.below(live.len()));
                check(&buffer, was);
            }
            _ if !live.is_empty() => {
                let at = rng.below(live.len());
                let (buffer, was) = &mut live[at];
                check(buffer, *was);
                let size = rng.size();
                // Growing moves or extends the buffer; shrinking to fit
                // gives the tail back.
                buffer.resize(size, *was);
                if rng.below(2) == 0 {
                    buffer.shrink_to_fit();
                }
                buffer.fill(fill);
                *was = fill;
            }
            _ => {}
        }
        if live.len() > 200 {
            let (buffer, was) = live.swap_remove(0);
            check(&buffer, was);
        }
    }
    for (buffer, was) in &live {
        check(buffer, *was);
    }
}
