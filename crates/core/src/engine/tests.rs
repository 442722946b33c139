//! The engine driven natively by a simulated world: tabs (one engine
//! each) sharing one store, one set of locks and one channel, against a
//! gateway that appends each requestId once and can lose answers, refuse,
//! or stop answering history. Time is simulated; every effect is the
//! engine's own `Io`, performed here as a browser's executor would.

use std::collections::BTreeMap;

use super::calls::{Read, SendMode};
use super::io::*;
use super::*;
use crate::journal::record::decode_json_text;
use crate::journal::{
    AggregateIdentity, CommandSpec, IntentState, NewIntent, SeededRandom, WaitSpec,
};
use crate::machine::{Availability, MachineConfig, Status};
use crate::protocol::{CommandStage, ErrorCode, JsonValue, StreamElement};

const T0: i64 = 1_800_000_000_000;

/// What the gateway does to the next request of an aggregate.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) enum Fault {
    /// Appended, then the answer is lost.
    LostAfterAppend,
    /// 503 before anything is appended.
    Refused,
    /// The connection lost before the gateway: nothing appended, no answer.
    LostBeforeAppend,
}

/// Which query shape the simulated gateway reads, as a Wow would.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub(super) enum Reads {
    /// 9.x: `filter` or `condition`.
    #[default]
    Both,
    /// 8.10: `condition` only; a body without one (a filter) matches
    /// every stream, its operator defaulting to `ALL`.
    ConditionOnly,
    /// 10.0 as planned: `filter` only; a `condition` is a 400
    /// `QuerySchemaValidation`.
    FilterOnly,
}

#[derive(Default)]
pub(super) struct Gateway {
    /// aggregate id → requestIds in version order.
    pub history: BTreeMap<String, Vec<String>>,
    pub faults: Vec<(String, Fault)>,
    pub history_down: bool,
    pub arrivals: Vec<String>,
    /// Each command's requestId and the credentials it came with.
    pub credentials: Vec<(String, Option<String>)>,
    /// The query shape it reads.
    pub reads: Reads,
    /// Each history query's path's last segment and body.
    pub queries: Vec<(String, String)>,
    /// Snapshot reads still to fail (a lost connection each).
    pub snapshot_failures: u32,
}

impl Gateway {
    /// A snapshot read (`awaitDownstream`'s SNAPSHOT): the aggregate's
    /// version, once the failures asked for are spent.
    fn snapshot(&mut self, r: &Request) -> Done {
        if self.snapshot_failures > 0 {
            self.snapshot_failures -= 1;
            return Done::Failed(Failure::Lost("connection reset".into()));
        }
        let path = r.url.trim_end_matches("/snapshot");
        let id = path.rsplit('/').next().unwrap_or_default();
        let version = self.history.get(id).map_or(0, Vec::len);
        Done::Answered {
            status: 200,
            error_code: None,
            retry_after: None,
            body: Ok(serde_json::from_str(&format!("{{\"version\":{version}}}")).unwrap()),
        }
    }

    fn command(&mut self, r: &Request) -> Done {
        let header = |n: &str| {
            r.headers
                .iter()
                .find(|(k, _)| k.eq_ignore_ascii_case(n))
                .map(|(_, v)| v.clone())
        };
        let request_id = header("Command-Request-Id").unwrap_or_default();
        let aggregate = header("Command-Aggregate-Id").unwrap_or_default();
        self.arrivals.push(request_id.clone());
        self.credentials
            .push((request_id.clone(), header("Authorization")));
        let fault = self
            .faults
            .iter()
            .position(|(a, _)| *a == aggregate)
            .map(|i| self.faults.remove(i).1);
        if fault == Some(Fault::LostBeforeAppend) {
            return Done::Failed(Failure::Lost("connection reset".into()));
        }
        if fault == Some(Fault::Refused) {
            return Done::Answered {
                status: 503,
                error_code: None,
                retry_after: None,
                body: Err("empty body".into()),
            };
        }
        let streams = self.history.entry(aggregate.clone()).or_default();
        // A version the caller expected that is not the stream's: refused at
        // PROCESSED, nothing appended (what Wow answers).
        let expected = header("Command-Aggregate-Version").and_then(|v| v.parse::<usize>().ok());
        if expected.is_some_and(|v| v != streams.len()) && !streams.contains(&request_id) {
            let code = "CommandExpectVersionConflict";
            let body = serde_json::json!({
                "id": "sig", "waitCommandId": "cmd", "stage": "PROCESSED",
                "contextName": "c", "aggregateName": "account", "tenantId": "(0)", "aggregateId": aggregate,
                "aggregateVersion": null, "requestId": request_id, "commandId": "cmd",
                "function": {"functionKind": "COMMAND", "contextName": "c", "processorName": "A", "name": "onCommand"},
                "errorCode": code, "errorMsg": "expected another version", "result": {}, "signalTime": 0, "succeeded": false,
            });
            return Done::Answered {
                status: 409,
                error_code: Some(code.into()),
                retry_after: None,
                body: Ok(serde_json::from_value(body).unwrap()),
            };
        }
        let duplicate = streams.contains(&request_id);
        if !duplicate {
            streams.push(request_id.clone());
        }
        let version = streams.iter().position(|x| *x == request_id).unwrap() as i64 + 1;
        if fault == Some(Fault::LostAfterAppend) {
            return Done::Failed(Failure::Lost("connection reset".into()));
        }
        let code = if duplicate {
            "DuplicateRequestId"
        } else {
            "Ok"
        };
        let body = serde_json::json!({
            "id": "sig", "waitCommandId": "cmd", "stage": if duplicate { "SENT" } else { "PROCESSED" },
            "contextName": "c", "aggregateName": "account", "tenantId": "(0)", "aggregateId": aggregate,
            "aggregateVersion": version, "requestId": request_id, "commandId": "cmd",
            "function": {"functionKind": "COMMAND", "contextName": "c", "processorName": "A", "name": "onCommand"},
            "errorCode": code, "errorMsg": "", "result": {}, "signalTime": 0, "succeeded": !duplicate,
        });
        let body: JsonValue = serde_json::from_value(body).unwrap();
        Done::Answered {
            status: if duplicate { 400 } else { 200 },
            error_code: Some(code.into()),
            retry_after: None,
            body: Ok(body),
        }
    }

    fn history_query(&mut self, r: &Request) -> Done {
        if self.history_down {
            return Done::Answered {
                status: 503,
                error_code: None,
                retry_after: None,
                body: Err("empty body".into()),
            };
        }
        let body: serde_json::Value = serde_json::from_str(&r.body).unwrap();
        let last = r.url.rsplit('/').next().unwrap_or_default().to_owned();
        self.queries.push((last, r.body.clone()));
        let count = r.url.ends_with("/count");
        let (filter, condition) = if count {
            (body.get("op").is_some(), body.get("operator").is_some())
        } else {
            (
                body.get("filter").is_some(),
                body.get("condition").is_some(),
            )
        };
        if self.reads == Reads::FilterOnly && condition {
            let refusal = serde_json::json!({"errorCode": "QuerySchemaValidation",
                "errorMsg": "Unknown property [condition].",
                "bindingErrors": [{"name": "condition", "msg": "Unknown property.", "code": "UNKNOWN_PROPERTY"}]});
            return Done::Answered {
                status: 400,
                error_code: Some("QuerySchemaValidation".into()),
                retry_after: None,
                body: Ok(serde_json::from_value(refusal).unwrap()),
            };
        }
        // 8.10 reads no filter: a tree it cannot see matches everything.
        let everything = self.reads == Reads::ConditionOnly && !condition && filter;
        // Every (aggregate, requestId) pair the query names.
        let text = body.to_string();
        let mut streams = Vec::new();
        for (aggregate, requests) in &self.history {
            for (i, request) in requests.iter().enumerate() {
                if everything
                    || text.contains(aggregate.as_str()) && text.contains(request.as_str())
                {
                    streams.push(
                        serde_json::json!({"aggregateId": aggregate, "requestId": request,
                        "version": i + 1, "commandId": "cmd"}),
                    );
                }
            }
        }
        let value = if count {
            serde_json::json!(streams.len())
        } else {
            serde_json::Value::Array(streams)
        };
        Done::Answered {
            status: 200,
            error_code: None,
            retry_after: None,
            body: Ok(serde_json::from_value(value).unwrap()),
        }
    }
}

