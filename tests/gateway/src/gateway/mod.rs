//! The command gateway, split along the pipeline it implements, as Wow's
//! own source is: `routes` (the HTTP gateway: routing, CORS, the fault
//! control), `command_gateway` (the send pipeline: pre-check, validation,
//! SENT), `processor` (the aggregate processor and the event store's
//! append), `downstream` (SNAPSHOT, PROJECTED, EVENT_HANDLED and the saga),
//! `wait` (the stage and chain waits of PROTOCOL §3.3–3.4), `repository`
//! (aggregate state folded from the event store) and `queries` (event
//! queries, state and snapshot reads). This file holds what they share: the
//! gateway's state, the message in flight and the signals to waiters.

mod command_gateway;
mod downstream;
mod processor;
mod queries;
mod repository;
mod routes;
mod wait;

use repository::Folded;
use routes::{header, illegal, not_found, not_found_resource, read_body, Target};
use wait::{Plan, Wait};

use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use bytes::Bytes;
use http_body_util::BodyExt;
use hyper::body::Incoming;
use hyper::{Method, Request, Response};
use serde_json::{json, Value};
use tokio::sync::mpsc;
use wow_command_client::core::protocol::headers::names;
use wow_command_client::core::protocol::{
    BindingError, CommandResult, CommandStage, DomainEvent, DomainEventStream, ErrorCode,
    ErrorInfo, FunctionInfo, FunctionKind, JsonValue,
};

use crate::domain::{self, AggregateType, CommandDef, Decision, Owner};
use crate::faults::{Active, FaultKind, Faults, Fired, Subject};
use crate::http::{self, Body};
use crate::query;
use crate::store::{AppendError, EventStore};

/// Returned instead of a response: close the connection without answering.
#[derive(Debug)]
pub struct DropConnection;

impl std::fmt::Display for DropConnection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("connection dropped by an injected fault")
    }
}
impl std::error::Error for DropConnection {}

type Answer = Result<Response<Body>, DropConnection>;

/// A signal on its way to a waiter; `commands` are the saga's sent command ids.
#[derive(Clone)]
struct Signal {
    result: CommandResult,
    commands: Vec<String>,
}

/// Gateway settings.
pub struct Settings {
    /// Base of the server's internal `EventVersionConflict` retry backoff.
    pub retry_backoff: Duration,
    /// Gap between downstream stages.
    pub stage_gap: Duration,
    /// Bloom-filter TTL of the requestId pre-check.
    pub precheck_ttl: Duration,
    /// The demo page and package, when served.
    pub static_dirs: crate::static_files::StaticDirs,
    /// Which Wow the rules that changed after 8.10 follow (`--wow`).
    pub wow: crate::query::Wow,
    /// A gateway-only service (`--gateway-only`, Wow 9.3): its pre-check
    /// has no event store to confirm a hit with and lets it through, so a
    /// resent duplicate is accepted at SENT and refused at PROCESSED.
    pub gateway_only: bool,
    /// Queries need an authenticated scope (`--query-scope`, Wow 9's
    /// `IllegalAccessQueryScope`): one without an `Authorization` header is
    /// refused 403.
    pub query_scope: bool,
}

/// Shared state.
pub struct App {
    store: EventStore,
    faults: Faults,
    waiters: Mutex<HashMap<String, mpsc::UnboundedSender<Signal>>>,
    precheck: Mutex<HashMap<&'static str, (Instant, HashSet<String>)>>,
    id_prefix: String,
    /// Seed for a random fault mode posted without one (`--seed`).
    pub default_seed: u64,
    counter: AtomicU64,
    /// Messages being processed (held by a delay, appending, or running
    /// downstream stages), reported so tests wait for quiet instead of sleeping.
    processing: AtomicUsize,
    settings: Settings,
    /// Snapshots held back by a `downstream_delay`: (aggregate name, id) →
    /// the version the snapshot stays at until its SNAPSHOT stage runs.
    lagging: Mutex<HashMap<(&'static str, String), i64>>,
    /// Each aggregate's state as of a version, so a command folds only the
    /// streams appended since (as Wow's state aggregate cache and snapshots
    /// spare it replaying the whole history): (aggregate name, id) → (state,
    /// version). Streams never change once appended, so it is never stale,
    /// only behind.
    folded: Mutex<Folded>,
    /// Every request as it arrived, before routing or any fault: what a
    /// recording proxy in front of the gateway would have seen.
    arrivals: Mutex<Arrivals>,
}

/// The requests that arrived, oldest first (the newest [`ARRIVALS_KEPT`]).
#[derive(Default)]
struct Arrivals {
    /// The sequence number of the first entry kept.
    first: u64,
    entries: std::collections::VecDeque<Arrival>,
}

/// How many arrivals are kept: far more than a test sends, bounded for a soak.
const ARRIVALS_KEPT: usize = 200_000;

/// One request as it arrived.
struct Arrival {
    method: String,
    path: String,
    /// Its `Command-Request-Id` header.
    request_id: Option<String>,
    /// Its `Authorization` header: whose credentials it came with.
    authorization: Option<String>,
    /// An event query's body, as sent.
    body: Option<String>,
}

/// Counts one message as being processed while it lives.
struct Processing<'a>(&'a AtomicUsize);

impl<'a> Processing<'a> {
    fn start(count: &'a AtomicUsize) -> Self {
        count.fetch_add(1, Ordering::SeqCst);
        Processing(count)
    }
}

