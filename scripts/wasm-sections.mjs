// The section layout of a WebAssembly module: what the size report reads and
// what the build strips.

/** An unsigned LEB128 at `at`: [value, the offset after it]. */
export function leb(bytes, at) {
  let value = 0, shift = 0, byte;
  do { byte = bytes[at++]; value += (byte & 0x7f) * 2 ** shift; shift += 7; } while (byte & 0x80);
  return [value, at];
}

const SECTION = ["custom", "type", "import", "function", "table", "memory", "global", "export", "start", "element", "code", "data", "datacount"];

/** Every section: its id, name (`custom:<name>` for custom sections), where
 * its header begins (`from`), where its content begins (`start`) and its size. */
export function sections(bytes) {
  const out = [];
  let at = 8;
  while (at < bytes.length) {
    const from = at;
    const id = bytes[at++];
    let size;
    [size, at] = leb(bytes, at);
    let name = SECTION[id] ?? `#${id}`;
    if (id === 0) {
      const [len, p] = leb(bytes, at);
      name = `custom:${new TextDecoder().decode(bytes.subarray(p, p + len))}`;
    }
    out.push({ id, name, from, start: at, size });
    at += size;
  }
  return out;
}

/** The module without the custom sections named in `drop`. */
export function withoutCustom(bytes, drop) {
  const kept = sections(bytes).filter((s) => !(s.id === 0 && drop.includes(s.name.slice("custom:".length))));
  return Buffer.concat([bytes.subarray(0, 8), ...kept.map((s) => bytes.subarray(s.from, s.start + s.size))]);
}