pub(super) struct Tab {
    pub engine: Engine,
    pub replies: Vec<(CallId, Reply)>,
    pub emitted: Vec<(CallId, StreamElement)>,
    pub closed: bool,
    /// Its scope listings and its scope locks asked for.
    pub scope_reads: usize,
    pub scope_locks: usize,
}

/// Locks: name → (holder tab, op), and the waiting requests in order.
#[derive(Default)]
struct Locks {
    held: Vec<(String, usize, OpId)>,
    waiting: Vec<(String, usize, OpId, i64)>,
}

pub(super) struct World {
    pub now: i64,
    pub tabs: Vec<Tab>,
    pub store: BTreeMap<String, String>,
    pub gateway: Gateway,
    locks: Locks,
    /// Answers due later: (at, tab, op, done).
    later: Vec<(i64, usize, OpId, Done)>,
    /// How long each answer takes.
    pub latency: i64,
    pub full: bool,
    /// No Web Locks (Node.js): an intent's lock is unsupported, a scope's is this process's.
    pub no_locks: bool,
    /// Tabs reloaded so far (each new engine's seed).
    #[cfg_attr(target_arch = "wasm32", allow(dead_code))]
    reloads: u64,
    /// Who is signed in on each tab, when tabs have users: its engine asks
    /// for headers, and is answered with that user's token (as an app that
    /// ignores what `headers()` is told would answer).
    pub users: Vec<Option<String>>,
    /// Every announcement told, in order: its intent and its state's name.
    pub announced: Vec<(String, String)>,
}

pub(super) fn config(namespace: &str) -> EngineConfig {
    EngineConfig {
        namespace: namespace.into(),
        user: None,
        base_url: "http://gw".into(),
        secret_headers: String::new(),
        max_answer_bytes: 1 << 20,
        machine: MachineConfig {
            caller_timeout_ms: 5_000,
            retry_base_ms: 10,
            retry_max_ms: 50,
            ..MachineConfig::default()
        },
        legacy_timeout: false,
        headers: false,
        confirm: ConfirmWith::Gateway,
        offline_return: false,
        on_event: true,
        on_history: true,
        on_escalated: true,
        check_downstream: false,
        trace_context: false,
        policy: crate::journal::RequestIdPolicy::RandomV7,
        retention_ms: 7 * 86_400_000,
        query_shape: crate::protocol::QueryShape::Condition,
    }
}

pub(super) fn intent(id: &str, key: Option<&str>, scope: Option<&str>) -> NewIntent {
    NewIntent {
        intent_key: key.map(str::to_owned),
        aggregate: AggregateIdentity {
            resource: "account".into(),
            aggregate_id: id.into(),
            ..AggregateIdentity::default()
        },
        command: CommandSpec {
            method: "PUT".into(),
            path: format!("/account/{id}/lock_amount"),
            body: JsonValue::Object(vec![("amount".into(), JsonValue::Int(1))]).into(),
            expected_version: None,
            create: false,
            wait: WaitSpec {
                stage: CommandStage::Processed,
                context: None,
                processor: None,
                function: None,
                tail_stage: None,
                timeout_ms: 30_000,
            },
            headers: vec![],
        },
        scope: scope.map(str::to_owned),
    }
}

impl World {
    pub fn new(tabs: usize) -> World {
        World {
            now: T0,
            tabs: (0..tabs)
                .map(|i| Tab {
                    engine: Engine::new(
                        config("ns"),
                        crate::protocol::float_text,
                        crate::machine::probe::iso8601,
                        Box::new(SeededRandom::new(i as u64 + 1)),
                    ),
                    replies: Vec::new(),
                    emitted: Vec::new(),
                    closed: false,
                    scope_reads: 0,
                    scope_locks: 0,
                })
                .collect(),
            store: BTreeMap::new(),
            gateway: Gateway::default(),
            locks: Locks::default(),
            later: Vec::new(),
            latency: 5,
            full: false,
            no_locks: false,
            reloads: 0,
            users: Vec::new(),
            announced: Vec::new(),
        }
    }

    /// A world whose tabs are signed in as `users`.
    #[cfg_attr(target_arch = "wasm32", allow(dead_code))]
    pub fn with_users(users: &[Option<&str>]) -> World {
        let mut w = World::new(users.len());
        w.users = users.iter().map(|u| u.map(str::to_owned)).collect();
        for t in 0..users.len() {
            w.tabs[t].engine = Engine::new(
                w.tab_config(t),
                crate::protocol::float_text,
                crate::machine::probe::iso8601,
                Box::new(SeededRandom::new(t as u64 + 1)),
            );
        }
        w
    }

    /// The config of tab `t`'s engine: its user, who asks for headers.
    fn tab_config(&self, t: usize) -> EngineConfig {
        let mut c = config("ns");
        if let Some(user) = self.users.get(t) {
            c.user = user.clone();
            c.headers = true;
        }
        c
    }

    pub fn machine(&self) -> MachineConfig {
        self.tabs[0].engine.config.machine.clone()
    }

    /// Performs every tab's `Io` and delivers what is due, until `until`
    /// or nothing is left to do.
    pub fn run_until(&mut self, until: i64) {
        for _ in 0..200_000 {
            let mut worked = false;
            for t in 0..self.tabs.len() {
                while let Some(io) = self.tabs[t].engine.poll_io() {
                    worked = true;
                    self.perform(t, io);
                }
            }
            if worked {
                continue;
            }
            let due_later = self.later.iter().map(|(at, ..)| *at).min();
            let due_timer = self
                .tabs
                .iter()
                .filter(|t| !t.closed)
                .filter_map(|t| t.engine.poll_timeout())
                .min();
            let due_lock = self.locks.waiting.iter().map(|w| w.3).min();
            let Some(next) = [due_later, due_timer, due_lock].into_iter().flatten().min() else {
                return;
            };
            if next > until {
                self.now = until;
                return;
            }
            self.now = self.now.max(next);
            let now = self.now;
            if let Some(i) = self.later.iter().position(|(at, ..)| *at <= now) {
                let (_, t, op, done) = self.later.remove(i);
                if !self.tabs[t].closed {
                    self.tabs[t].engine.handle(now, op, done);
                }
                continue;
            }
            if let Some(i) = self.locks.waiting.iter().position(|w| w.3 <= now) {
                let (_, t, op, _) = self.locks.waiting.remove(i);
                self.tabs[t]
                    .engine
                    .handle(now, op, Done::Locked(Locked::Busy));
                continue;
            }
            for t in 0..self.tabs.len() {
                if !self.tabs[t].closed
                    && self.tabs[t]
                        .engine
                        .poll_timeout()
                        .is_some_and(|at| at <= now)
                {
                    self.tabs[t].engine.handle_timeout(now);
                }
            }
        }
        panic!("the world did not settle");
    }

    fn answer(&mut self, t: usize, op: OpId, done: Done) {
        self.later.push((self.now + self.latency, t, op, done));
    }

    fn entry(text: &str) -> Entry {
        decode_json_text(text)
    }

