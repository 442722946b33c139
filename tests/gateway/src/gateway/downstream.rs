//! The stages after the append: SNAPSHOT, PROJECTED, EVENT_HANDLED and the
//! saga (SAGA_HANDLED once it has sent its commands), each a little after
//! the one before.

use super::*;

impl App {
    /// SNAPSHOT, PROJECTED, EVENT_HANDLED, and the saga (SAGA_HANDLED after
    /// it has sent its commands), each a little after the append.
    pub(super) async fn downstream(
        self: Arc<Self>,
        msg: Message,
        stream: DomainEventStream,
        fault: Option<Active>,
    ) {
        let _processing = Processing::start(&self.processing);
        let version = Some(stream.version);
        let fail_at = fault
            .as_ref()
            .filter(|f| f.kind == FaultKind::DownstreamFail)
            .map(|f| f.stage.unwrap_or(CommandStage::Snapshot));
        let late = fault
            .filter(|f| f.kind == FaultKind::DownstreamDelay)
            .map(|f| {
                let stage = f.stage.unwrap_or(CommandStage::Snapshot);
                (stage, Duration::from_millis(f.delay_ms.unwrap_or(2_000)))
            });
        let lag_key = (msg.agg.name, msg.aggregate_id.clone());
        if matches!(late, Some((CommandStage::Snapshot, _))) {
            self.lagging
                .lock()
                .unwrap()
                .entry(lag_key.clone())
                .or_insert(stream.version - 1);
        }
        let stages = [
            (
                CommandStage::Snapshot,
                FunctionInfo::new(
                    FunctionKind::StateEvent,
                    "wow",
                    "SnapshotDispatcher",
                    "save",
                ),
            ),
            (
                CommandStage::Projected,
                FunctionInfo::new(
                    FunctionKind::Event,
                    msg.agg.context,
                    &format!("{}Projector", msg.agg.processor),
                    "onEvent",
                ),
            ),
            (
                CommandStage::EventHandled,
                FunctionInfo::new(
                    FunctionKind::Event,
                    msg.agg.context,
                    &format!("{}EventHandler", msg.agg.processor),
                    "onEvent",
                ),
            ),
        ];
        for (stage, function) in stages {
            tokio::time::sleep(self.settings.stage_gap).await;
            if let Some((_, delay)) = late.filter(|(at, _)| *at == stage) {
                tokio::time::sleep(delay).await;
            }
            if stage == CommandStage::Snapshot {
                self.lagging.lock().unwrap().remove(&lag_key);
            }
            let mut r = self.result(&msg, self.next_id(), stage, function, version);
            if fail_at == Some(stage) {
                r = Self::failed(
                    r,
                    ErrorCode::IllegalState,
                    "Downstream processing failed (injected).",
                );
            }
            self.notify(
                &msg.wait_id,
                Signal {
                    result: r,
                    commands: vec![],
                },
            );
        }
        let Some(saga) = msg.agg.saga else { return };
        tokio::time::sleep(self.settings.stage_gap).await;
        let mut sent = Vec::new();
        for (index, event) in stream.body.iter().enumerate() {
            let body = serde_json::to_value(&event.body).unwrap_or(Value::Null);
            let Some((target, name, cmd_body)) =
                domain::transfer_saga(&msg.aggregate_id, &event.name, &body)
            else {
                continue;
            };
            let def = domain::COMMANDS
                .iter()
                .find(|d| d.aggregate == msg.agg.name && d.name == name)
                .expect("saga command");
            let child = Message {
                id: self.next_id(),
                request_id: format!("{}-{index}", event.id),
                agg: msg.agg,
                def,
                aggregate_id: target,
                tenant_id: msg.tenant_id.clone(),
                owner_id: String::new(),
                space_id: String::new(),
                body: cmd_body,
                expected_version: None,
                header: BTreeMap::new(),
                wait_id: msg.wait_id.clone(),
                wait_request_id: msg.wait_request_id.clone(),
                fault: None,
            };
            sent.push(child.id.clone());
            self.notify(
                &msg.wait_id,
                Signal {
                    result: self.sent_signal(&child),
                    commands: vec![],
                },
            );
            let app = self.clone();
            tokio::spawn(async move { app.process(child, false).await });
        }
        let function = FunctionInfo::new(FunctionKind::Event, msg.agg.context, saga, "onEvent");
        let mut r = self.result(
            &msg,
            self.next_id(),
            CommandStage::SagaHandled,
            function,
            version,
        );
        if fail_at == Some(CommandStage::SagaHandled) {
            r = Self::failed(r, ErrorCode::IllegalState, "Saga failed (injected).");
        }
        self.notify(
            &msg.wait_id,
            Signal {
                result: r,
                commands: sent,
            },
        );
    }
}
