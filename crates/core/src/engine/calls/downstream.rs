//! `awaitDownstream(intent, options)`: a stage past PROCESSED waited for,
//! without sending anything, for an intent confirmed appended.

use super::outcomes::{invalid, journal_failure, no_intent, unseen_if_theirs};
use crate::engine::io::{Ask, CallId, Do, Done, Reply};
use crate::engine::{Child, Engine, TaskId, Wake};
use crate::journal::IntentRecord;
use crate::machine::{Outcome, Status};
use crate::protocol::{CommandStage, JsonValue};
use crate::text::text;

#[derive(Debug)]
pub(super) struct Downstream {
    stage: Option<CommandStage>,
    timeout_ms: u64,
    check: bool,
    record: Option<Box<IntentRecord>>,
    outcome: Option<Box<Outcome>>,
    until: i64,
    pause: i64,
    reached: bool,
}

impl Engine {
    /// Polls until the stage is reached or the wait is over: the snapshot
    /// until its version reaches the appended one (SNAPSHOT), or else the
    /// application's check; a failed read or check is "not yet", and the
    /// caller's headers go with each snapshot read.
    pub(super) fn step_downstream(
        &mut self,
        me: TaskId,
        call: CallId,
        d: &mut Downstream,
        wake: Wake,
    ) -> Option<Child> {
        match wake {
            Wake::Child(Child::Record(found)) => {
                let record = match unseen_if_theirs(found) {
                    Ok(Some(r)) => r,
                    Ok(None) => {
                        return self.downstream_settle(call, Reply::Failed(Box::new(no_intent(""))))
                    }
                    Err(e) => {
                        return self
                            .downstream_settle(call, Reply::Failed(Box::new(journal_failure(e))))
                    }
                };
                let mut outcome = Outcome::from_record(&record);
                // Kept from history's answer, or from the last answer at PROCESSED or later.
                outcome.appended_version = outcome.appended_version.or_else(|| {
                    record
                        .last_result
                        .as_ref()
                        .filter(|r| r.is_succeeded() && r.stage >= CommandStage::Processed)
                        .and_then(|r| r.aggregate_version)
                });
                if outcome.status != Status::Succeeded {
                    let why = text!(
                        "intent `",
                        outcome.intent_id,
                        "` is ",
                        outcome.status.as_str(),
                        ", not confirmed appended: awaitDownstream waits only for what was appended"
                    );
                    return self.downstream_settle(call, Reply::Failed(Box::new(invalid(&why))));
                }
                let stage = d.stage.unwrap_or(record.command.wait.stage);
                d.stage = Some(stage);
                if stage > CommandStage::Snapshot && !d.check {
                    let why = text!(
                        stage.as_str(),
                        " needs a `check` function (or the `checkDownstream` connect option)"
                    );
                    return self.downstream_settle(call, Reply::Mistake(why));
                }
                // Appended is PROCESSED.
                d.reached = stage <= CommandStage::Processed;
                d.until = self.now.saturating_add(d.timeout_ms as i64);
                d.record = Some(Box::new(record));
                d.outcome = Some(Box::new(outcome));
                self.downstream_look(me, call, d)
            }
            Wake::Op(done) => {
                d.reached = match done {
                    Done::Checked(reached) => reached,
                    Done::Answered {
                        status,
                        body: Ok(body),
                        ..
                    } if (200..300).contains(&status) => {
                        let version = d.outcome.as_ref().and_then(|o| o.appended_version);
                        let got = body.get("version").and_then(JsonValue::as_i64);
                        matches!((got, version), (Some(got), Some(want)) if got >= want)
                    }
                    Done::Headers(Ok(extra)) => return self.downstream_read(me, d, &extra),
                    // Refused, failed, lost or unreadable: not reached yet, looked at again.
                    Done::Answered { .. } | Done::Failed(_) | Done::Headers(Err(_)) => false,
                    other => {
                        self.unasked(&Wake::Op(other), "downstream");
                        return None;
                    }
                };
                self.downstream_pause(me, call, d)
            }
            Wake::Timer => self.downstream_look(me, call, d),
            wake => {
                self.unasked(&wake, "downstream");
                None
            }
        }
    }

