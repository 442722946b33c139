//! The history probe's looks: through the caller's `confirmBatch` (many
//! questions) or `confirm` (one), or the gateway's event queries (after
//! the caller's fresh headers). Each look is a task; its answer goes to
//! the probe, which decides.

use super::io::{Ask, Do, Done, Failure};
use super::requests::{self, Asked};
use super::{Child, ConfirmWith, Engine, Next, Step, TaskId, Wake};
use crate::machine::{ConfirmAnswer, Look, LookAnswer};
use crate::protocol::{ConfirmQuery, JsonValue, QueryShape, NEVER_USED_REQUEST_ID};
use crate::text::text;

/// A look in progress.
#[derive(Debug)]
pub(super) enum LookTask {
    /// The caller's headers are asked for first.
    Headers(Look),
    /// The gateway is asked first whether it reads the `filter` shape on
    /// this route (once per route: a requestId never used must count 0).
    Checking {
        look: Look,
        extra: Vec<(String, String)>,
        path: String,
    },
    /// The gateway is asked.
    Asking {
        look: Look,
        path: String,
        asked: Asked,
    },
    /// The caller's confirmer is asked.
    Callback(Look),
}

impl Step for LookTask {
    fn step(self: Box<Self>, engine: &mut Engine, me: TaskId, wake: Wake) -> Next {
        engine.step_look(me, *self, wake)
    }
}

impl Engine {
    /// Starts a look the probe asked for.
    pub(super) fn look(&mut self, look: Look) {
        let (task, ask) = match self.config.confirm {
            ConfirmWith::Batch => {
                let user = self.config.user.as_deref();
                let all = look
                    .questions
                    .iter()
                    .map(|q| question(q, true, user))
                    .collect();
                let ask = Ask::ConfirmBatch(JsonValue::Array(all));
                (LookTask::Callback(look), Some(Do::Ask(ask)))
            }
            ConfirmWith::One => {
                let user = self.config.user.as_deref();
                let ask = Ask::Confirm(question(&look.questions[0], look.need_facts, user));
                (LookTask::Callback(look), Some(Do::Ask(ask)))
            }
            ConfirmWith::Gateway if self.config.headers => {
                let ids: Vec<&str> = look
                    .questions
                    .iter()
                    .map(|q| q.request_id.as_str())
                    .collect();
                let ask = self.headers_for("history", &ids);
                (LookTask::Headers(look), Some(ask))
            }
            // No headers to ask for: straight to the gateway.
            ConfirmWith::Gateway => (LookTask::Headers(look), None),
        };
        let id = self.new_id();
        self.add(id, None, None);
        match ask {
            Some(ask) => {
                self.op(id, ask);
                self.place(id, None, Next::Keep(Box::new(task)));
            }
            None => {
                let next = self.step_look(id, task, Wake::Op(Done::Headers(Ok(Vec::new()))));
                self.place(id, None, next);
            }
        }
    }

    fn step_look(&mut self, me: TaskId, task: LookTask, wake: Wake) -> Next {
        let Wake::Op(done) = wake else {
            self.unasked(&wake, "a look");
            return Next::Keep(Box::new(task));
        };
        let (look, answer) = match (task, done) {
            (LookTask::Headers(look), Done::Headers(extra)) => {
                let extra = extra.unwrap_or_default();
                match self.check_shape(me, look, extra) {
                    Ok(task) => return Next::Keep(Box::new(task)),
                    Err(unanswered) => unanswered,
                }
            }
            (LookTask::Checking { look, extra, path }, Done::Answered { status, body, .. }) => {
                match requests::counted(&path, status, body) {
                    ConfirmAnswer::NotAppended => {
                        self.shape_checked.push(path);
                        match self.ask(me, look, &extra) {
                            Ok(task) => return Next::Keep(Box::new(task)),
                            Err(unanswered) => unanswered,
                        }
                    }
                    ConfirmAnswer::Unavailable(why) => (look, LookAnswer::Unavailable(why)),
                    ConfirmAnswer::Appended { .. } => (look, LookAnswer::Unavailable(text!(
                        path,
                        " counted streams for a requestId never used: this gateway does not read the query shape of Wow 8.11 and later, so history cannot be asked in it (connect's `wow` names a newer Wow than the gateway's)"
                    ))),
                }
            }
            (LookTask::Asking { look, path, asked }, Done::Answered { status, body, .. }) => {
                let answer = requests::look_answer(&look, &asked, &path, status, body);
                (look, answer)
            }
            (
                LookTask::Asking { look, path, .. } | LookTask::Checking { look, path, .. },
                Done::Failed(f),
            ) => {
                let why = match f {
                    Failure::Aborted => {
                        text!(path, " did not answer within ", self.within_ms(), " ms")
                    }
                    Failure::Lost(why) | Failure::NeverSent(why) => text!(path, ": ", why),
                };
                (look, LookAnswer::Unavailable(why))
            }
            (LookTask::Callback(look), Done::Confirmed(answer)) => {
                let answer = requests::one(&look.questions[0], answer);
                (look, answer)
            }
            (LookTask::Callback(look), Done::Looked(answer)) => (look, answer),
            (task, done) => {
                self.unasked(&Wake::Op(done), "a look");
                return Next::Keep(Box::new(task));
            }
        };
        self.probe.handle_look(self.now, look.id, answer);
        Next::Done(Child::Nothing)
    }

