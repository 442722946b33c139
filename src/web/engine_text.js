// Texts the engine writes for the client module (src/web/mod.rs), in a file
// of their own: only the client module imports them, so the consumer's
// download does not carry them.

// A fingerprint's text of a number that is not an integer (`float_text` in
// src/web/mod.rs): what Rust's `{:?}` writes, the text every stored
// fingerprint was computed over (`float_text` in
// crates/core/src/protocol/json_value.rs is its native twin, and the module's
// tests hold the two equal in each engine): the shortest round-trip digits,
// in exponent form outside 1e-4 <= |f| < 1e16 (`1.5e-7`, `-2.5e22`),
// otherwise always with a `.` (`0.1`, `1e15 + 0.5` as `1000000000000000.5`,
// `-0` as `-0.0`). The digits are the engine's (`toExponential()`), so the
// module carries no float printing; where two shortest candidates are
// equally near (`x.y5` exactly), the engine keeps the even one and Rust the
// one away from zero. Such a tie needs 16 digits or more (10^k <= ulp(f)),
// or a subnormal: only then are the exact digits asked for.
export function floatText(f) {
  if (!Number.isFinite(f)) return f !== f ? "NaN" : f > 0 ? "inf" : "-inf";
  const sign = f < 0 || 1 / f < 0 ? "-" : "";
  const a = Math.abs(f);
  if (a === 0) return `${sign}0.0`;
  const [mantissa, exponent] = a.toExponential().split("e");
  const e = +exponent;
  let d = mantissa.replace(".", "");
  if (d.length >= 16 || a < 2.2250738585072014e-308) {
    const exact = a.toExponential(Math.min(d.length + 20, 100)).split("e")[0].replace(".", "").replace(/0+$/, "");
    if (exact.length === d.length + 1 && exact.endsWith("5") && exact.startsWith(d)) d = d.slice(0, -1) + (+d.slice(-1) + 1);
  }
  if (a < 1e-4 || a >= 1e16) return `${sign}${d[0]}${d.length > 1 ? `.${d.slice(1)}` : ""}e${e}`;
  if (e < 0) return `${sign}0.${"0".repeat(-e - 1)}${d}`;
  return sign + (d.length <= e + 1 ? `${d.padEnd(e + 1, "0")}.0` : `${d.slice(0, e + 1)}.${d.slice(e + 1)}`);
}

// The numbers of a caller's body that the module left as text (`caller_body`
// in src/web/mod.rs), joined by commas, read by the engine at once.
export function numbers(texts) {
  return Float64Array.from(texts.split(","), Number);
}

// An epoch time in milliseconds for a message (`iso_time` in
// src/web/mod.rs): what `iso8601` in crates/core/src/machine/probe.rs writes for
// the years 0 to 9999; a time no Date holds is its number.
export function isoTime(ms) {
  const date = new Date(ms);
  return Number.isNaN(date.getTime()) ? String(ms) : date.toISOString();
}