    /// One look at the stage (unless reached already).
    fn downstream_look(&mut self, me: TaskId, call: CallId, d: &mut Downstream) -> Option<Child> {
        if d.reached {
            return self.downstream_over(call, d);
        }
        let stage = d.stage.unwrap_or(CommandStage::Snapshot);
        if stage == CommandStage::Snapshot {
            if d.outcome
                .as_ref()
                .and_then(|o| o.appended_version)
                .is_none()
            {
                return self.downstream_pause(me, call, d);
            }
            if self.config.headers {
                let id = d
                    .outcome
                    .as_ref()
                    .map(|o| o.intent_id.clone())
                    .unwrap_or_default();
                let ask = self.headers_for("snapshot", &[id.as_str()]);
                self.op(me, ask);
                return None;
            }
            return self.downstream_read(me, d, &[]);
        }
        let question = self.downstream_question(d, stage);
        self.op(me, Do::Ask(Ask::Downstream { call, question }));
        None
    }

    fn downstream_read(
        &mut self,
        me: TaskId,
        d: &mut Downstream,
        extra: &[(String, String)],
    ) -> Option<Child> {
        let within = (d.until - self.now).max(1);
        let request = d.record.as_deref().and_then(|r| {
            crate::engine::requests::snapshot(
                &self.config.base_url,
                r,
                extra,
                u32::try_from(within).unwrap_or(u32::MAX),
            )
        });
        match request {
            Some(request) => {
                self.op(me, Do::Fetch(request));
                None
            }
            None => {
                self.timer(me, self.now + d.pause.min(within));
                None
            }
        }
    }

    fn downstream_pause(&mut self, me: TaskId, call: CallId, d: &mut Downstream) -> Option<Child> {
        let left = d.until - self.now;
        if d.reached || left <= 0 {
            return self.downstream_over(call, d);
        }
        self.timer(me, self.now + d.pause.min(left));
        d.pause = (d.pause * 2).min(2_000);
        None
    }

    fn downstream_over(&mut self, call: CallId, d: &mut Downstream) -> Option<Child> {
        let stage = d.stage.unwrap_or(CommandStage::Snapshot);
        let mut outcome = d
            .outcome
            .take()
            .map(|o| *o)
            .unwrap_or_else(|| no_intent(""));
        if d.reached {
            outcome.downstream_pending = None;
        } else {
            outcome.downstream_pending = Some(stage);
            outcome.reason = Some(text!(
                stage.as_str(),
                " not reached in time; the command stays appended"
            ));
        }
        let reached = d.reached.then_some(stage);
        self.downstream_settle(call, Reply::Downstream(Box::new(outcome), reached))
    }

    fn downstream_settle(&mut self, call: CallId, reply: Reply) -> Option<Child> {
        self.settle(call, reply);
        Some(Child::Nothing)
    }

    /// `check`'s question: the stage, the intent's ids, its aggregate and
    /// the appended version.
    fn downstream_question(&self, d: &Downstream, stage: CommandStage) -> JsonValue {
        let text = |s: &str| JsonValue::String(s.to_owned());
        let mut q = vec![("stage".to_owned(), text(stage.as_str()))];
        if let (Some(o), Some(r)) = (&d.outcome, &d.record) {
            q.push(("intentId".into(), text(&o.intent_id)));
            q.push(("requestId".into(), text(&o.request_id)));
            let a = &r.aggregate;
            for (k, v) in [
                ("contextAlias", &a.context_alias),
                ("tenantId", &a.tenant_id),
                ("ownerId", &a.owner_id),
            ] {
                if let Some(v) = v {
                    q.push((k.into(), text(v)));
                }
            }
            q.push(("resource".into(), text(&a.resource)));
            q.push(("aggregateId".into(), text(&a.aggregate_id)));
            q.push((
                "version".into(),
                o.appended_version.map_or(JsonValue::Null, JsonValue::Int),
            ));
        }
        q.push((
            "user".into(),
            self.config.user.as_deref().map_or(JsonValue::Null, text),
        ));
        JsonValue::Object(q)
    }
}

impl Downstream {
    /// A wait for `stage` up to `timeout_ms`, about to find its intent.
    pub(super) fn new(stage: Option<CommandStage>, timeout_ms: u64, check: bool) -> Downstream {
        Downstream {
            stage,
            timeout_ms,
            check,
            record: None,
            outcome: None,
            until: 0,
            pause: 100,
            reached: false,
        }
    }
}
