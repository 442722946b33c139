//! The send pipeline of one HTTP command (Wow's command gateway): the
//! requestId pre-check, validation, SENT, the message on the bus, and the
//! wait for the caller's stage in JSON or SSE.

use super::*;

impl App {
    pub(super) async fn command(self: Arc<Self>, target: Target, req: Request<Incoming>) -> Answer {
        let method = req.method().as_str().to_owned();
        let path = req.uri().path().to_owned();
        let rest: Vec<&str> = target.rest.iter().map(String::as_str).collect();
        let def = domain::COMMANDS.iter().find(|d| {
            d.aggregate == target.agg.name
                && d.method == method
                && match (d.id_in_path, d.action, rest.as_slice()) {
                    (true, "", [_]) => true,
                    (true, action, [_, a]) => *a == action,
                    (false, "", []) => true,
                    (false, action, [a]) => *a == action,
                    _ => false,
                }
        });
        let Some(def) = def else {
            return Ok(not_found(&path));
        };
        let sse = http::prefers_sse(header(&req, names::ACCEPT));
        let fail = |info: ErrorInfo, status: u16| -> Answer {
            if sse {
                let (tx, body) = http::channel();
                let _ = tx.send(Ok(http::sse_frame(
                    &self.next_id(),
                    info.error_code.as_str(),
                    &info,
                )));
                Ok(http::sse_response(body))
            } else {
                Ok(http::json(status, info.error_code.as_str(), &info))
            }
        };

        // Headers. Both stage headers are read whenever they are not blank, as
        // Wow's `AggregateRequest.kt` does (`getWaitStage`, `getWaitTailStage`,
        // `CommandStage.valueOf`): an unknown name is a 400 even when the tail
        // stage would not be used (the stage is not SAGA_HANDLED).
        let bad_stage = |v: &str| {
            error_info(
                ErrorCode::IllegalArgument,
                &format!(
                    "No enum constant me.ahoo.wow.command.wait.CommandStage.{}",
                    v.to_uppercase()
                ),
                vec![],
            )
        };
        let stage = match header(&req, names::WAIT_STAGE) {
            None => CommandStage::Processed,
            Some(v) => match CommandStage::from_header(v) {
                Some(s) => s,
                None => return fail(bad_stage(v), 400),
            },
        };
        let tail_stage = match header(&req, names::WAIT_TAIL_STAGE) {
            None => None,
            Some(v) => match CommandStage::from_header(v) {
                Some(s) => Some(s),
                None => return fail(bad_stage(v), 400),
            },
        };
        let timeout_raw =
            header(&req, names::WAIT_TIMEOUT).or_else(|| header(&req, names::LEGACY_WAIT_TIMEOUT));
        let timeout_ms = match timeout_raw.and_then(|t| t.parse::<i64>().ok()) {
            Some(t) if t <= 0 => {
                return fail(
                    error_info(
                        ErrorCode::IllegalArgument,
                        "Wait timeout must be greater than zero.",
                        vec![],
                    ),
                    400,
                )
            }
            Some(t) => t as u64,
            None => 30_000,
        };
        let context = header(&req, names::WAIT_CONTEXT)
            .unwrap_or(target.agg.context)
            .to_owned();
        let tail = match (stage, tail_stage) {
            (CommandStage::SagaHandled, Some(ts)) => Some((
                ts,
                header(&req, names::WAIT_TAIL_CONTEXT)
                    .unwrap_or(target.agg.context)
                    .to_owned(),
                header(&req, names::WAIT_TAIL_PROCESSOR).map(str::to_owned),
                header(&req, names::WAIT_TAIL_FUNCTION).map(str::to_owned),
            )),
            _ => None,
        };
        let plan = Plan {
            stage,
            context,
            processor: header(&req, names::WAIT_PROCESSOR).map(str::to_owned),
            function: header(&req, names::WAIT_FUNCTION).map(str::to_owned),
            tail,
        };
        let command_id = self.next_id();
        let request_id = header(&req, names::REQUEST_ID)
            .unwrap_or(&command_id)
            .to_owned();
        let expected_version =
            header(&req, names::AGGREGATE_VERSION).and_then(|v| v.parse::<i64>().ok());
        let tenant_id = target
            .agg
            .static_tenant
            .map(str::to_owned)
            .or(target.tenant.clone())
            .or(header(&req, names::TENANT_ID).map(str::to_owned))
            .unwrap_or_else(|| "(0)".to_owned());
        let owner_id = target
            .owner
            .clone()
            .or(header(&req, names::OWNER_ID).map(str::to_owned))
            .unwrap_or_default();
        let space_id = header(&req, names::SPACE_ID).unwrap_or("").to_owned();
        let mut msg_header = BTreeMap::new();
        for (name, value) in req.headers() {
            if let (Some(key), Ok(v)) = (
                name.as_str().strip_prefix("command-header-"),
                value.to_str(),
            ) {
                if self.settings.wow != crate::query::Wow::EightTen && is_reserved_key(key) {
                    let msg = format!("Command header key [{key}] is reserved by the framework.");
                    return fail(error_info(ErrorCode::IllegalArgument, &msg, vec![]), 400);
                }
                msg_header.insert(key.to_owned(), v.to_owned());
            }
        }
        if let Some(ua) = header(&req, "User-Agent") {
            msg_header.insert("user_agent".into(), ua.to_owned());
        }
        let header_id = header(&req, names::AGGREGATE_ID).map(str::to_owned);
        let path_id = if def.id_in_path {
            target.rest.first().cloned()
        } else {
            None
        };

        // Body.
        let bytes: Bytes = read_body(req).await;
        let has_path_vars = def.id_in_path || target.owner.is_some() || target.tenant.is_some();
        let body: Value = if bytes.iter().all(u8::is_ascii_whitespace) {
            if !has_path_vars {
                return fail(
                    error_info(
                        ErrorCode::IllegalArgument,
                        "Command can not be empty.",
                        vec![],
                    ),
                    400,
                );
            }
            json!({})
        } else {
            match serde_json::from_slice(&bytes) {
                Ok(v @ Value::Object(_)) => v,
                Ok(_) => {
                    return fail(
                        error_info(
                            ErrorCode::IllegalArgument,
                            "Command body must be an object.",
                            vec![BindingError {
                                name: "body".into(),
                                msg: "not an object".into(),
                            }],
                        ),
                        400,
                    )
                }
                Err(e) => {
                    return fail(
                        error_info(
                            ErrorCode::IllegalArgument,
                            "Failed to read HTTP message",
                            vec![BindingError {
                                name: "body".into(),
                                msg: e.to_string(),
                            }],
                        ),
                        400,
                    )
                }
            }
        };
        if def.void && stage != CommandStage::Sent {
            return fail(
                error_info(
                    ErrorCode::IllegalArgument,
                    &format!("The wait stage {stage} must support void command."),
                    vec![],
                ),
                400,
            );
        }
        // Aggregate id: body `id` > path > header > owner (owner = id) > generated (creates).
        let aggregate_id = body["id"]
            .as_str()
            .map(str::to_owned)
            .or(path_id)
            .or(header_id)
            .or_else(|| {
                (target.agg.owner == Owner::AggregateId)
                    .then(|| owner_id.clone())
                    .filter(|o| !o.is_empty())
            })
            .unwrap_or_else(|| self.next_id());
        let owner_id = if target.agg.owner == Owner::AggregateId {
            aggregate_id.clone()
        } else {
            owner_id
        };

        let fault = self.faults.pick(
            &Subject {
                method: &method,
                path: &path,
                aggregate_id: Some(&aggregate_id),
                request_id: Some(&request_id),
            },
            &[
                FaultKind::RejectBeforeSend,
                FaultKind::DropRequest,
                FaultKind::Unavailable,
                FaultKind::DropResponseAfterAppend,
                FaultKind::FailProcessedAfterAppend,
                FaultKind::StageGap,
                FaultKind::Delay,
                FaultKind::CutStreamAfter,
                FaultKind::DownstreamFail,
                FaultKind::DownstreamDelay,
                FaultKind::DuplicateDelivery,
                FaultKind::PrecheckFalsePositive,
                FaultKind::MisrouteAnswer,
                FaultKind::Redirect,
                FaultKind::LargeAnswer,
            ],
        );
        match fault.as_ref().map(|f| f.kind) {
            Some(FaultKind::DropRequest) => return Err(DropConnection),
            Some(FaultKind::Unavailable) => return Ok(http::unavailable()),
            Some(FaultKind::Redirect) => {
                let to = fault.as_ref().and_then(|f| f.location.clone());
                return Ok(http::redirect(to.as_deref().unwrap_or("/")));
            }
            _ => {}
        }
        let is_create = def.create || expected_version == Some(0);
        let active = fault.clone();
        let msg = Message {
            id: command_id.clone(),
            request_id: request_id.clone(),
            agg: target.agg,
            def,
            aggregate_id,
            tenant_id,
            owner_id,
            space_id,
            body,
            expected_version: if is_create { Some(0) } else { expected_version },
            header: msg_header,
            wait_id: command_id.clone(),
            wait_request_id: request_id,
            fault,
        };
        if active
            .as_ref()
            .is_some_and(|f| f.kind == FaultKind::MisrouteAnswer)
        {
            return Ok(self.misrouted_answer(&msg, sse));
        }
        let (tx, rx) = mpsc::unbounded_channel();
        self.waiters.lock().unwrap().insert(command_id.clone(), tx);
        let deadline = tokio::time::Instant::now() + Duration::from_millis(timeout_ms);

        // The gateway's checks, then SENT, then the bus.
        if let Some(rejected) = self.check(&msg) {
            self.notify(
                &msg.wait_id,
                Signal {
                    result: rejected,
                    commands: vec![],
                },
            );
        } else {
            self.notify(
                &msg.wait_id,
                Signal {
                    result: self.sent_signal(&msg),
                    commands: vec![],
                },
            );
            if !def.void {
                let app = self.clone();
                tokio::spawn(async move { app.process(msg, false).await });
            }
        }
        let wait = Wait::new(plan, command_id.clone());
        if sse {
            let (body_tx, body) = http::channel();
            let app = self.clone();
            tokio::spawn(async move {
                let _ = app
                    .wait_loop(wait, rx, deadline, active, Some(body_tx))
                    .await;
            });
            Ok(http::sse_response(body))
        } else {
            self.clone()
                .wait_loop(wait, rx, deadline, active, None)
                .await
        }
    }

