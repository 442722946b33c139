// What the module's live instance holds from the browser (Web Locks,
// channels, listeners, requests, its waiting calls), kept here, where no
// trust in the instance is needed: when it stops (src/web/instance.js) each
// is let go. Each client's share is kept apart too (`holdings`), so that a
// client freed lets go of its own at once. Apart from the restart itself,
// so that a module that never restarts (the consumer's) loads only this.

/**
 * The live instance's generation, why it stopped (until its restart), whether `free()` is being
 * called (not a finalizer), the intent it handles now and the one it handled as it stopped.
 */
export const life = { gen: 1, dead: undefined, freeing: false, handling: "", blamed: "" };
let held = new Set(); // what the live instance holds: each is let go with (why)
let heldBy = 1; // the generation `held` is of

/** What a freed client's waits are let go with (support.js tells it apart). */
export const FREED = "the client was freed";

/** The live instance's generation. */
export function generation() { return life.gen; }

/** Whether a client's free is its `free()` (its calls end), not its finalizer (they go on). */
export const freeing = () => life.freeing;

/** The intent whose work the module handles now (src/web/executor.rs), blamed should it stop meanwhile. */
export function handling(id) { life.handling = id; }

/** Whether a wait started under generation `g` may be delivered. */
export const live = (g) => g === life.gen && !life.dead;

/** Whether `e` is the engine's stack running out (a step it cut short is taken again). */
export const outOfStack = (e) => e && (e.name === "RangeError" || e.name === "InternalError");

/**
 * Keeps `letGo(why)` until the instance stops or `of` (a client's
 * `holdings`) is let go: it is then called, `why` what ended it as text.
 * Kept for one already let go, it is let go at once. Returns the function
 * that forgets it.
 */
export function holding(letGo, of) {
  if (of?.gone) { letGo(of.why); return () => {}; }
  const all = of ? of.all : held;
  all.add(letGo);
  return () => all.delete(letGo);
}

/** `letGo` kept as `holding` keeps it; the function returned lets go now instead (what `letGo` answers). */
export function owned(letGo, of) {
  const forget = holding(letGo, of);
  return () => { forget(); return letGo(); };
}

/** A client's holdings: let go with the instance, or alone by `letGoOf`. */
export function holdings() {
  const of = { all: new Set(), gone: false };
  of.forget = holding((why) => letGoOf(of, why));
  return of;
}

/**
 * Lets go of everything `of` holds (its calls end, its locks and requests
 * are let go, its channels close); what it is given later is let go as it
 * comes. Answers once its locks are free. A step cut short by the stack's
 * end is kept for the next call.
 */
export function letGoOf(of, why = FREED) {
  of.gone = true;
  of.why = why;
  const frees = [];
  for (const letGo of of.all) {
    try {
      frees.push(letGo(why));
    } catch (e) {
      if (outOfStack(e)) throw e;
    }
    of.all.delete(letGo);
  }
  of.forget();
  return Promise.allSettled(frees);
}

/** What a stopped instance held (once: later, nothing), the live one starting afresh. */
export function retired() {
  if (heldBy === life.gen) return undefined;
  const was = held;
  held = new Set();
  heldBy = life.gen;
  return was;
}
