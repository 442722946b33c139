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

/** `n` as an unsigned LEB128. */
export function uleb(n) {
  const out = [];
  do {
    let byte = n % 128;
    n = Math.floor(n / 128);
    if (n > 0) byte |= 0x80;
    out.push(byte);
  } while (n > 0);
  return Buffer.from(out);
}

/** How many functions the module imports: they are numbered first. */
export function importedFunctions(bytes) {
  const imports = sections(bytes).find((s) => s.name === "import");
  if (!imports) return 0;
  let functions = 0;
  let [count, at] = leb(bytes, imports.start);
  for (let i = 0; i < count; i++) {
    let len;
    [len, at] = leb(bytes, at); at += len;
    [len, at] = leb(bytes, at); at += len;
    const kind = bytes[at++];
    if (kind === 0) { functions++; [, at] = leb(bytes, at); }
    else if (kind === 1) { at++; const flags = bytes[at++]; [, at] = leb(bytes, at); if (flags & 1) [, at] = leb(bytes, at); }
    else if (kind === 2) { const flags = bytes[at++]; [, at] = leb(bytes, at); if (flags & 1) [, at] = leb(bytes, at); }
    else if (kind === 3) { at += 2; }
    else { at += 1; [, at] = leb(bytes, at); }
  }
  return functions;
}

/** The name section's function names by function index; `null` without one. */
export function functionNames(bytes) {
  const names = sections(bytes).find((s) => s.name === "custom:name");
  if (!names) return null;
  const byIndex = new Map();
  let [len, at] = leb(bytes, names.start);
  at += len; // the "name" string
  const end = names.start + names.size;
  while (at < end) {
    const sub = bytes[at++];
    let size;
    [size, at] = leb(bytes, at);
    if (sub === 1) {
      let [count, p] = leb(bytes, at);
      for (let i = 0; i < count; i++) {
        let index, n;
        [index, p] = leb(bytes, p);
        [n, p] = leb(bytes, p);
        byIndex.set(index, new TextDecoder().decode(bytes.subarray(p, p + n)));
        p += n;
      }
    }
    at += size;
  }
  return byIndex;
}
