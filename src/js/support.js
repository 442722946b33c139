// The JS-side pieces of the API: the typed error class and the result
// stream handle. Kept in plain JS so `instanceof CommandError` works and
// the stream is a real ReadableStream.

export class CommandError extends Error {
  constructor(outcome) {
    const error = outcome.error || {};
    const result = outcome.result || {};
    const code = error.errorCode || result.errorCode || "Unknown";
    super(`${code}: ${error.errorMsg || result.errorMsg || outcome.reason || outcome.status}`);
    this.name = "CommandError";
    this.code = code;
    this.outcome = outcome.status;
    this.appended = outcome.appended ?? null;
    this.stage = result.stage ?? null;
    this.commandId = result.commandId ?? outcome.appendedCommandId ?? null;
    this.requestId = outcome.requestId;
    this.intentId = outcome.intentId;
    this.aggregateId = result.aggregateId ?? null;
    this.aggregateName = result.aggregateName ?? null;
    this.contextName = result.contextName ?? null;
    this.tenantId = result.tenantId ?? null;
    this.aggregateVersion = result.aggregateVersion ?? outcome.appendedVersion ?? null;
    this.errorMsg = error.errorMsg ?? result.errorMsg ?? "";
    this.bindingErrors = error.bindingErrors ?? result.bindingErrors ?? [];
    this.result = result.result ?? {};
    this.commandResult = outcome.result ?? null;
    this.reason = outcome.reason ?? null;
    this.detail = outcome;
  }
}

export function makeCommandError(outcome) {
  return new CommandError(outcome);
}

// A handle that is both an async iterable and a ReadableStream of results,
// plus `outcome`, a promise of the final Outcome. Read it one way or the
// other: both take the same stream's reader.
export function makeResultStream() {
  let controller;
  const stream = new ReadableStream({ start(c) { controller = c; } });
  let settle;
  const outcome = new Promise((resolve) => { settle = resolve; });
  const handle = {
    stream,
    outcome,
    [Symbol.asyncIterator]() {
      const reader = stream.getReader();
      return {
        next: () => reader.read(),
        return: async () => { await reader.cancel(); return { done: true, value: undefined }; },
      };
    },
  };
  return {
    handle,
    push(value) { controller.enqueue(value); },
    finish(finalOutcome, error) {
      settle(finalOutcome);
      if (error) controller.error(error); else controller.close();
    },
  };
}

// A failed delivery of an idempotent consumer. `code` is stable:
// InvalidIdentity, InvalidOptions, StorageUnavailable, EffectFailed, EffectTimedOut,
// DoneNotRecorded, NeedsReconciliation, ReconcileFailed, Busy, Superseded, StorageCannotExclude.
export class EffectError extends Error {
  constructor(code, message, identity, record, cause, result) {
    super(`${code}: ${message}`, cause === undefined ? undefined : { cause });
    this.name = "EffectError";
    this.code = code;
    this.identity = identity ?? null;
    this.record = record ?? null;
    if (result !== undefined) this.result = result;
  }
}

export function makeEffectError(code, message, identity, record, cause, result) {
  return new EffectError(code, message, identity, record, cause, result);
}