impl Drop for Processing<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

/// One command message in flight (from HTTP or from the saga).
#[derive(Clone)]
struct Message {
    id: String,
    request_id: String,
    agg: &'static AggregateType,
    def: &'static CommandDef,
    aggregate_id: String,
    tenant_id: String,
    owner_id: String,
    space_id: String,
    body: Value,
    expected_version: Option<i64>,
    header: BTreeMap<String, String>,
    /// The original HTTP command's id and requestId: signals go there.
    wait_id: String,
    wait_request_id: String,
    fault: Option<Active>,
}

fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or(0)
}

fn gateway_fn() -> FunctionInfo {
    FunctionInfo::new(FunctionKind::Command, "wow", "CommandGateway", "send")
}

fn error_info(code: ErrorCode, msg: &str, binding: Vec<BindingError>) -> ErrorInfo {
    ErrorInfo {
        error_code: code,
        error_msg: msg.to_owned(),
        binding_errors: binding,
        succeeded: Some(false),
    }
}

impl App {
    /// A new gateway over `store`.
    pub fn new(store: EventStore, settings: Settings, default_seed: u64) -> Arc<App> {
        Arc::new(App {
            store,
            faults: Faults::default(),
            waiters: Mutex::new(HashMap::new()),
            precheck: Mutex::new(HashMap::new()),
            id_prefix: format!("{:x}", now_ms()),
            default_seed,
            counter: AtomicU64::new(0),
            processing: AtomicUsize::new(0),
            settings,
            lagging: Mutex::new(HashMap::new()),
            folded: Mutex::new(HashMap::new()),
            arrivals: Mutex::default(),
        })
    }

    /// Records a request as it arrived.
    fn arrived(
        &self,
        method: &str,
        path: &str,
        request_id: Option<&str>,
        authorization: Option<&str>,
        body: Option<&[u8]>,
    ) {
        let mut log = self.arrivals.lock().unwrap();
        if log.entries.len() == ARRIVALS_KEPT {
            log.entries.pop_front();
            log.first += 1;
        }
        log.entries.push_back(Arrival {
            method: method.to_owned(),
            path: path.to_owned(),
            request_id: request_id.map(str::to_owned),
            authorization: authorization.map(str::to_owned),
            body: body.map(|b| String::from_utf8_lossy(b).into_owned()),
        });
    }

    /// `GET /__gateway/arrivals`: the requests from sequence number `since`
    /// on whose `Command-Request-Id` is `requestId` and whose path or
    /// query body contains `contains` (each filter when given), and the
    /// sequence number the next look starts from.
    fn arrivals_report(&self, query: &str) -> Value {
        let mut since = 0u64;
        let (mut request_id, mut contains) = (None, None);
        for pair in query.split('&').filter(|p| !p.is_empty()) {
            let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
            let v = routes::percent_decode(&v.replace('+', " "));
            match k {
                "since" => since = v.parse().unwrap_or(0),
                "requestId" => request_id = Some(v),
                "contains" => contains = Some(v),
                _ => {}
            }
        }
        let log = self.arrivals.lock().unwrap();
        let next = log.first + log.entries.len() as u64;
        let found: Vec<Value> = log
            .entries
            .iter()
            .enumerate()
            .map(|(i, a)| (log.first + i as u64, a))
            .filter(|(seq, _)| *seq >= since)
            .filter(|(_, a)| {
                request_id
                    .as_deref()
                    .is_none_or(|r| a.request_id.as_deref() == Some(r))
            })
            .filter(|(_, a)| {
                contains.as_deref().is_none_or(|c| {
                    a.path.contains(c) || a.body.as_deref().is_some_and(|b| b.contains(c))
                })
            })
            .map(|(seq, a)| {
                json!({"seq": seq, "method": a.method, "path": a.path, "requestId": a.request_id,
                "authorization": a.authorization, "body": a.body})
            })
            .collect();
        json!({"next": next, "arrivals": found})
    }

    fn next_id(&self) -> String {
        format!(
            "{}{:06x}",
            self.id_prefix,
            self.counter.fetch_add(1, Ordering::Relaxed)
        )
    }

    fn notify(&self, wait_id: &str, signal: Signal) {
        if let Some(tx) = self.waiters.lock().unwrap().get(wait_id) {
            let _ = tx.send(signal);
        }
    }

    fn result(
        &self,
        msg: &Message,
        id: String,
        stage: CommandStage,
        function: FunctionInfo,
        version: Option<i64>,
    ) -> CommandResult {
        CommandResult {
            id,
            wait_command_id: msg.wait_id.clone(),
            stage,
            context_name: msg.agg.context.to_owned(),
            aggregate_name: msg.agg.name.to_owned(),
            tenant_id: msg.tenant_id.clone(),
            aggregate_id: msg.aggregate_id.clone(),
            aggregate_version: version,
            request_id: msg.wait_request_id.clone(),
            command_id: msg.id.clone(),
            function,
            error_code: ErrorCode::Ok,
            error_msg: String::new(),
            binding_errors: vec![],
            result: JsonValue::empty_object(),
            signal_time: now_ms(),
            succeeded: Some(true),
        }
    }

    fn failed(mut r: CommandResult, code: ErrorCode, msg: &str) -> CommandResult {
        r.error_code = code;
        r.error_msg = msg.to_owned();
        r.succeeded = Some(false);
        r
    }
}
