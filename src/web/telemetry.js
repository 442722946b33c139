// `connect({ onEvent })`: what the driver tells (src/web/driver.rs, `tell`)
// as a lifecycle event of one intent, with the fields diagnostics keep: its
// identity, the attempt's number, commandId, deadline and what ended its
// wait, the wait stage, the error code and the time. Built and delivered
// after the current task's work (never before a send it precedes); what the
// listener returns, throws or rejects changes nothing. Nothing secret goes
// in: no body, no headers but the traceparent.
export function telemetryEvent(sink, kind, record, detail) {
  const at = Date.now();
  queueMicrotask(() => {
    try {
      const r = JSON.parse(record);
      const last = r.attempts[r.attempts.length - 1] || {};
      const event = {
        version: 1, kind, at, intentId: r.intentId, intentKey: r.intentKey ?? null, requestId: r.requestId,
        aggregate: r.aggregate, state: r.state, waitStage: r.command.wait.stage, serverWaitMs: r.command.wait.timeoutMs,
        attempt: last.number ?? 0, commandId: last.commandId ?? null, sentAt: last.sentAt ?? null,
        callerTimeoutMs: last.callerDeadline - last.sentAt || null, endedAt: last.endedAt ?? null,
        waitEndedBy: last.waitEndedBy ?? null, answer: last.outcome ?? null,
        errorCode: r.lastResult?.errorCode ?? null, appended: r.appended ?? null, reason: r.reason ?? null,
      };
      const result = r.lastResult;
      if (kind === "stage") Object.assign(event, { stage: result.stage, succeeded: result.succeeded ?? result.errorCode === "Ok" });
      if (detail) event[kind === "attemptSent" ? "traceparent" : kind === "retryScheduled" ? "retryAt" : "answerOfHistory"] =
        kind === "retryScheduled" ? +detail : detail;
      Promise.resolve(sink(event)).catch(() => {});
    } catch { /* the listener's own failure */ }
  });
}

// The history probe's events for `onHistory` (src/web/history.rs):
// `historyDown` after each failed look, `historyBack` once one is answered;
// delivered as the intents' are.
export function telemetryNote(sink, event) {
  queueMicrotask(() => {
    try { Promise.resolve(sink(JSON.parse(event))).catch(() => {}); } catch { /* the listener's own failure */ }
  });
}