    fn perform(&mut self, t: usize, io: Io) {
        let Io { op, what } = io;
        match what {
            Do::Get { .. }
            | Do::List { .. }
            | Do::Put { .. }
            | Do::Remove { .. }
            | Do::Aside { .. } => self.perform_storage(t, op, what),
            Do::Lock { .. } => self.lock(t, op, what),
            Do::Unlock { lock } => self.unlock(t, lock),
            Do::Fetch(request) => {
                let done = if request.url.contains("/event/") {
                    self.gateway.history_query(&request)
                } else if request.url.ends_with("/snapshot") {
                    self.gateway.snapshot(&request)
                } else {
                    self.in_its_turn(&request);
                    self.gateway.command(&request)
                };
                self.answer(t, op, done);
            }
            Do::Ask(_) => {
                let token = self.users.get(t).map(|u| {
                    let who = u.as_deref().unwrap_or("anonymous");
                    ("Authorization".to_owned(), format!("Bearer {who}"))
                });
                self.answer(t, op, Done::Headers(Ok(token.into_iter().collect())));
            }
            Do::Announce(text) => self.announce(t, &text),
            Do::Post(text) => self.post(t, &text),
            Do::Listen(_) | Do::Notify(..) | Do::Told(..) => {}
            Do::Settle(call, reply) => self.tabs[t].replies.push((call, reply)),
            Do::Emit(call, element) => self.tabs[t].emitted.push((call, element)),
            Do::WhenOnline => self.answer(t, op, Done::Online),
            Do::Destroy => self.answer(t, op, Done::Removed(Ok(()))),
            Do::Close => self.tabs[t].closed = true,
        }
    }

    /// Every test's invariant of scopes: a scoped intent's command leaves
    /// only once every earlier place of its scope is settled (its user's:
    /// another user's intents are not a client's to see, nor to wait for).
    fn in_its_turn(&self, request: &Request) {
        let header = request
            .headers
            .iter()
            .find(|(k, _)| k == "Command-Request-Id");
        let Some((_, request_id)) = header else {
            return;
        };
        let records = self.records();
        let Some(sent) = records.iter().find(|r| &r.request_id == request_id) else {
            return;
        };
        if sent.scope.is_none() {
            return;
        }
        for earlier in records.iter().filter(|r| {
            r.namespace == sent.namespace
                && r.user == sent.user
                && r.scope == sent.scope
                && r.scope_seq < sent.scope_seq
        }) {
            assert!(
                earlier.state.is_settled(),
                "{} sent while {} (place {:?}, before its {:?}) is {:?}",
                sent.intent_id,
                earlier.intent_id,
                earlier.scope_seq,
                sent.scope_seq,
                earlier.state
            );
        }
    }

    /// The journal's operations, on the shared store.
    fn perform_storage(&mut self, t: usize, op: OpId, what: Do) {
        match what {
            Do::Get { key } => {
                let got = self.store.get(&key).map(|text| Self::entry(text));
                self.answer(t, op, Done::Got(Ok(got)));
            }
            Do::List { prefix, only } => {
                self.tabs[t].scope_reads += usize::from(only.is_some());
                let mut entries: Vec<_> = self
                    .store
                    .range(prefix.clone()..)
                    .take_while(|(k, _)| k.starts_with(&prefix))
                    .map(|(k, v)| (k.clone(), Self::entry(v)))
                    .collect();
                // Read in slices, as the executor reads a large listing: two
                // entries a part, the rest last.
                while entries.len() > 2 {
                    let rest = entries.split_off(2);
                    self.answer(t, op, Done::ListedPart(entries));
                    entries = rest;
                }
                self.answer(t, op, Done::Listed(Ok(entries)));
            }
            Do::Put {
                key,
                text,
                expected,
                ..
            } => {
                let current = self
                    .store
                    .get(&key)
                    .map(|v| decode_json_text(v).map_or(u64::MAX, |r| r.revision));
                let done = if self.full {
                    Done::Put(Err(crate::journal::StoreError::Unavailable {
                        kind: crate::journal::Unavailable::QuotaExceeded,
                        detail: "full".into(),
                    }))
                } else if current.unwrap_or(0) != expected {
                    Done::Put(Ok(Swap::Lost(current)))
                } else {
                    self.store.insert(key, text.whole());
                    Done::Put(Ok(Swap::Done))
                };
                self.answer(t, op, done);
            }
            Do::Remove { keys } => {
                for k in keys {
                    self.store.remove(&k);
                }
                self.full = false;
                self.answer(t, op, Done::Removed(Ok(())));
            }
            Do::Aside { from, to, reason } => {
                if let Some(v) = self.store.remove(&from) {
                    let kept = serde_json::json!({ "quarantinedFor": reason, "value": v });
                    self.store.insert(to, kept.to_string());
                }
                self.answer(t, op, Done::Removed(Ok(())));
            }
            _ => unreachable!("not a storage operation"),
        }
    }

    /// A lock across tabs: held at once if free, else waited for (or busy).
    fn lock(&mut self, t: usize, op: OpId, what: Do) {
        match what {
            Do::Lock { kind, .. } if self.no_locks && kind != LockKind::Scope => {
                self.answer(t, op, Done::Locked(Locked::Unsupported));
            }
            Do::Lock {
                name,
                wait_ms,
                kind,
            } => {
                self.tabs[t].scope_locks += usize::from(kind == LockKind::Scope);
                let free = !self.locks.held.iter().any(|(n, ..)| *n == name);
                if free {
                    self.locks.held.push((name, t, op));
                    self.answer(t, op, Done::Locked(Locked::Held));
                } else if wait_ms == 0 {
                    self.answer(t, op, Done::Locked(Locked::Busy));
                } else {
                    let until = self.now.saturating_add(wait_ms as i64);
                    self.locks.waiting.push((name, t, op, until));
                }
            }
            _ => unreachable!("not a lock"),
        }
    }

    /// An intent's announcement, heard by every other open tab.
    fn announce(&mut self, t: usize, text: &str) {
        let v: serde_json::Value = serde_json::from_str(text).unwrap();
        let id = v["intentId"].as_str().unwrap().to_owned();
        let state = v["state"].as_str().unwrap().to_owned();
        self.announced.push((id.clone(), state.clone()));
        for other in 0..self.tabs.len() {
            if other != t && !self.tabs[other].closed {
                self.tabs[other].engine.handle_announced(
                    self.now,
                    &id,
                    IntentState::of_name(&state),
                );
            }
        }
    }

    /// The probe's word, heard by every other open tab.
    fn post(&mut self, t: usize, text: &str) {
        let v: serde_json::Value = serde_json::from_str(text).unwrap();
        let availability = if v["available"] == true {
            Availability::Up
        } else {
            Availability::Down {
                since: v["since"].as_i64().unwrap(),
                next_look_at: v["nextLookAt"].as_i64().unwrap(),
                failures: v["failures"].as_u64().unwrap() as u32,
            }
        };
        let from = v["from"].as_u64().unwrap();
        let source = v["source"].as_str().unwrap().to_owned();
        for other in 0..self.tabs.len() {
            if other != t && !self.tabs[other].closed {
                self.tabs[other]
                    .engine
                    .handle_heard(self.now, &source, from, availability);
            }
        }
    }

    fn unlock(&mut self, t: usize, lock: OpId) {
        if let Some(i) = self
            .locks
            .held
            .iter()
            .position(|(_, tab, o)| *tab == t && *o == lock)
        {
            let (name, ..) = self.locks.held.remove(i);
            if let Some(j) = self.locks.waiting.iter().position(|w| w.0 == name) {
                let (name, tab, op, _) = self.locks.waiting.remove(j);
                self.locks.held.push((name, tab, op));
                self.answer(tab, op, Done::Locked(Locked::Held));
            }
        } else {
            self.locks.waiting.retain(|w| !(w.1 == t && w.2 == lock));
        }
    }

    /// A tab closes: its locks go, its engine is gone.
    pub fn close(&mut self, t: usize) {
        self.tabs[t].closed = true;
        // Its requests go first: a lock it held is never handed to its own
        // request still waiting, as a closed page's are dropped together.
        self.locks.waiting.retain(|w| w.1 != t);
        let held: Vec<OpId> = self
            .locks
            .held
            .iter()
            .filter(|(_, tab, _)| *tab == t)
            .map(|(_, _, o)| *o)
            .collect();
        for op in held {
            self.unlock(t, op);
        }
        self.later.retain(|l| l.1 != t);
    }

