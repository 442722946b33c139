//! The wait of one HTTP command for its stage, and for a saga's chain
//! (PROTOCOL §3.3, §3.4): the signals it is fed, when it is complete, and
//! its answer in JSON or as an SSE stream.

use super::*;
use wow_command_client::core::protocol::JsonValue;

/// What the caller waits for.
#[derive(Clone)]
pub(super) struct Plan {
    pub(super) stage: CommandStage,
    pub(super) context: String,
    pub(super) processor: Option<String>,
    pub(super) function: Option<String>,
    pub(super) tail: Option<(CommandStage, String, Option<String>, Option<String>)>,
}

pub(super) fn function_matches(
    stage: CommandStage,
    context: &str,
    processor: &Option<String>,
    function: &Option<String>,
    f: &FunctionInfo,
) -> bool {
    !stage.should_wait_function()
        || (f.context_name == context
            && processor.as_deref().is_none_or(|p| p == f.processor_name)
            && function.as_deref().is_none_or(|n| n == f.name))
}

/// The wait state machine of one HTTP command (PROTOCOL §3.3, §3.4).
pub(super) struct Wait {
    pub(super) plan: Plan,
    pub(super) main_id: String,
    pub(super) processed_seen: bool,
    pub(super) candidate: Option<CommandResult>,
    pub(super) saga_main: Option<(CommandResult, Vec<String>)>,
    pub(super) tails: HashMap<String, CommandResult>,
    pub(super) tail_failed: Option<CommandResult>,
    pub(super) last_tail: Option<CommandResult>,
    pub(super) done: Option<CommandResult>,
}

impl Wait {
    pub(super) fn new(plan: Plan, main_id: String) -> Wait {
        Wait {
            plan,
            main_id,
            processed_seen: false,
            candidate: None,
            saga_main: None,
            tails: HashMap::new(),
            tail_failed: None,
            last_tail: None,
            done: None,
        }
    }

    /// Feeds a signal; returns whether it is emitted on the stream.
    pub(super) fn on(&mut self, sig: &Signal) -> bool {
        let r = &sig.result;
        let plan = &self.plan;
        if r.command_id == self.main_id {
            if !plan.stage.should_notify(r.stage) {
                return false;
            }
            if r.stage == plan.stage
                && !function_matches(
                    plan.stage,
                    &plan.context,
                    &plan.processor,
                    &plan.function,
                    &r.function,
                )
            {
                return false;
            }
            if r.stage == CommandStage::Processed && r.is_succeeded() {
                self.processed_seen = true;
            }
            if !r.is_succeeded() && plan.stage.is_previous(r.stage) {
                self.done = Some(r.clone());
                return true;
            }
            if r.stage == plan.stage {
                if plan.tail.is_some() {
                    self.saga_main = Some((r.clone(), sig.commands.clone()));
                }
                self.candidate = Some(r.clone());
                if !r.is_succeeded() {
                    self.done = Some(r.clone());
                    return true;
                }
            }
        } else if let Some((tail_stage, ctx, processor, function)) = &plan.tail {
            if !tail_stage.should_notify(r.stage) {
                return false;
            }
            if r.stage == *tail_stage
                && !function_matches(*tail_stage, ctx, processor, function, &r.function)
            {
                return false;
            }
            if !r.is_succeeded() || r.stage == *tail_stage {
                self.tails.insert(r.command_id.clone(), r.clone());
                self.last_tail = Some(r.clone());
                if !r.is_succeeded() && self.tail_failed.is_none() {
                    self.tail_failed = Some(r.clone());
                }
            }
        } else {
            return false;
        }
        self.check_complete();
        true
    }

    pub(super) fn check_complete(&mut self) {
        if self.done.is_some() {
            return;
        }
        if self.plan.tail.is_none() {
            if self.candidate.is_some()
                && (self.plan.stage <= CommandStage::Processed || self.processed_seen)
            {
                self.done = self.candidate.clone();
            }
            return;
        }
        let Some((main, commands)) = &self.saga_main else {
            return;
        };
        let tails_done = commands.iter().all(|c| self.tails.contains_key(c));
        if self.processed_seen && (tails_done || self.tail_failed.is_some()) {
            self.done = self
                .tail_failed
                .clone()
                .or_else(|| (!main.is_succeeded()).then(|| main.clone()))
                .or_else(|| self.candidate.clone())
                .or_else(|| self.last_tail.clone());
        }
    }
}

