// A listener's event (`onEvent`, `onHistory`, `onEscalated`), written by
// the module as JSON text (src/core/engine/events.rs), delivered after the
// current task's work: never before a send it precedes; what the listener
// returns, throws or rejects changes nothing.
export function telemetryNote(sink, event) {
  queueMicrotask(() => {
    try { Promise.resolve(sink(JSON.parse(event))).catch(() => {}); } catch { /* the listener's own failure */ }
  });
}
