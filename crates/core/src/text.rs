//! Text built from pieces without `core::fmt`.
//!
//! Every `format!`, `write!` and `{}` of the wasm paths linked `core::fmt`'s
//! machinery into the module (argument tables, padding, the integer
//! `Display`s), and each message its own argument list: error text is the
//! only formatting the module does, so it is built here by appending
//! pieces. The `Display` impls of the core's errors use the same pieces, so
//! the text is the same natively and in the module.

/// A piece of text: appended as it is written, numbers in decimal.
pub trait Piece {
    /// Appends the piece to `out`.
    fn push_to(&self, out: &mut String);
}

impl Piece for str {
    fn push_to(&self, out: &mut String) {
        out.push_str(self);
    }
}

impl Piece for String {
    fn push_to(&self, out: &mut String) {
        out.push_str(self);
    }
}

impl Piece for char {
    fn push_to(&self, out: &mut String) {
        out.push(*self);
    }
}

impl<T: Piece + ?Sized> Piece for &T {
    fn push_to(&self, out: &mut String) {
        (**self).push_to(out);
    }
}

impl Piece for u64 {
    fn push_to(&self, out: &mut String) {
        push_u64(out, *self);
    }
}

impl Piece for i64 {
    fn push_to(&self, out: &mut String) {
        if *self < 0 {
            out.push('-');
        }
        push_u64(out, self.unsigned_abs());
    }
}

impl Piece for u32 {
    fn push_to(&self, out: &mut String) {
        push_u64(out, u64::from(*self));
    }
}

impl Piece for u16 {
    fn push_to(&self, out: &mut String) {
        push_u64(out, u64::from(*self));
    }
}

impl Piece for usize {
    fn push_to(&self, out: &mut String) {
        push_u64(out, *self as u64);
    }
}

/// Appends `n` in decimal.
pub(crate) fn push_u64(out: &mut String, mut n: u64) {
    let mut digits = [0u8; 20];
    let mut at = digits.len();
    loop {
        at -= 1;
        digits[at] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    for &d in &digits[at..] {
        out.push(char::from(d));
    }
}

/// Appends `n` in hexadecimal (`upper`: A–F, else a–f), `width` digits at
/// least (zeros first).
pub fn push_hex(out: &mut String, n: u64, width: usize, upper: bool) {
    let table: &[u8; 16] = if upper {
        b"0123456789ABCDEF"
    } else {
        b"0123456789abcdef"
    };
    let digits = (16 - n.leading_zeros() as usize / 4).max(1).max(width);
    for i in (0..digits).rev() {
        let nibble = if i < 16 { (n >> (i * 4)) & 0xf } else { 0 };
        out.push(char::from(table[nibble as usize]));
    }
}

/// A decimal of ASCII digits only (no sign, no space), as HTTP's
/// delta-seconds and SSE's `retry:` are written; `None` when it is not one
/// or does not fit. What `str::parse::<u64>` reads, without its code.
pub(crate) fn parse_decimal(s: &str) -> Option<u64> {
    if s.is_empty() {
        return None;
    }
    s.bytes().try_fold(0u64, |n, b| {
        let d = b.wrapping_sub(b'0');
        (d < 10).then_some(())?;
        n.checked_mul(10)?.checked_add(u64::from(d))
    })
}

/// `n` in decimal.
pub(crate) fn decimal(n: u64) -> String {
    let mut out = String::new();
    push_u64(&mut out, n);
    out
}

#[doc(hidden)]
#[macro_export]
macro_rules! __text {
    ($($piece:expr),+ $(,)?) => {{
        let mut out = ::std::string::String::new();
        $( $crate::text::Piece::push_to(&$piece, &mut out); )+
        out
    }};
}
/// `text!(a, b, …)`: a `String` of the pieces, in order (each a [`Piece`]).
pub use crate::__text as text;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_decimal_is_read_as_str_parse_reads_one_without_a_sign() {
        for s in [
            "0",
            "7",
            "120",
            "007",
            "18446744073709551615",
            "18446744073709551616",
            "",
            "+5",
            "-1",
            " 5",
            "5 ",
            "1e3",
            "12a",
            "٣",
        ] {
            let theirs = s.parse::<u64>().ok().filter(|_| !s.starts_with('+'));
            assert_eq!(parse_decimal(s), theirs, "{s:?}");
        }
    }

    #[test]
    fn numbers_read_as_display_writes_them() {
        for n in [
            0u64,
            1,
            9,
            10,
            99,
            100,
            12_345,
            u64::from(u32::MAX),
            u64::MAX,
        ] {
            assert_eq!(decimal(n), n.to_string());
        }
        for n in [0i64, -1, 42, i64::MIN, i64::MAX] {
            assert_eq!(text!(n), n.to_string());
        }
        for (n, w) in [
            (0u64, 1),
            (0, 2),
            (0xa, 2),
            (0xff, 2),
            (0x1234, 2),
            (u64::MAX, 16),
            (1, 16),
        ] {
            let mut lower = String::new();
            push_hex(&mut lower, n, w, false);
            assert_eq!(lower, format!("{n:0w$x}"));
            let mut upper = String::new();
            push_hex(&mut upper, n, w, true);
            assert_eq!(upper, format!("{n:0w$X}"));
        }
    }

    #[test]
    fn pieces_follow_one_another() {
        let name = String::from("cart");
        assert_eq!(
            text!("a `", name, "` of ", 3u32, ' ', &"x"),
            "a `cart` of 3 x"
        );
    }
}
