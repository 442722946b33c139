// What the module's live instance holds from the browser (Web Locks,
// channels, listeners, its waiting calls), kept here, where no trust in the
// instance is needed: when it stops (src/web/instance.js) each is let go.
// Apart from the restart itself, so that a module that never restarts (the
// consumer's) loads only this.

/** The live instance's generation, and why it stopped (until its restart). */
export const life = { gen: 1, dead: undefined };
let held = new Set(); // what the live instance holds: each is let go with (why)
let heldBy = 1; // the generation `held` is of

/** The live instance's generation. */
export function generation() { return life.gen; }

/** Whether a wait started under generation `g` may be delivered. */
export const live = (g) => g === life.gen && !life.dead;

/** Keeps `letGo(why)` until the instance stops (it is then called, `why` what stopped it as text) or the returned function is. */
export function holding(letGo) {
  const of = held;
  of.add(letGo);
  return () => of.delete(letGo);
}

/** `letGo` kept as `holding` keeps it; the function returned lets go now instead (what `letGo` answers). */
export function owned(letGo) {
  const forget = holding(letGo);
  return () => { forget(); return letGo(); };
}

/** What a stopped instance held (once: later, nothing), the live one starting afresh. */
export function retired() {
  if (heldBy === life.gen) return undefined;
  const was = held;
  held = new Set();
  heldBy = life.gen;
  return was;
}