    /// A tab reloads: it closes, and a new engine takes its place.
    #[cfg_attr(target_arch = "wasm32", allow(dead_code))]
    pub fn reload(&mut self, t: usize) {
        self.close(t);
        self.reloads += 1;
        self.tabs[t] = Tab {
            engine: Engine::new(
                self.tab_config(t),
                crate::protocol::float_text,
                crate::machine::probe::iso8601,
                Box::new(SeededRandom::new(1_000 + self.reloads)),
            ),
            replies: Vec::new(),
            emitted: Vec::new(),
            closed: false,
            scope_reads: 0,
            scope_locks: 0,
        };
    }

    /// The locks held by open tabs: (name, tab).
    #[cfg_attr(target_arch = "wasm32", allow(dead_code))]
    pub fn held_locks(&self) -> Vec<(String, usize)> {
        self.locks
            .held
            .iter()
            .filter(|(_, t, _)| !self.tabs.get(*t).is_none_or(|tab| tab.closed))
            .map(|(n, t, _)| (n.clone(), *t))
            .collect()
    }

    pub fn reply(&self, t: usize, call: CallId) -> Option<&Reply> {
        self.tabs[t]
            .replies
            .iter()
            .find(|(c, _)| *c == call)
            .map(|(_, r)| r)
    }

    pub fn outcome(&self, t: usize, call: CallId) -> Outcome {
        match self.reply(t, call) {
            Some(
                Reply::Outcome(o)
                | Reply::Succeeded(o)
                | Reply::Failed(o)
                | Reply::StreamOutcome(o),
            ) => (**o).clone(),
            other => panic!("call {call}: {other:?}"),
        }
    }

    pub fn records(&self) -> Vec<IntentRecord> {
        self.store
            .iter()
            .filter(|(k, _)| k.starts_with("wow-intents/"))
            .map(|(_, v)| decode_json_text(v).unwrap())
            .collect()
    }

    pub fn send(&mut self, t: usize, call: CallId, intent: NewIntent, mode: SendMode) {
        let now = self.now;
        let machine = self.machine();
        self.tabs[t]
            .engine
            .send(now, call, intent, machine, mode, false);
    }
}

#[test]
fn a_send_is_persisted_before_it_leaves_and_succeeds_once() {
    let mut w = World::new(1);
    w.send(0, 1, intent("a1", None, None), SendMode::AndWait);
    w.run_until(T0 + 60_000);
    let outcome = w.outcome(0, 1);
    assert_eq!(outcome.status, Status::Succeeded, "{outcome:?}");
    assert!(matches!(w.reply(0, 1), Some(Reply::Succeeded(_))));
    assert_eq!(
        w.gateway.history["a1"],
        std::slice::from_ref(&outcome.request_id)
    );
    let records = w.records();
    assert_eq!(records.len(), 1);
    assert_eq!(records[0].state, IntentState::Succeeded);
    assert_eq!(records[0].request_id, outcome.request_id);
}

#[test]
fn a_lost_answer_is_confirmed_by_history_and_never_sent_again() {
    let mut w = World::new(1);
    w.gateway.faults.push(("a1".into(), Fault::LostAfterAppend));
    w.send(0, 1, intent("a1", None, None), SendMode::Outcome);
    w.run_until(T0 + 60_000);
    let outcome = w.outcome(0, 1);
    assert_eq!(outcome.status, Status::Succeeded, "{outcome:?}");
    assert_eq!(outcome.appended, Some(true));
    assert_eq!(outcome.attempts, 1, "confirmed, not resent");
    assert_eq!(w.gateway.arrivals.len(), 1);
}

/// A world of one tab whose gateway reads `reads`, its client stating `shape`.
fn shaped(reads: Reads, shape: crate::protocol::QueryShape) -> World {
    let mut w = World::new(1);
    w.gateway.reads = reads;
    w.tabs[0].engine.config.query_shape = shape;
    w
}