    /// What a confused proxy or cache hands back: another request's success
    /// (its own requestId and aggregateId), for a command that is never
    /// processed.
    pub(super) fn misrouted_answer(&self, msg: &Message, sse: bool) -> Response<Body> {
        let other = format!("misrouted-{}", self.next_id());
        let mut theirs = msg.clone();
        theirs.request_id = other.clone();
        theirs.aggregate_id = other;
        let processed_fn = FunctionInfo::new(
            FunctionKind::Command,
            msg.agg.context,
            msg.agg.processor,
            "onCommand",
        );
        let processed = self.result(
            &theirs,
            self.next_id(),
            CommandStage::Processed,
            processed_fn,
            Some(1),
        );
        if !sse {
            return http::json(200, "Ok", &processed);
        }
        let sent = self.sent_signal(&theirs);
        let frames = [&sent, &processed]
            .map(|r| http::sse_frame(&r.id, r.stage.as_str(), r))
            .concat();
        http::sse_response(http::full(frames))
    }

    pub(super) fn sent_signal(&self, msg: &Message) -> CommandResult {
        self.result(
            msg,
            self.next_id(),
            CommandStage::Sent,
            gateway_fn(),
            msg.expected_version,
        )
    }

    /// The gateway's checks before the bus. In 8.10 the requestId pre-check
    /// (a filter with a TTL, hits confirmed against the store), then
    /// validation; since 9 (`CommandAdmission`) validation first, so an
    /// invalid command does not reserve its requestId. A gateway-only
    /// service lets every hit through (the processing node decides).
    pub(super) fn check(&self, msg: &Message) -> Option<CommandResult> {
        if self.settings.wow == crate::query::Wow::EightTen {
            return self.precheck(msg).or_else(|| self.validate(msg));
        }
        self.validate(msg).or_else(|| self.precheck(msg))
    }