impl App {
    /// Collects signals until the wait completes or its deadline passes, and
    /// answers in JSON (returned) or SSE (written to `body`).
    pub(super) async fn wait_loop(
        self: Arc<Self>,
        mut wait: Wait,
        mut rx: mpsc::UnboundedReceiver<Signal>,
        deadline: tokio::time::Instant,
        fault: Option<Active>,
        body: Option<mpsc::UnboundedSender<Result<Bytes, std::io::Error>>>,
    ) -> Answer {
        let reset = || std::io::Error::new(std::io::ErrorKind::ConnectionReset, "injected");
        let kind = fault.as_ref().map(|f| f.kind);
        let mut emitted_count = 0u32;
        let outcome = loop {
            let signal = tokio::select! {
                s = rx.recv() => s,
                _ = tokio::time::sleep_until(deadline) => None,
            };
            let Some(signal) = signal else { break None };
            let r = &signal.result;
            let emitted = wait.on(&signal);
            let own_append = r.command_id == wait.main_id
                && r.stage == CommandStage::Processed
                && r.aggregate_version.is_some();
            if kind == Some(FaultKind::DropResponseAfterAppend)
                && own_append
                && r.error_code != ErrorCode::DuplicateRequestId
            {
                if let Some(tx) = &body {
                    let _ = tx.send(Err(reset()));
                }
                self.waiters.lock().unwrap().remove(&wait.main_id);
                return Err(DropConnection);
            }
            if emitted {
                if let Some(tx) = &body {
                    if kind == Some(FaultKind::StageGap) && emitted_count > 0 {
                        let gap = fault.as_ref().and_then(|f| f.delay_ms).unwrap_or(50);
                        tokio::time::sleep(Duration::from_millis(gap)).await;
                    }
                    emitted_count += 1;
                    let event = if wait.done.as_ref() == Some(r)
                        && !r.is_succeeded()
                        && r.stage == CommandStage::Sent
                    {
                        // A gateway failure ends the stream through errorResume: an error event.
                        r.error_code.as_str().to_owned()
                    } else {
                        r.stage.as_str().to_owned()
                    };
                    let _ = tx.send(Ok(http::sse_frame(&r.id, &event, r)));
                    if kind == Some(FaultKind::CutStreamAfter)
                        && fault
                            .as_ref()
                            .and_then(|f| f.stage)
                            .unwrap_or(CommandStage::Sent)
                            == r.stage
                        && r.command_id == wait.main_id
                    {
                        // Let the event reach the socket before the reset.
                        tokio::time::sleep(Duration::from_millis(50)).await;
                        let _ = tx.send(Err(reset()));
                        self.waiters.lock().unwrap().remove(&wait.main_id);
                        return Err(DropConnection);
                    }
                }
            }
            if let Some(done) = &wait.done {
                break Some(done.clone());
            }
        };
        self.waiters.lock().unwrap().remove(&wait.main_id);
        match (outcome, body) {
            (Some(mut r), None) => {
                let status = r.error_code.http_status();
                if kind == Some(FaultKind::CutStreamAfter) {
                    return Err(DropConnection);
                }
                if kind == Some(FaultKind::LargeAnswer) {
                    let bytes = fault.as_ref().and_then(|f| f.bytes).unwrap_or(1 << 20);
                    r.result = JsonValue::Object(vec![(
                        "padding".into(),
                        JsonValue::String("x".repeat(bytes)),
                    )]);
                }
                Ok(http::json(status, r.error_code.as_str(), &r))
            }
            (None, None) => Ok(http::json(
                408,
                "RequestTimeout",
                &error_info(
                    ErrorCode::RequestTimeout,
                    "Did not observe any item or terminal signal within the wait timeout.",
                    vec![],
                ),
            )),
            (Some(_), Some(_)) => Ok(http::sse_response(http::full(""))),
            (None, Some(tx)) => {
                let info = error_info(
                    ErrorCode::RequestTimeout,
                    "Did not observe any item or terminal signal within the wait timeout.",
                    vec![],
                );
                let _ = tx.send(Ok(http::sse_frame(
                    &self.next_id(),
                    "RequestTimeout",
                    &info,
                )));
                Ok(http::sse_response(http::full("")))
            }
        }
    }
}