#[test]
fn history_is_asked_in_the_filter_shape_after_one_check_per_route() {
    use crate::protocol::QueryShape;
    let mut w = shaped(Reads::FilterOnly, QueryShape::Filter);
    w.gateway.faults.push(("a1".into(), Fault::LostAfterAppend));
    w.gateway.faults.push(("a2".into(), Fault::LostAfterAppend));
    w.send(0, 1, intent("a1", None, None), SendMode::Outcome);
    w.run_until(T0 + 60_000);
    w.send(0, 2, intent("a2", None, None), SendMode::Outcome);
    w.run_until(T0 + 120_000);
    for call in [1, 2] {
        let outcome = w.outcome(0, call);
        assert_eq!(outcome.status, Status::Succeeded, "{outcome:?}");
        assert_eq!((outcome.appended, outcome.attempts), (Some(true), 1));
    }
    let check = r#"{"op":"AND","operands":[{"op":"AGGREGATE_ID","value":"a1"},{"field":"requestId","op":"EQ","value":"wow-command-client.query-shape-check"}]}"#;
    let looks: Vec<&str> = w.gateway.queries.iter().map(|(_, b)| b.as_str()).collect();
    assert_eq!(looks.len(), 3, "one check, then a look each: {looks:?}");
    assert_eq!(looks[0], check);
    assert!(looks[1..]
        .iter()
        .all(|b| b.starts_with(r#"{"op":"AND","operands":["#)));
}

#[test]
fn a_gateway_that_reads_no_filter_never_confirms_a_lost_command() {
    use crate::protocol::QueryShape;
    // 8.10 behind a client told it is 9: the check counts the route's
    // other streams, so history is never asked in a shape it misreads.
    let mut w = shaped(Reads::ConditionOnly, QueryShape::Filter);
    w.gateway
        .history
        .insert("other".into(), vec!["r-other".into()]);
    w.gateway
        .faults
        .push(("a1".into(), Fault::LostBeforeAppend));
    w.send(0, 1, intent("a1", None, None), SendMode::Outcome);
    w.run_until(T0 + 60_000);
    let outcome = w.outcome(0, 1);
    assert_ne!(outcome.status, Status::Succeeded, "{outcome:?}");
    assert_ne!(outcome.appended, Some(true));
    assert_eq!(outcome.attempts, 1, "not resent blindly either");
    assert!(!w.gateway.history.contains_key("a1"));
    assert!(
        w.gateway
            .queries
            .iter()
            .all(|(_, b)| b.contains("query-shape-check")),
        "only the check was asked: {:?}",
        w.gateway.queries
    );
    let why = outcome.reason.unwrap_or_default();
    assert!(why.contains("does not read the query shape"), "{why}");
}

#[test]
fn a_refused_query_is_cannot_confirm_with_what_the_server_said() {
    use crate::protocol::QueryShape;
    let mut w = shaped(Reads::FilterOnly, QueryShape::Condition);
    w.gateway.faults.push(("a1".into(), Fault::LostAfterAppend));
    w.send(0, 1, intent("a1", None, None), SendMode::Outcome);
    w.run_until(T0 + 60_000);
    let outcome = w.outcome(0, 1);
    assert_eq!(outcome.status, Status::Escalated, "{outcome:?}");
    assert_eq!(outcome.appended, None, "not known, never \"not appended\"");
    assert_eq!(outcome.attempts, 1);
    let why = outcome.reason.unwrap_or_default();
    assert!(
        why.contains("400 QuerySchemaValidation: Unknown property [condition]. UNKNOWN_PROPERTY;"),
        "{why}"
    );
}

#[test]
fn a_refusal_before_the_append_is_retried_with_the_same_request_id() {
    let mut w = World::new(1);
    w.gateway.faults.push(("a1".into(), Fault::Refused));
    w.send(0, 1, intent("a1", None, None), SendMode::Outcome);
    w.run_until(T0 + 60_000);
    let outcome = w.outcome(0, 1);
    assert_eq!(outcome.status, Status::Succeeded, "{outcome:?}");
    assert_eq!(outcome.attempts, 2);
    assert_eq!(
        w.gateway.arrivals,
        [outcome.request_id.clone(), outcome.request_id.clone()]
    );
    assert_eq!(w.gateway.history["a1"].len(), 1);
}

#[test]
fn history_down_escalates_and_the_probe_drives_it_once_history_is_back() {
    let mut w = World::new(1);
    w.gateway.faults.push(("a1".into(), Fault::LostAfterAppend));
    w.gateway.history_down = true;
    w.send(0, 1, intent("a1", None, None), SendMode::Outcome);
    w.run_until(T0 + 20_000);
    assert_eq!(w.outcome(0, 1).status, Status::Escalated);
    assert_eq!(w.records()[0].state, IntentState::Escalated);
    w.gateway.history_down = false;
    w.run_until(T0 + 120_000);
    assert_eq!(
        w.records()[0].state,
        IntentState::Succeeded,
        "the probe's look drove it"
    );
    assert_eq!(w.gateway.arrivals.len(), 1, "never sent again");
}

#[test]
fn a_key_given_again_replays_its_outcome_and_a_different_payload_is_refused() {
    let mut w = World::new(1);
    w.send(0, 1, intent("a1", Some("k"), None), SendMode::Outcome);
    w.run_until(T0 + 10_000);
    w.send(0, 2, intent("a1", Some("k"), None), SendMode::Outcome);
    w.run_until(T0 + 20_000);
    let (first, again) = (w.outcome(0, 1), w.outcome(0, 2));
    assert_eq!(first.request_id, again.request_id);
    assert_eq!(again.status, Status::Succeeded);
    assert_eq!(w.gateway.arrivals.len(), 1, "replayed, not sent");
    let mut other = intent("a1", Some("k"), None);
    other.command.body = JsonValue::Object(vec![("amount".into(), JsonValue::Int(2))]).into();
    w.send(0, 3, other, SendMode::Outcome);
    w.run_until(T0 + 30_000);
    let refused = w.outcome(0, 3);
    assert_eq!(
        refused.error.unwrap().error_code.as_str(),
        "IntentKeyReused"
    );
}

/// Two tabs given one key at the same moment: one record is written, the
/// other tab's first write loses the compare-and-swap and follows the
/// winner's intent; one command is sent.
#[test]
fn two_tabs_racing_to_create_one_key_share_the_winners_intent() {
    // With Web Locks the second tab waits and finds the record; without
    // them (Node.js) both first writes race and one loses its swap.
    for no_locks in [false, true] {
        let mut w = World::new(2);
        w.no_locks = no_locks;
        w.send(0, 1, intent("a1", Some("k"), None), SendMode::Outcome);
        w.send(1, 1, intent("a1", Some("k"), None), SendMode::Outcome);
        w.run_until(T0 + 60_000);
        let (first, second) = (w.outcome(0, 1), w.outcome(1, 1));
        assert_eq!(first.request_id, second.request_id, "no_locks: {no_locks}");
        assert_eq!(
            (first.status, second.status),
            (Status::Succeeded, Status::Succeeded),
            "no_locks: {no_locks}"
        );
        assert_eq!(w.records().len(), 1);
        assert_eq!(
            w.gateway.arrivals.len(),
            1,
            "sent once (no_locks: {no_locks})"
        );
    }
}

/// The same race with two different commands under one key: the tab whose
/// write lost reads the winner's record and refuses its own command
/// (`IntentKeyReused`), never reporting the winner's outcome as its own.
#[test]
fn two_tabs_racing_one_key_with_different_commands_refuse_the_second() {
    for no_locks in [false, true] {
        let mut w = World::new(2);
        w.no_locks = no_locks;
        let mut other = intent("a1", Some("k"), None);
        other.command.body = JsonValue::Object(vec![("amount".into(), JsonValue::Int(2))]).into();
        w.send(0, 1, intent("a1", Some("k"), None), SendMode::Outcome);
        w.send(1, 1, other, SendMode::Outcome);
        w.run_until(T0 + 60_000);
        let outcomes = [w.outcome(0, 1), w.outcome(1, 1)];
        let refused = outcomes
            .iter()
            .filter(|o| o.error.as_ref().map(|e| e.error_code.as_str()) == Some("IntentKeyReused"));
        assert_eq!(refused.count(), 1, "no_locks: {no_locks}: {outcomes:?}");
        assert_eq!(w.records().len(), 1);
        assert_eq!(w.gateway.arrivals.len(), 1, "no_locks: {no_locks}");
    }
}

#[test]
fn a_scope_sends_in_the_order_written_and_waits_on_an_unknown_head() {
    let mut w = World::new(2);
    w.gateway.faults.push(("a1".into(), Fault::LostAfterAppend));
    w.gateway.history_down = true;
    w.send(0, 1, intent("a1", None, Some("acct")), SendMode::Outcome);
    w.run_until(T0 + 100);
    w.send(1, 2, intent("a1", None, Some("acct")), SendMode::Outcome);
    w.run_until(T0 + 20_000);
    assert_eq!(w.outcome(0, 1).status, Status::Escalated);
    let queued = w.outcome(1, 2);
    assert_eq!(queued.status, Status::Unknown, "{queued:?}");
    assert_eq!(
        w.gateway.arrivals.len(),
        1,
        "the second waits: the first is not settled"
    );
    w.gateway.history_down = false;
    w.run_until(T0 + 200_000);
    let history = &w.gateway.history["a1"];
    assert_eq!(history.len(), 2, "{history:?}");
    let records = w.records();
    let first = records.iter().find(|r| r.scope_seq == Some(1)).unwrap();
    assert_eq!(history[0], first.request_id, "in the order written");
    assert!(
        records.iter().all(|r| r.state == IntentState::Succeeded),
        "{records:?}"
    );
}

#[test]
fn a_burst_into_one_scope_reads_it_once_and_another_tab_waits_for_its_places() {
    let mut w = World::new(2);
    for call in 1..=20 {
        w.send(0, call, intent("a1", None, Some("s")), SendMode::Outcome);
    }
    w.run_until(T0 + 1);
    w.send(1, 99, intent("a1", None, Some("s")), SendMode::Outcome);
    w.run_until(T0 + 60_000);
    for call in 1..=20 {
        assert_eq!(w.outcome(0, call).status, Status::Succeeded);
    }
    assert_eq!(w.outcome(1, 99).status, Status::Succeeded);
    // One lock and one listing for the twenty places; the turns read the
    // scope only where the one before is not waited for here, or where the
    // other tab's word (a hint, read again) woke one.
    assert_eq!(w.tabs[0].scope_locks, 1);
    assert!(w.tabs[0].scope_reads <= 5, "{}", w.tabs[0].scope_reads);
    let mut records = w.records();
    records.sort_by_key(|r| r.scope_seq);
    let seqs: Vec<_> = records.iter().map(|r| r.scope_seq.unwrap()).collect();
    assert_eq!(seqs, (1..=21).collect::<Vec<_>>(), "one place each");
    let sent: Vec<_> = records.iter().map(|r| r.request_id.clone()).collect();
    assert_eq!(w.gateway.history["a1"], sent, "sent in the order written");
    // The other tab's place came after the burst's, all stored first.
    assert_eq!(records[20].request_id, w.outcome(1, 99).request_id);
}

/// One tab whose first intent of scope `s` was appended, its answer lost,
/// while history is down: the head stays in doubt, and the scope waits.
fn a_scope_whose_head_is_in_doubt() -> World {
    let mut w = World::new(1);
    w.gateway.faults.push(("a1".into(), Fault::LostAfterAppend));
    w.gateway.history_down = true;
    w.send(0, 1, intent("a1", None, Some("s")), SendMode::Outcome);
    w.run_until(T0 + 100);
    w
}

/// A queued intent is announced once its place is stored, before its
/// turn: the other tabs' lists (and `watchIntents`) show it waiting.
#[test]
fn a_queued_intent_is_announced_once_its_place_is_stored() {
    let mut w = a_scope_whose_head_is_in_doubt();
    w.send(0, 2, intent("a1", None, Some("s")), SendMode::Outcome);
    w.run_until(T0 + 200);
    let records = w.records();
    let second = records.iter().find(|r| r.scope_seq == Some(2)).unwrap();
    assert_eq!(second.state, IntentState::Queued);
    let heard: Vec<_> = w
        .announced
        .iter()
        .filter(|(id, _)| *id == second.intent_id)
        .collect();
    assert_eq!(heard.len(), 1, "{:?}", w.announced);
    assert_eq!(IntentState::of_name(&heard[0].1), Some(IntentState::Queued));
}

#[test]
fn a_queued_intent_withdrawn_is_never_sent_and_its_caller_hears_it() {
    let mut w = a_scope_whose_head_is_in_doubt();
    w.send(
        0,
        2,
        intent("a1", Some("second"), Some("s")),
        SendMode::AndWait,
    );
    w.run_until(T0 + 200);
    let now = w.now;
    w.tabs[0].engine.withdraw(now, 3, "second", false);
    w.run_until(T0 + 60_000);
    assert!(
        matches!(w.reply(0, 3), Some(Reply::Outcome(o)) if o.status == Status::Rejected),
        "{:?}",
        w.reply(0, 3)
    );
    let second = w
        .records()
        .into_iter()
        .find(|r| r.intent_key.as_deref() == Some("second"))
        .unwrap();
    assert_eq!(second.state, IntentState::Withdrawn);
    assert!(!w.gateway.arrivals.contains(&second.request_id));
}

#[test]
fn withdrawing_a_scope_withdraws_its_queued_intents_and_leaves_its_head() {
    let mut w = a_scope_whose_head_is_in_doubt();
    for call in 2..4 {
        w.send(0, call, intent("a1", None, Some("s")), SendMode::Outcome);
    }
    w.send(0, 4, intent("a1", None, Some("t")), SendMode::Outcome);
    w.run_until(T0 + 200);
    let now = w.now;
    w.tabs[0].engine.withdraw(now, 5, "s", true);
    w.run_until(T0 + 60_000);
    let mut records = w.records();
    records.sort_by_key(|r| (r.scope.clone(), r.scope_seq));
    let states: Vec<_> = records
        .iter()
        .map(|r| (r.scope.as_deref().unwrap(), r.scope_seq, r.state))
        .collect();
    assert_eq!(
        states[1..3],
        [
            ("s", Some(2), IntentState::Withdrawn),
            ("s", Some(3), IntentState::Withdrawn)
        ]
    );
    assert_ne!(
        states[0].2,
        IntentState::Withdrawn,
        "the head, sent, is left as it is"
    );
    assert_ne!(states[3].2, IntentState::Withdrawn, "another scope is left");
    for r in &records[1..3] {
        assert!(!w.gateway.arrivals.contains(&r.request_id));
    }
    // Nothing left to withdraw: a second call changes nothing.
    let now = w.now;
    w.tabs[0].engine.withdraw(now, 6, "s", true);
    w.run_until(now + 1_000);
    let mut after = w.records();
    after.sort_by_key(|r| (r.scope.clone(), r.scope_seq));
    let revisions = |rs: &[IntentRecord]| rs.iter().map(|r| r.revision).collect::<Vec<_>>();
    assert_eq!(
        revisions(&after[1..3]),
        revisions(&records[1..3]),
        "nothing written"
    );
}

#[test]
fn resume_drives_what_a_closed_tab_left_and_another_tab_never_drives_it_twice() {
    let mut w = World::new(3);
    w.latency = 50;
    w.send(0, 1, intent("a1", None, None), SendMode::Outcome);
    w.run_until(T0 + 60);
    w.close(0);
    let now = w.now;
    w.tabs[1].engine.resume(now, 7, false);
    w.tabs[2].engine.resume(now, 8, false);
    w.run_until(T0 + 60_000);
    let (Some(Reply::Report { driven: a, .. }), Some(Reply::Report { driven: b, .. })) =
        (w.reply(1, 7), w.reply(2, 8))
    else {
        panic!("{:?} {:?}", w.reply(1, 7), w.reply(2, 8));
    };
    assert_eq!(a.len() + b.len(), 1, "one tab drove it");
    assert_eq!(w.gateway.history["a1"].len(), 1);
    assert_eq!(w.records()[0].state, IntentState::Succeeded);
}

#[test]
fn a_full_store_evicts_settled_history_and_the_write_goes_through() {
    let mut w = World::new(1);
    w.send(0, 1, intent("a1", None, None), SendMode::Outcome);
    w.run_until(T0 + 10_000);
    w.full = true;
    w.send(0, 2, intent("a2", None, None), SendMode::Outcome);
    w.run_until(T0 + 20_000);
    assert_eq!(w.outcome(0, 2).status, Status::Succeeded);
    let records = w.records();
    assert_eq!(records.len(), 1, "the settled one went");
    assert_eq!(records[0].aggregate.aggregate_id, "a2");
}

/// Without Web Locks and over a store that answers at once (Node.js, memory),
/// a queued intent waits for the one before it without spinning, and goes
/// once that one's retry has succeeded.
#[test]
fn a_queued_intent_waits_its_turn_without_web_locks_behind_a_retried_head() {
    let mut w = World::new(1);
    w.no_locks = true;
    w.latency = 0;
    w.gateway.faults.push(("a1".into(), Fault::Refused));
    w.send(0, 1, intent("a1", None, Some("s")), SendMode::Outcome);
    w.send(0, 2, intent("a1", None, Some("s")), SendMode::Outcome);
    w.run_until(T0 + 4_000);
    let (first, second) = (w.outcome(0, 1), w.outcome(0, 2));
    assert_eq!(first.status, Status::Succeeded, "{first:?}");
    assert_eq!(first.attempts, 2);
    assert_eq!(second.status, Status::Succeeded, "{second:?}");
    assert_eq!(
        w.gateway.history["a1"],
        [first.request_id.clone(), second.request_id.clone()]
    );
}

#[test]
fn a_leader_that_never_looks_costs_the_other_tabs_a_pause_not_their_answers() {
    // A tab holds the probe's lock and never looks: frozen by the browser,
    // or a lock its instance never let go of. No other tab can lead.
    let mut w = World::new(1);
    w.locks.held.push((
        "wow-command-client/ns/history/http://gw".into(),
        99,
        OpId::NONE,
    ));
    w.gateway.faults.push(("a1".into(), Fault::LostAfterAppend));
    w.gateway.faults.push(("a2".into(), Fault::LostAfterAppend));
    w.gateway.history_down = true;
    w.send(0, 1, intent("a1", None, None), SendMode::Outcome);
    w.run_until(T0 + 5 * 60_000);
    let first = w.outcome(0, 1);
    assert_eq!(first.status, Status::Escalated, "{first:?}");
    w.gateway.history_down = false;
    w.run_until(T0 + 7 * 60_000);
    let records = w.records();
    assert_eq!(
        records[0].state,
        IntentState::Succeeded,
        "the escalated intent is confirmed once a look finds history back"
    );
    // A drive's question while this tab believes history is down.
    w.gateway.history_down = true;
    w.send(0, 2, intent("a2", None, None), SendMode::Outcome);
    w.run_until(T0 + 8 * 60_000);
    w.gateway.history_down = false;
    w.send(0, 3, intent("a3", None, None), SendMode::Outcome);
    w.run_until(T0 + 15 * 60_000);
    let second = w.outcome(0, 2);
    assert_eq!(second.status, Status::Escalated, "{second:?}");
    let third = w.outcome(0, 3);
    assert_eq!(third.status, Status::Succeeded, "{third:?}");
    assert!(
        w.records()
            .iter()
            .all(|r| r.state == IntentState::Succeeded),
        "{:?}",
        w.records()
    );
    assert_eq!(w.gateway.arrivals.len(), 3, "each sent once");
}

/// `tabs` tabs, tab 0 with an intent in flight (its answer not yet come): its id.
fn one_in_flight(tabs: usize) -> (World, String) {
    let mut w = World::new(tabs);
    w.latency = 50;
    w.send(0, 1, intent("a1", None, None), SendMode::Outcome);
    w.run_until(T0 + 60);
    let id = w.records()[0].intent_id.clone();
    (w, id)
}

#[test]
fn an_intent_set_aside_is_named_while_driven_then_driven_by_no_tab_and_listed_as_quarantined() {
    let (mut w, id) = one_in_flight(3);
    // What tab 0 waits for is its drive's work: the executor names the intent.
    let named: Vec<Option<&str>> = (w.later.iter())
        .filter(|l| l.1 == 0)
        .map(|l| w.tabs[0].engine.intent_of(l.2))
        .collect();
    assert!(
        !named.is_empty() && named.iter().all(|n| *n == Some(id.as_str())),
        "{named:?}"
    );
    assert_eq!(w.tabs[0].engine.intent_of(OpId::of_tag(999_999)), None);
    // Its module stopped twice over it: the tab's locks go, and the intent is set aside.
    w.close(0);
    let now = w.now;
    w.tabs[1].engine.read(now, 9, Read::SetAside(id.clone()));
    w.run_until(now + 1_000);
    assert!(
        matches!(w.reply(1, 9), Some(Reply::Count(1))),
        "{:?}",
        w.reply(1, 9)
    );
    let now = w.now;
    w.tabs[1].engine.resume(now, 7, false);
    w.tabs[2].engine.resume(now, 8, false);
    w.tabs[2].engine.read(now, 10, Read::Quarantined);
    w.run_until(now + 60_000);
    for (t, call) in [(1, 7), (2, 8)] {
        let Some(Reply::Report { driven, busy }) = w.reply(t, call) else {
            panic!("{:?}", w.reply(t, call));
        };
        assert!(
            driven.is_empty() && busy.is_empty(),
            "tab {t} drove it: {driven:?} {busy:?}"
        );
    }
    assert!(w.records().is_empty(), "no longer among the intents");
    let Some(Reply::Quarantined(q)) = w.reply(2, 10) else {
        panic!("{:?}", w.reply(2, 10));
    };
    assert_eq!(q.len(), 1);
    assert!(q[0].key.ends_with(&id), "{:?}", q[0].key);
    // Setting aside what is not there changes nothing.
    let now = w.now;
    w.tabs[1]
        .engine
        .read(now, 11, Read::SetAside("nothing-here".into()));
    w.run_until(now + 1_000);
    assert!(matches!(w.reply(1, 11), Some(Reply::Count(1))));
    assert_eq!(w.store.len(), 1, "{:?}", w.store.keys().collect::<Vec<_>>());
}

#[test]
fn what_a_resume_waits_for_is_named_for_its_intent() {
    let (mut w, id) = one_in_flight(2);
    w.close(0);
    let now = w.now;
    w.tabs[1].engine.resume(now, 7, false);
    let mut seen = 0;
    for step in 1..40 {
        w.run_until(now + step * 5);
        for l in w.later.iter().filter(|l| l.1 == 1) {
            if let Some(named) = w.tabs[1].engine.intent_of(l.2) {
                assert_eq!(named, id);
                seen += 1;
            }
        }
    }
    assert!(seen > 0, "the resume's lock and reads were named");
}

/// awaitDownstream's SNAPSHOT: a read that fails is "not yet", looked at
/// again after a pause, until the snapshot reaches the appended version.
#[test]
fn a_failed_snapshot_read_is_looked_at_again_until_the_version_is_reached() {
    let mut w = World::new(1);
    w.send(0, 1, intent("a1", None, None), SendMode::AndWait);
    w.run_until(T0 + 1_000);
    let id = w.records()[0].intent_id.clone();
    w.gateway.snapshot_failures = 2;
    let now = w.now;
    let stage = Some(CommandStage::Snapshot);
    w.tabs[0]
        .engine
        .downstream(now, 2, &id, stage, Some(5_000), false);
    w.run_until(now + 10_000);
    let Some(Reply::Downstream(outcome, reached)) = w.reply(0, 2) else {
        panic!("{:?}", w.reply(0, 2));
    };
    assert_eq!((*reached, outcome.appended_version), (stage, Some(1)));
    assert_eq!(
        w.gateway.snapshot_failures, 0,
        "both failed reads were made"
    );
}

/// A resume's try is a drive: signing out ends it as it ends every drive,
/// so an intent it had locked is parked, not driven during the sign-out
/// (with whatever credentials the app has by then).
#[test]
fn signing_out_ends_a_resume_that_holds_an_intents_lock() {
    let (mut w, _) = one_in_flight(2);
    w.close(0);
    let start = w.now;
    let left = w.records()[0].clone();
    w.tabs[1].engine.resume(start, 7, false);
    // Listed (+50), then its lock held (+100): reading the record again.
    w.run_until(start + 120);
    assert!(
        w.locks.held.iter().any(|(_, t, _)| *t == 1),
        "the try holds the lock"
    );
    let now = w.now;
    w.tabs[1].engine.sign_out(now, 9, false, true, false);
    w.run_until(now + 60_000);
    parked_as_left(&w, &left);
}

/// Tab 1's sign-out (call 9) parked the one intent `left` as it was:
/// nothing written, asked or sent for it since, and no lock of it taken or
/// kept through the sign-out.
fn parked_as_left(w: &World, left: &IntentRecord) {
    let Some(Reply::SignedOut(report)) = w.reply(1, 9) else {
        panic!("{:?}", w.reply(1, 9));
    };
    assert_eq!(report.parked, 1, "{report:?}");
    let record = &w.records()[0];
    assert_eq!((record.state, record.revision), (left.state, left.revision));
    assert_eq!(w.gateway.history["a1"].len(), 1);
    let held = &w.locks.held;
    assert!(
        held.is_empty(),
        "an intent's lock through the sign-out: {held:?}"
    );
}

/// A resume still listing when its user signs out starts no drive once
/// the sign-out began: what it lists is parked as it was left.
#[test]
fn a_resume_listing_when_its_user_signs_out_drives_nothing() {
    let (mut w, _) = one_in_flight(2);
    w.close(0);
    let now = w.now;
    let left = w.records()[0].clone();
    w.tabs[1].engine.resume(now, 7, false);
    w.tabs[1].engine.sign_out(now, 9, false, true, false);
    w.run_until(now + 60_000);
    parked_as_left(&w, &left);
    // The resume settled before the client closed: it drove nothing.
    let Some(Reply::Report { driven, busy }) = w.reply(1, 7) else {
        panic!("{:?}", w.reply(1, 7));
    };
    assert!(driven.is_empty() && busy.is_empty(), "{driven:?} {busy:?}");
}

/// Once a `clear()` is over, the client it kept open resumes as before.
#[test]
fn after_a_clear_the_client_resumes_again() {
    let mut w = World::new(2);
    w.latency = 50;
    let now = w.now;
    w.tabs[1].engine.sign_out(now, 9, true, false, false);
    w.run_until(now + 1_000);
    assert!(matches!(w.reply(1, 9), Some(Reply::SignedOut(_))));
    w.send(0, 1, intent("a1", None, None), SendMode::Outcome);
    w.run_until(w.now + 60);
    w.close(0);
    let now = w.now;
    w.tabs[1].engine.resume(now, 7, false);
    w.run_until(now + 60_000);
    let Some(Reply::Report { driven, .. }) = w.reply(1, 7) else {
        panic!("{:?}", w.reply(1, 7));
    };
    assert_eq!(driven.len(), 1);
    assert_eq!(w.records()[0].state, IntentState::Succeeded);
}

/// A wake no state of its task asked for is a failing test, not a task
/// left waiting for ever (in release it is dropped and counted).
#[test]
#[should_panic(expected = "a wake its state did not ask for")]
fn a_wake_no_state_asked_for_fails_the_test() {
    let mut w = World::new(1);
    let now = w.now;
    w.tabs[0].engine.read(now, 1, Read::Quarantined);
    let engine = &mut w.tabs[0].engine;
    let task = engine.tasks.last().expect("the read's task").id;
    engine.wakes.push_back((task, Wake::Timer));
    engine.run();
}

/// Nothing of intent `a1` outlived the sign-out: no record, no command at
/// the gateway, no lock held; the sign-out named no intent busy.
fn nothing_of_it_left(w: &World, why: &str) {
    assert!(w.records().is_empty(), "{why}: {:?}", w.records());
    assert!(!w.gateway.history.contains_key("a1"), "{why}: sent");
    assert!(w.locks.held.is_empty(), "{why}: {:?}", w.locks.held);
    let Some(Reply::SignedOut(report)) = w.reply(0, 9) else {
        panic!("{why}: {:?}", w.reply(0, 9));
    };
    assert!(
        report.busy.is_empty(),
        "{why}: its own send is no other tab's"
    );
}

/// A send, a confirm or a retry called while its user signs out on this
/// client is refused at once (`SigningOut`): nothing written, nothing sent
/// with their credentials, nothing of it left after a purge.
#[test]
fn a_call_made_while_its_user_signs_out_is_refused_and_leaves_nothing() {
    for (at, key) in [(0, None), (60, Some("k")), (130, None)] {
        let mut w = World::new(1);
        w.latency = 50;
        let now = w.now;
        w.tabs[0].engine.sign_out(now, 9, true, true, false);
        w.run_until(now + at);
        w.send(0, 1, intent("a1", key, None), SendMode::Outcome);
        let t = w.now;
        w.tabs[0].engine.confirm(t, 2, "i-1", false);
        w.tabs[0].engine.retry(t, 3, "i-1", None, false);
        w.run_until(now + 60_000);
        for call in [1, 2, 3] {
            let Some(Reply::Failed(refused)) = w.reply(0, call) else {
                panic!("at {at}, call {call}: {:?}", w.reply(0, call));
            };
            let code = refused.error.as_ref().map(|e| &e.error_code);
            assert_eq!(code, Some(&ErrorCode::parse("SigningOut")));
            assert_eq!(refused.appended, Some(false));
        }
        nothing_of_it_left(&w, &format!("called {at} ms into the sign-out"));
    }
}

/// A send begun just before its user signs out (still reading its key's
/// record, writing it, or its drive about to start) sends nothing during
/// the sign-out; its call settles, and a purge leaves nothing of it. On the
/// build before, a keyed one was sent as the sign-out ran and its record
/// outlived the purge, named `busy` as if another tab drove it.
#[test]
fn a_send_still_beginning_when_its_user_signs_out_is_never_sent() {
    for (before, key) in [(10, Some("k")), (60, Some("k")), (10, None)] {
        let mut w = World::new(1);
        w.latency = 50;
        let now = w.now;
        w.send(0, 1, intent("a1", key, None), SendMode::AndWait);
        w.run_until(now + before);
        let t = w.now;
        w.tabs[0].engine.sign_out(t, 9, true, true, false);
        w.run_until(now + 60_000);
        let why = format!("begun {before} ms before, key {key:?}");
        assert!(matches!(w.reply(0, 1), Some(Reply::Failed(_))), "{why}");
        nothing_of_it_left(&w, &why);
    }
}

/// A retry re-decides a conflict under the intent's lock, as the drive's
/// first write: two tabs retrying one conflict at once (or a second click
/// once the first is on the wire) send it once, with its requestId, and
/// both hear its outcome. On the build before, the retry wrote its decision
/// before it took the lock: at once, the second call failed (`IntentBusy`,
/// "appended: false") although it was appended; later, `NotInConflict`.
#[test]
fn two_retries_of_one_conflict_send_it_once_and_both_hear_its_outcome() {
    // At once, and the second once the first is on the wire (its record `sending`).
    for after_ms in [0, 200] {
        two_retries(after_ms);
    }
}

fn two_retries(after_ms: i64) {
    let mut w = World::new(2);
    w.latency = 50;
    let mut stale = intent("a1", None, None);
    stale.command.expected_version = Some(5);
    w.send(0, 1, stale, SendMode::Outcome);
    w.run_until(w.now + 60_000);
    let conflict = w.outcome(0, 1);
    assert_eq!(
        (conflict.status, conflict.appended),
        (Status::Conflict, Some(false))
    );
    let id = conflict.intent_id.clone();
    let now = w.now;
    w.tabs[0].engine.retry(now, 2, &id, Some(0), false);
    w.run_until(now + after_ms);
    if after_ms > 0 {
        assert_eq!(w.records()[0].state, IntentState::Sending);
    }
    let then = w.now;
    w.tabs[1].engine.retry(then, 3, &id, Some(0), false);
    w.run_until(now + 60_000);
    for (t, call) in [(0, 2), (1, 3)] {
        let Some(Reply::Outcome(o)) = w.reply(t, call) else {
            panic!("tab {t}, {after_ms} ms after: {:?}", w.reply(t, call));
        };
        assert_eq!(
            (o.status, o.appended),
            (Status::Succeeded, Some(true)),
            "tab {t}"
        );
        assert_eq!(o.request_id, conflict.request_id);
    }
    assert_eq!(
        w.gateway.history["a1"],
        std::slice::from_ref(&conflict.request_id)
    );
    assert_eq!(
        w.gateway.arrivals.len(),
        2,
        "the stale send, then one retry"
    );
    let record = &w.records()[0];
    assert_eq!(record.state, IntentState::Succeeded);
    assert_eq!(record.command.expected_version, Some(0));
    // Settled: a retry is refused, nothing sent.
    let now = w.now;
    w.tabs[1].engine.retry(now, 4, &id, Some(1), false);
    w.run_until(now + 60_000);
    let Some(Reply::Failed(refused)) = w.reply(1, 4) else {
        panic!("{:?}", w.reply(1, 4));
    };
    let code = refused.error.as_ref().map(|e| &e.error_code);
    assert_eq!(code, Some(&ErrorCode::parse("NotInConflict")));
    assert_eq!(w.gateway.arrivals.len(), 2);
}

/// A retry of a queued intent is refused (`NotInConflict`): it is sent in
/// its scope's turn, never out of it by a retry. (A build of this change
/// drove it, and the simulated gateway caught it sent out of turn.)
#[test]
fn a_retry_of_a_queued_intent_sends_nothing_out_of_its_turn() {
    let mut w = a_scope_whose_head_is_in_doubt();
    w.send(
        0,
        2,
        intent("a1", Some("second"), Some("s")),
        SendMode::Outcome,
    );
    w.run_until(T0 + 200);
    let records = w.records();
    let second = records
        .iter()
        .find(|r| r.intent_key.as_deref() == Some("second"))
        .unwrap();
    assert_eq!(second.state, IntentState::Queued);
    let now = w.now;
    w.tabs[0]
        .engine
        .retry(now, 3, &second.intent_id, None, false);
    w.run_until(T0 + 60_000);
    let Some(Reply::Failed(refused)) = w.reply(0, 3) else {
        panic!("{:?}", w.reply(0, 3));
    };
    let code = refused.error.as_ref().map(|e| &e.error_code);
    assert_eq!(code, Some(&ErrorCode::parse("NotInConflict")));
    assert!(!w.gateway.arrivals.contains(&second.request_id));
}
