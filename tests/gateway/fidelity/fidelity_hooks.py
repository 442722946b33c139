"""The fidelity run's hook (loaded through SCHEMATHESIS_HOOKS by run.mjs).

A Command-Wait-Timeout the fuzzer draws above 30 s (Wow's own default wait,
DEFAULT_WAIT_TIMEOUT in wow-core/.../command/wait/WaitTimeout.kt) is sent as
30 s. Wow, like the gateway, waits that long for a stage nothing produces
(PROTOCOL.md: "If nothing ever produces the target stage (for example no
projector or saga matches), the wait ends only by timeout"), so a drawn
5,353,536 ms on a PROJECTED wait holds one case for 89 minutes, far past the
run's 35 s request timeout: it asks what no client asks and learns nothing
about fidelity. Under 30 s such a wait ends as Wow ends it (408
RequestTimeout, or an error event), which the run does check.
"""
import schemathesis

LIMIT_MS = 30_000


@schemathesis.hook
def before_call(ctx, case, **kwargs):
    headers = case.headers or {}
    for name in list(headers):
        if name.lower() not in ("command-wait-timeout", "command-wait-timout"):
            continue
        try:
            drawn = int(str(headers[name]).strip())
        except ValueError:
            continue  # not a number: Wow ignores it and waits its default
        if drawn > LIMIT_MS:
            headers[name] = str(LIMIT_MS)
    _project(case)


# One list query in ten is sent with the projection the SDK's batched
# confirmation sends (aggregateId, requestId, version, commandId), over
# every stream, five at most: the fuzzer draws a projection for most list
# queries, but with conditions that match no stream (an empty answer shows
# nothing) or a limit the query guard refuses.
# So even the short run in `npm test` covers how a projection is answered:
# Wow's store keeps `id` and the fields asked for, nothing else
# (departures.json says how that departs from Wow's own document).
SDK_PROJECTION = {"include": ["aggregateId", "requestId", "version", "commandId"]}
_queries = 0


def _project(case):
    global _queries
    path = case.operation.path
    if case.operation.method.upper() != "POST" or not path.endswith("/event/list"):
        return
    meta = getattr(case, "_meta", None)
    # A negative case stays negative: it checks what a body against the schema is answered.
    if not isinstance(case.body, dict) or (meta is not None and meta.generation.mode.is_negative):
        return
    _queries += 1
    if _queries % 10 == 0:
        case.body["projection"] = dict(SDK_PROJECTION)
        case.body["condition"] = {"operator": "ALL"}
        case.body["limit"] = 5
