// The idempotent consumer's typed error, kept in plain JS so
// `instanceof EffectError` works.

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