    /// The requestId pre-check: a DuplicateRequestId at SENT for a hit the
    /// store confirms.
    fn precheck(&self, msg: &Message) -> Option<CommandResult> {
        if self.settings.gateway_only {
            return None;
        }
        let maybe_seen = {
            let mut filters = self.precheck.lock().unwrap();
            let entry = filters
                .entry(msg.agg.name)
                .or_insert_with(|| (Instant::now(), HashSet::new()));
            if entry.0.elapsed() > self.settings.precheck_ttl {
                *entry = (Instant::now(), HashSet::new());
            }
            !entry.1.insert(msg.request_id.clone())
        };
        let false_positive = msg
            .fault
            .as_ref()
            .is_some_and(|f| f.kind == FaultKind::PrecheckFalsePositive);
        if (maybe_seen || false_positive)
            && self
                .store
                .exists_request_id(msg.agg.name, &msg.aggregate_id, &msg.request_id)
        {
            let r = self.result(msg, self.next_id(), CommandStage::Sent, gateway_fn(), None);
            return Some(Self::failed(
                r,
                ErrorCode::DuplicateRequestId,
                &format!("Duplicate request ID[{}].", msg.request_id),
            ));
        }
        None
    }

    /// Validation: the body's constraints, then the command's own.
    fn validate(&self, msg: &Message) -> Option<CommandResult> {
        let mut errors: Vec<BindingError> = domain::validate(msg.def, &msg.body)
            .into_iter()
            .map(|(name, msg)| BindingError { name, msg })
            .collect();
        // Wow validates the body alone, so a body it once took it takes
        // again: an injected refusal stands for a body that fails, never
        // for another arrival of a requestId the store holds (its body
        // passed). Else a resent command would be refused as invalid where
        // Wow 9 (validation before the pre-check) answers its duplicate.
        if msg
            .fault
            .as_ref()
            .is_some_and(|f| f.kind == FaultKind::RejectBeforeSend)
            && !self
                .store
                .exists_request_id(msg.agg.name, &msg.aggregate_id, &msg.request_id)
        {
            errors.push(BindingError {
                name: "command".into(),
                msg: "rejected by an injected fault".into(),
            });
        }
        if !errors.is_empty() {
            let mut r = self.result(msg, self.next_id(), CommandStage::Sent, gateway_fn(), None);
            r.binding_errors = errors;
            return Some(Self::failed(
                r,
                ErrorCode::CommandValidation,
                "Command validation failed.",
            ));
        }
        if let Some(why) = domain::self_validate(msg.def, &msg.body) {
            let r = self.result(msg, self.next_id(), CommandStage::Sent, gateway_fn(), None);
            return Some(Self::failed(r, ErrorCode::IllegalArgument, &why));
        }
        None
    }
}

/// Whether a `Command-Header-<key>` sets a key Wow 9 reserves (webflux's
/// `ReservedCommandHeaderKeys`: the keys the framework's own header
/// writers set, the W3C trace context, CoSec's app and device ids, and
/// every wait and compensation key): Wow refuses the request (400
/// `IllegalArgument`) and copies nothing. Written out here, apart from the
/// client's list, so a test through both says whether they agree.
fn is_reserved_key(key: &str) -> bool {
    const KEYS: [&str; 12] = [
        "command_operator",
        "local_first",
        "trace_id",
        "upstream_id",
        "upstream_name",
        "user_agent",
        "remote_ip",
        "traceparent",
        "tracestate",
        "baggage",
        "app_id",
        "device_id",
    ];
    let key = key.to_ascii_lowercase();
    KEYS.contains(&key.as_str())
        || key.starts_with("command_wait_")
        || key.starts_with("compensate.")
}