    /// Asks the gateway `look`, after checking once per route that it reads
    /// the `filter` shape when that is the shape stated.
    fn check_shape(
        &mut self,
        me: TaskId,
        look: Look,
        extra: Vec<(String, String)>,
    ) -> Result<LookTask, (Look, LookAnswer)> {
        let shape = self.config.query_shape;
        let query = &look.questions[0];
        let checked = |p: String| self.shape_checked.contains(&p);
        if shape == QueryShape::Filter && !query.count_path().is_ok_and(checked) {
            // The look's own count, for a requestId never used.
            let check = Look {
                questions: vec![ConfirmQuery {
                    request_id: NEVER_USED_REQUEST_ID.into(),
                    ..query.clone()
                }],
                need_facts: false,
                ..look
            };
            return match self.ask(me, check, &extra) {
                Ok(LookTask::Asking { path, .. }) => Ok(LookTask::Checking { look, extra, path }),
                Ok(_) => unreachable!("asked"),
                Err((_, why)) => Err((look, why)),
            };
        }
        self.ask(me, look, &extra)
    }

    /// Asks the gateway `look` in the stated shape.
    fn ask(
        &mut self,
        me: TaskId,
        look: Look,
        extra: &[(String, String)],
    ) -> Result<LookTask, (Look, LookAnswer)> {
        let (within, shape) = (self.within_ms(), self.config.query_shape);
        match requests::look(
            &self.config.base_url,
            &look,
            extra,
            within,
            self.float,
            shape,
        ) {
            Ok((request, path, asked)) => {
                self.op(me, Do::Fetch(request));
                Ok(LookTask::Asking { look, path, asked })
            }
            Err(why) => Err((look, LookAnswer::Unavailable(why))),
        }
    }

    /// How long a query to history may take: the attempts' own timeout.
    pub(super) fn within_ms(&self) -> u32 {
        u32::try_from(self.config.machine.caller_timeout_ms).unwrap_or(u32::MAX)
    }
}

/// A `ConfirmQuestion` for the caller's confirmer, with the user the
/// intent was made under (a confirmer asks its history as that user).
fn question(query: &ConfirmQuery, need_facts: bool, user: Option<&str>) -> JsonValue {
    let text = |s: &String| JsonValue::String(s.clone());
    let mut question = vec![
        ("aggregateId".to_owned(), text(&query.aggregate_id)),
        ("requestId".to_owned(), text(&query.request_id)),
        ("resource".to_owned(), text(&query.route.resource)),
    ];
    if let Some(tenant) = &query.route.tenant_id {
        question.push(("tenantId".to_owned(), text(tenant)));
    }
    if let Some(alias) = &query.route.context_alias {
        question.push(("contextAlias".to_owned(), text(alias)));
    }
    question.push(("needFacts".to_owned(), JsonValue::Bool(need_facts)));
    question.push((
        "user".to_owned(),
        user.map_or(JsonValue::Null, |u| JsonValue::String(u.to_owned())),
    ));
    JsonValue::Object(question)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::AggregateRoute;

    #[test]
    fn a_confirmer_is_asked_what_its_question_type_declares() {
        let query = ConfirmQuery {
            route: AggregateRoute {
                prefix: None,
                context_alias: Some("bank".into()),
                tenant_id: Some("t1".into()),
                owner_id: Some("o1".into()),
                resource: "account".into(),
            },
            aggregate_id: "a1".into(),
            request_id: "r1".into(),
        };
        let asked = crate::protocol::JsonOut::of(
            &question(&query, true, Some("alice")),
            crate::protocol::float_text,
        );
        assert_eq!(
            asked,
            r#"{"aggregateId":"a1","requestId":"r1","resource":"account","tenantId":"t1","contextAlias":"bank","needFacts":true,"user":"alice"}"#
        );
        let bare = ConfirmQuery {
            route: AggregateRoute {
                context_alias: None,
                tenant_id: None,
                ..query.route.clone()
            },
            ..query.clone()
        };
        assert_eq!(
            crate::protocol::JsonOut::of(
                &question(&bare, false, None),
                crate::protocol::float_text
            ),
            r#"{"aggregateId":"a1","requestId":"r1","resource":"account","needFacts":false,"user":null}"#
        );
    }
}
