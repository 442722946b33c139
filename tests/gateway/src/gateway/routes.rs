//! The HTTP gateway: CORS, routing a request to a query, a state read or a
//! command, and the fault control of `/__gateway/`.

use super::*;

/// The parsed target of a request path.
pub(super) struct Target {
    pub(super) agg: &'static AggregateType,
    pub(super) tenant: Option<String>,
    pub(super) owner: Option<String>,
    pub(super) rest: Vec<String>,
}

pub(super) fn percent_decode(s: &str) -> String {
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

pub(super) fn parse_target(path: &str) -> Option<Target> {
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
pub(super) async fn read_body(req: Request<Incoming>) -> Bytes {
    req.into_body()
        .collect()
        .await
        .map(|b| b.to_bytes())
        .unwrap_or_default()
}

pub(super) fn header<'a>(req: &'a Request<Incoming>, name: &str) -> Option<&'a str> {
    req.headers()
        .get(name)
        .and_then(|v| v.to_str().ok())
        .map(str::trim)
        .filter(|v| !v.is_empty())
}

impl App {
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
        let path = req.uri().path();
        // An event query is recorded with its body, once it is read.
        let event_query = req.method() == Method::POST
            && ["/event/list", "/event/count", "/event/paged"]
                .iter()
                .any(|q| path.ends_with(q));
        if !path.starts_with("/__gateway/") && !event_query {
            self.arrived(
                req.method().as_str(),
                path,
                header(&req, names::REQUEST_ID),
                header(&req, "authorization"),
                None,
            );
        }
        let resp = self.route(req).await?;
        Ok(http::cors(resp, None))
    }

    pub(super) async fn route(self: Arc<Self>, req: Request<Incoming>) -> Answer {
        let path = req.uri().path().to_owned();
        if let Some(control) = path.strip_prefix("/__gateway/") {
            return Ok(self.control(control, req).await);
        }
        if req.method() == Method::GET {
            if path == crate::openapi::PATH {
                return Ok(crate::http::json(
                    200,
                    "Ok",
                    &crate::openapi::document(self.settings.wow.version()),
                ));
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
            (&Method::GET, [id, "snapshot"]) => {
                self.hold_if_hung("GET", &path).await;
                Ok(self.snapshot(&target, id))
            }
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

    pub(super) async fn control(&self, what: &str, req: Request<Incoming>) -> Response<Body> {
        match (req.method().clone(), what) {
            (Method::GET, "health") => http::json(200, "Ok", &json!({"status": "UP"})),
            (Method::GET, "arrivals") => {
                let query = req.uri().query().unwrap_or("");
                http::json(200, "Ok", &self.arrivals_report(query))
            }
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
}

pub(super) fn not_found(path: &str) -> Response<Body> {
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
pub(super) fn not_found_resource() -> Response<Body> {
    let info = error_info(ErrorCode::NotFound, "Not found resource!", vec![]);
    http::json(404, "NotFound", &info)
}

pub(super) fn illegal(msg: &str) -> Response<Body> {
    http::json(
        400,
        "IllegalArgument",
        &error_info(ErrorCode::IllegalArgument, msg, vec![]),
    )
}
