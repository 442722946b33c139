//! The command gateway: routing, the send pipeline (pre-check, validation,
//! SENT), processing and append, downstream stages and the saga, and the
//! stage/chain waits of PROTOCOL §3.3–3.4.

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
}

/// Folded aggregates: (aggregate name, id) → (state, version).
type Folded = HashMap<(&'static str, String), (Value, i64)>;

/// Applies the events of `streams` (in version order) to `state`, which is
/// the aggregate at `version`; returns the version it is at after them.
fn apply(
    agg: &AggregateType,
    id: &str,
    state: &mut Value,
    version: i64,
    streams: &[DomainEventStream],
) -> i64 {
    for s in streams {
        for e in &s.body {
            let body = serde_json::to_value(&e.body).unwrap_or(Value::Null);
            domain::apply(agg.name, state, id, &e.name, &body);
        }
    }
    streams.last().map_or(version, |s| s.version)
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

/// The parsed target of a request path.
struct Target {
    agg: &'static AggregateType,
    tenant: Option<String>,
    owner: Option<String>,
    rest: Vec<String>,
}

fn percent_decode(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' && i + 2 < bytes.len() {
            let hex = std::str::from_utf8(&bytes[i + 1..i + 3]).ok();
            if let Some(b) = hex.and_then(|h| u8::from_str_radix(h, 16).ok()) {
                out.push(b);
                i += 3;
                continue;
            }
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

fn parse_target(path: &str) -> Option<Target> {
    let mut segs: Vec<String> = path
        .split('/')
        .filter(|s| !s.is_empty())
        .map(percent_decode)
        .collect();
    let mut tenant = None;
    let mut owner = None;
    if segs.first().map(String::as_str) == Some("tenant") && segs.len() > 1 {
        tenant = Some(segs.remove(1));
        segs.remove(0);
    }
    if segs.first().map(String::as_str) == Some("owner") && segs.len() > 1 {
        owner = Some(segs.remove(1));
        segs.remove(0);
    }
    let resource = segs.first()?.clone();
    let agg = domain::AGGREGATES.iter().find(|a| a.resource == resource)?;
    segs.remove(0);
    Some(Target {
        agg,
        tenant,
        owner,
        rest: segs,
    })
}

/// The whole request body; a body cut mid-upload reads as empty.
async fn read_body(req: Request<Incoming>) -> Bytes {
    req.into_body()
        .collect()
        .await
        .map(|b| b.to_bytes())
        .unwrap_or_default()
}

fn header<'a>(req: &'a Request<Incoming>, name: &str) -> Option<&'a str> {
    req.headers()
        .get(name)
        .and_then(|v| v.to_str().ok())
        .map(str::trim)
        .filter(|v| !v.is_empty())
}

/// What the caller waits for.
#[derive(Clone)]
struct Plan {
    stage: CommandStage,
    context: String,
    processor: Option<String>,
    function: Option<String>,
    tail: Option<(CommandStage, String, Option<String>, Option<String>)>,
}

fn function_matches(
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
struct Wait {
    plan: Plan,
    main_id: String,
    processed_seen: bool,
    candidate: Option<CommandResult>,
    saga_main: Option<(CommandResult, Vec<String>)>,
    tails: HashMap<String, CommandResult>,
    tail_failed: Option<CommandResult>,
    last_tail: Option<CommandResult>,
    done: Option<CommandResult>,
}

impl Wait {
    fn new(plan: Plan, main_id: String) -> Wait {
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
    fn on(&mut self, sig: &Signal) -> bool {
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

    fn check_complete(&mut self) {
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
        })
    }

    fn next_id(&self) -> String {
        format!(
            "{}{:06x}",
            self.id_prefix,
            self.counter.fetch_add(1, Ordering::Relaxed)
        )
    }

    /// Serves one request.
    pub async fn serve(self: Arc<Self>, req: Request<Incoming>) -> Answer {
        let preflight = header(&req, "Access-Control-Request-Headers").map(str::to_owned);
        if req.method() == Method::OPTIONS {
            let resp = Response::builder()
                .status(204)
                .header(
                    "Access-Control-Allow-Methods",
                    "GET, POST, PUT, PATCH, DELETE, OPTIONS",
                )
                .header("Access-Control-Max-Age", "600")
                .body(http::full(""))
                .expect("valid");
            return Ok(http::cors(resp, preflight.as_deref()));
        }
        let resp = self.route(req).await?;
        Ok(http::cors(resp, None))
    }

    async fn route(self: Arc<Self>, req: Request<Incoming>) -> Answer {
        let path = req.uri().path().to_owned();
        if let Some(control) = path.strip_prefix("/__gateway/") {
            return Ok(self.control(control, req).await);
        }
        if req.method() == Method::GET {
            if path == crate::openapi::PATH {
                return Ok(crate::http::json(200, "Ok", &crate::openapi::document()));
            }
            if let Some(file) = self.settings.static_dirs.serve(&path) {
                return Ok(file);
            }
        }
        let Some(target) = parse_target(&path) else {
            return Ok(not_found(&path));
        };
        let rest: Vec<&str> = target.rest.iter().map(String::as_str).collect();
        let method = req.method().clone();
        match (&method, rest.as_slice()) {
            (&Method::POST, ["event", op @ ("list" | "count" | "paged")]) => {
                let op = op.to_string();
                Ok(self.event_query(&target, &op, req).await)
            }
            (&Method::GET, [id, "event", head, tail]) => {
                let (id, head, tail) = (id.to_string(), head.to_string(), tail.to_string());
                Ok(self.load_range(&target, &id, &head, &tail, &req))
            }
            (&Method::GET, [id, "state"]) => Ok(self.state(&target, id)),
            (&Method::GET, [id, "snapshot"]) => Ok(self.snapshot(&target, id)),
            (&Method::GET, [what @ ("state" | "snapshot")])
                if target.agg.owner == Owner::AggregateId && target.owner.is_some() =>
            {
                let id = target.owner.clone().unwrap_or_default();
                Ok(if *what == "state" {
                    self.state(&target, &id)
                } else {
                    self.snapshot(&target, &id)
                })
            }
            _ => self.command(target, req).await,
        }
    }

    async fn control(&self, what: &str, req: Request<Incoming>) -> Response<Body> {
        match (req.method().clone(), what) {
            (Method::GET, "health") => http::json(200, "Ok", &json!({"status": "UP"})),
            (Method::GET, "faults") => {
                let mut report = self.faults.report();
                report["processing"] = json!(self.processing.load(Ordering::SeqCst));
                http::json(200, "Ok", &report)
            }
            (Method::DELETE, "faults") => {
                self.faults.clear();
                http::json(200, "Ok", &json!({}))
            }
            (Method::POST, "faults") => {
                let bytes = read_body(req).await;
                #[derive(serde::Deserialize)]
                struct Body {
                    #[serde(default)]
                    rules: Vec<crate::faults::Rule>,
                    #[serde(default)]
                    random: Option<crate::faults::RandomMode>,
                }
                match serde_json::from_slice::<Body>(&bytes) {
                    Ok(mut b) => {
                        if let Some(r) = b.random.as_mut() {
                            r.seed = r.seed.or(Some(self.default_seed));
                        }
                        self.faults.add(b.rules, b.random);
                        http::json(200, "Ok", &self.faults.report())
                    }
                    Err(e) => http::json(
                        400,
                        "IllegalArgument",
                        &error_info(ErrorCode::IllegalArgument, &e.to_string(), vec![]),
                    ),
                }
            }
            _ => not_found(what),
        }
    }

    // ---------------------------------------------------------------- queries

    fn query_fault(&self, req_method: &str, path: &str) -> bool {
        let s = Subject {
            method: req_method,
            path,
            aggregate_id: None,
            request_id: None,
        };
        self.faults
            .pick(&s, &[FaultKind::QueryUnavailable])
            .is_some()
    }

    async fn event_query(
        &self,
        target: &Target,
        op: &str,
        req: Request<Incoming>,
    ) -> Response<Body> {
        let path = req.uri().path().to_owned();
        if self.query_fault("POST", &path) {
            return http::unavailable();
        }
        let tenant_header = header(&req, names::TENANT_ID).map(str::to_owned);
        let owner_header = header(&req, names::OWNER_ID).map(str::to_owned);
        let bytes = read_body(req).await;
        let body: Value = match serde_json::from_slice(&bytes) {
            Ok(v) => v,
            Err(e) => return illegal(&format!("Invalid query body: {e}")),
        };
        let condition = if op == "count" {
            body.clone()
        } else {
            body["condition"].clone()
        };
        if let Err(why) = query::guard(&condition) {
            return illegal(&why);
        }
        let (limit, page) = match op {
            "list" => {
                let limit = body["limit"].as_i64().unwrap_or(0);
                if !(1..=1000).contains(&limit) {
                    return illegal("Query limit must be between 1 and 1000.");
                }
                (limit as usize, None)
            }
            "paged" => {
                let index = body["pagination"]["index"].as_i64().unwrap_or(1);
                let size = body["pagination"]["size"].as_i64().unwrap_or(10);
                if index < 1 || !(1..=100).contains(&size) || index * size > 10_000 {
                    return illegal("Invalid pagination.");
                }
                if query::matches_all(&condition) {
                    return illegal("Paged queries must not match everything.");
                }
                (size as usize, Some(index as usize))
            }
            _ => {
                if query::matches_all(&condition) {
                    return illegal("Count queries must not match everything.");
                }
                (usize::MAX, None)
            }
        };
        let tenant = target
            .agg
            .static_tenant
            .map(str::to_owned)
            .or(target.tenant.clone())
            .or(tenant_header);
        let owner = target.owner.clone().or(owner_header);
        let ids = query::pinned_ids(&condition);
        let matched: Vec<Value> = self
            .store
            .scan(target.agg.name, ids.as_deref())
            .into_iter()
            .map(|s| serde_json::to_value(s).expect("serialisable"))
            .filter(|doc| tenant.as_deref().is_none_or(|t| doc["tenantId"] == t))
            .filter(|doc| owner.as_deref().is_none_or(|o| doc["ownerId"] == o))
            .filter(|doc| query::eval(&condition, doc))
            .collect();
        match (op, page) {
            ("count", _) => http::json(200, "Ok", &matched.len()),
            ("paged", Some(index)) => {
                let total = matched.len();
                let list: Vec<&Value> = matched
                    .iter()
                    .skip((index - 1) * limit)
                    .take(limit)
                    .collect();
                http::json(200, "Ok", &json!({"total": total, "list": list}))
            }
            _ => http::json(
                200,
                "Ok",
                &matched.into_iter().take(limit).collect::<Vec<_>>(),
            ),
        }
    }

    fn load_range(
        &self,
        target: &Target,
        id: &str,
        head: &str,
        tail: &str,
        req: &Request<Incoming>,
    ) -> Response<Body> {
        if self.query_fault("GET", req.uri().path()) {
            return http::unavailable();
        }
        let (Ok(head), Ok(tail)) = (head.parse::<i64>(), tail.parse::<i64>()) else {
            return illegal("Versions must be integers.");
        };
        if head < 1 || tail < head || tail - head + 1 > 1000 {
            return illegal("Query limit must be between 1 and 1000.");
        }
        let streams: Vec<DomainEventStream> = self
            .store
            .load(target.agg.name, id)
            .into_iter()
            .filter(|s| (head..=tail).contains(&s.version))
            .collect();
        http::json(200, "Ok", &streams)
    }

    /// The aggregate's state from its history, up to version `upto` when given.
    fn fold(
        &self,
        agg: &AggregateType,
        id: &str,
        upto: Option<i64>,
    ) -> (Value, i64, Vec<DomainEventStream>) {
        let mut streams = self.store.load(agg.name, id);
        streams.retain(|s| upto.is_none_or(|v| s.version <= v));
        let mut state = Value::Null;
        let version = apply(agg, id, &mut state, 0, &streams);
        (state, version, streams)
    }

    /// The aggregate's latest state and version: the cached fold, moved on
    /// by the streams appended since.
    fn latest(&self, agg: &AggregateType, id: &str) -> (Value, i64) {
        let key = (agg.name, id.to_owned());
        let cached = self.folded.lock().unwrap().get(&key).cloned();
        let (mut state, version) = cached.unwrap_or((Value::Null, 0));
        let version = apply(
            agg,
            id,
            &mut state,
            version,
            &self.store.load_after(agg.name, id, version),
        );
        let mut folded = self.folded.lock().unwrap();
        if folded.get(&key).is_none_or(|(_, at)| *at < version) {
            folded.insert(key, (state.clone(), version));
        }
        (state, version)
    }

    fn state(&self, target: &Target, id: &str) -> Response<Body> {
        let (state, version) = self.latest(target.agg, id);
        if version == 0 || domain::is_deleted(&state) {
            return not_found_resource();
        }
        http::json(200, "Ok", &state)
    }

    /// `GET …/{id}/snapshot`: a MaterializedSnapshot, written as the
    /// SNAPSHOT stage would have (here folded on read, from the same history).
    fn snapshot(&self, target: &Target, id: &str) -> Response<Body> {
        let lag = self
            .lagging
            .lock()
            .unwrap()
            .get(&(target.agg.name, id.to_owned()))
            .copied();
        let (state, version, streams) = self.fold(target.agg, id, lag);
        let (Some(first), Some(last)) = (streams.first(), streams.last()) else {
            return not_found_resource();
        };
        let operator = |s: &DomainEventStream| {
            s.header
                .get("command_operator")
                .cloned()
                .unwrap_or_default()
        };
        let snapshot = json!({
            "contextName": target.agg.context, "aggregateName": target.agg.name,
            "tenantId": last.tenant_id, "ownerId": last.owner_id, "spaceId": last.space_id,
            "aggregateId": id, "version": version, "eventId": last.body.last().map(|e| e.id.clone()),
            "firstOperator": operator(first), "operator": operator(last),
            "firstEventTime": first.create_time, "eventTime": last.create_time,
            "snapshotTime": now_ms(), "deleted": false, "tags": {}, "state": state,
        });
        http::json(200, "Ok", &snapshot)
    }

    // --------------------------------------------------------------- commands

    async fn command(self: Arc<Self>, target: Target, req: Request<Incoming>) -> Answer {
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
            ],
        );
        match fault.as_ref().map(|f| f.kind) {
            Some(FaultKind::DropRequest) => return Err(DropConnection),
            Some(FaultKind::Unavailable) => return Ok(http::unavailable()),
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
}

fn not_found(path: &str) -> Response<Body> {
    http::json(
        404,
        "NotFound",
        &error_info(
            ErrorCode::NotFound,
            &format!("No route for {path}."),
            vec![],
        ),
    )
}

/// The server's answer for a missing aggregate.
fn not_found_resource() -> Response<Body> {
    let info = error_info(ErrorCode::NotFound, "Not found resource!", vec![]);
    http::json(404, "NotFound", &info)
}

fn illegal(msg: &str) -> Response<Body> {
    http::json(
        400,
        "IllegalArgument",
        &error_info(ErrorCode::IllegalArgument, msg, vec![]),
    )
}

impl App {
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

    /// What a confused proxy or cache hands back: another request's success
    /// (its own requestId and aggregateId), for a command that is never
    /// processed.
    fn misrouted_answer(&self, msg: &Message, sse: bool) -> Response<Body> {
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

    fn sent_signal(&self, msg: &Message) -> CommandResult {
        self.result(
            msg,
            self.next_id(),
            CommandStage::Sent,
            gateway_fn(),
            msg.expected_version,
        )
    }

    /// The gateway's checks before the bus: the requestId pre-check (a
    /// filter with a TTL, hits confirmed against the store), then validation.
    fn check(&self, msg: &Message) -> Option<CommandResult> {
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
        let mut errors: Vec<BindingError> = domain::validate(msg.def, &msg.body)
            .into_iter()
            .map(|(name, msg)| BindingError { name, msg })
            .collect();
        if msg
            .fault
            .as_ref()
            .is_some_and(|f| f.kind == FaultKind::RejectBeforeSend)
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

    /// The aggregate processor: load, check version, handle, append (one
    /// INSERT); the server's internal retry on `EventVersionConflict`.
    /// Boxed so processing can be spawned from inside processing (the saga,
    /// a second delivery).
    fn process(
        self: Arc<Self>,
        msg: Message,
        second_delivery: bool,
    ) -> std::pin::Pin<Box<dyn std::future::Future<Output = ()> + Send>> {
        Box::pin(self.process_inner(msg, second_delivery))
    }

    async fn process_inner(self: Arc<Self>, msg: Message, second_delivery: bool) {
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

    /// SNAPSHOT, PROJECTED, EVENT_HANDLED, and the saga (SAGA_HANDLED after
    /// it has sent its commands), each a little after the append.
    async fn downstream(
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

    /// Collects signals until the wait completes or its deadline passes, and
    /// answers in JSON (returned) or SSE (written to `body`).
    async fn wait_loop(
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
            (Some(r), None) => {
                let status = r.error_code.http_status();
                if kind == Some(FaultKind::CutStreamAfter) {
                    return Err(DropConnection);
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
