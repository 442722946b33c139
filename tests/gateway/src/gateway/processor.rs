//! The aggregate processor: load, check the expected version, handle the
//! command, append its stream in one atomic write (version and requestId
//! unique in the store), and the server's own retry on a version conflict.

use super::*;

impl App {
    /// The aggregate processor: load, check version, handle, append (one
    /// INSERT); the server's internal retry on `EventVersionConflict`.
    /// Boxed so processing can be spawned from inside processing (the saga,
    /// a second delivery).
    pub(super) fn process(
        self: Arc<Self>,
        msg: Message,
        second_delivery: bool,
    ) -> std::pin::Pin<Box<dyn std::future::Future<Output = ()> + Send>> {
        Box::pin(self.process_inner(msg, second_delivery))
    }

    pub(super) async fn process_inner(self: Arc<Self>, msg: Message, second_delivery: bool) {
        let _processing = Processing::start(&self.processing);
        let fault = if second_delivery {
            None
        } else {
            msg.fault.clone()
        };
        if let Some(Active {
            kind: FaultKind::Delay,
            delay_ms,
            ..
        }) = &fault
        {
            tokio::time::sleep(Duration::from_millis(delay_ms.unwrap_or(2_000))).await;
        }
        let processed_fn = FunctionInfo::new(
            FunctionKind::Command,
            msg.agg.context,
            msg.agg.processor,
            "onCommand",
        );
        let mut attempt = 0u32;
        let outcome = loop {
            // As Wow's RetryableAggregateProcessor does: a create command gets
            // a fresh aggregate at version 0, never the stored one, so a
            // create on a taken id passes the version check and fails at the
            // append of version 1 (DuplicateAggregateId, AbstractEventStore).
            let (state, version) = if msg.def.create {
                (Value::Null, 0)
            } else {
                self.latest(msg.agg, &msg.aggregate_id)
            };
            let base = self.result(
                &msg,
                msg.id.clone(),
                CommandStage::Processed,
                processed_fn.clone(),
                Some(version),
            );
            if let Some(expected) = msg.expected_version {
                if expected != version {
                    break Err(Self::failed(
                        base,
                        ErrorCode::CommandExpectVersionConflict,
                        &format!("Expected version {expected}, but current version is {version}."),
                    ));
                }
            }
            if version == 0
                && !msg.def.create
                && !msg.def.allow_create
                && msg.expected_version != Some(0)
            {
                break Err(Self::failed(
                    base,
                    ErrorCode::NotFound,
                    &format!("Aggregate[{}] is not initialized.", msg.aggregate_id),
                ));
            }
            let (events, result, error_event) =
                match domain::handle(msg.def, &state, &msg.aggregate_id, &msg.body) {
                    Decision::Reject(code, why) => break Err(Self::failed(base, code, &why)),
                    Decision::Events {
                        events,
                        result,
                        error_event,
                    } => (events, result, error_event),
                };
            let mut header = msg.header.clone();
            header.insert("upstream_id".into(), msg.id.clone());
            header.insert("upstream_name".into(), msg.def.name.into());
            header.insert("command_wait_id".into(), msg.wait_id.clone());
            let stream = DomainEventStream {
                id: self.next_id(),
                context_name: msg.agg.context.into(),
                aggregate_name: msg.agg.name.into(),
                header,
                aggregate_id: msg.aggregate_id.clone(),
                tenant_id: msg.tenant_id.clone(),
                owner_id: msg.owner_id.clone(),
                space_id: msg.space_id.clone(),
                command_id: msg.id.clone(),
                request_id: msg.request_id.clone(),
                version: version + 1,
                body: events
                    .into_iter()
                    .map(|(name, body)| DomainEvent {
                        id: self.next_id(),
                        body_type: domain::body_type(msg.agg, &name),
                        name,
                        revision: "0.0.1".into(),
                        body: serde_json::from_value(body).unwrap_or_default(),
                    })
                    .collect(),
                create_time: now_ms(),
                size: None,
            };
            let mut appended = self.result(
                &msg,
                msg.id.clone(),
                CommandStage::Processed,
                processed_fn.clone(),
                Some(version + 1),
            );
            match self.store.append(&stream) {
                Ok(()) => {
                    appended.result =
                        serde_json::from_value(Value::Object(result)).unwrap_or_default();
                    if let Some((code, why)) = error_event {
                        appended = Self::failed(appended, ErrorCode::parse(&code), &why);
                    }
                    break Ok((appended, stream));
                }
                Err(AppendError::DuplicateRequestId) => {
                    break Err(Self::failed(
                        appended,
                        ErrorCode::DuplicateRequestId,
                        &format!("Duplicate request ID[{}].", msg.request_id),
                    ))
                }
                Err(AppendError::VersionConflict) if version == 0 => {
                    break Err(Self::failed(
                        appended,
                        ErrorCode::DuplicateAggregateId,
                        &format!("Duplicate aggregate ID[{}].", msg.aggregate_id),
                    ))
                }
                Err(AppendError::VersionConflict) if attempt < 3 => {
                    tokio::time::sleep(self.settings.retry_backoff * 2u32.pow(attempt)).await;
                    attempt += 1;
                }
                Err(AppendError::VersionConflict) => {
                    break Err(Self::failed(
                        appended,
                        ErrorCode::EventVersionConflict,
                        "Event version conflict.",
                    ))
                }
                Err(AppendError::Storage(why)) => {
                    break Err(Self::failed(appended, ErrorCode::InternalServerError, &why))
                }
            }
        };
        if second_delivery {
            if let Err(r) = &outcome {
                self.faults.log(Fired {
                    fault: FaultKind::DuplicateDelivery,
                    method: "BUS".into(),
                    path: format!("second delivery rejected: {}", r.error_code),
                    aggregate_id: Some(msg.aggregate_id.clone()),
                    request_id: Some(msg.request_id.clone()),
                });
            }
            return;
        }
        match outcome {
            Err(r) => self.notify(
                &msg.wait_id,
                Signal {
                    result: r,
                    commands: vec![],
                },
            ),
            Ok((mut r, stream)) => {
                if fault
                    .as_ref()
                    .is_some_and(|f| f.kind == FaultKind::DuplicateDelivery)
                {
                    self.clone().process(msg.clone(), true).await;
                }
                if fault
                    .as_ref()
                    .is_some_and(|f| f.kind == FaultKind::FailProcessedAfterAppend)
                {
                    r = Self::failed(
                        r,
                        ErrorCode::InternalServerError,
                        "Processing failed after the append (injected).",
                    );
                }
                self.notify(
                    &msg.wait_id,
                    Signal {
                        result: r,
                        commands: vec![],
                    },
                );
                let app = self.clone();
                tokio::spawn(async move { app.downstream(msg, stream, fault).await });
            }
        }
    }
}
