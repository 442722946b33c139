//! The query side: event list/count/paged queries, a version range of the
//! event stream, the state and the snapshot reads (PROTOCOL §5).

use super::*;

impl App {
    pub(super) fn query_fault(&self, req_method: &str, path: &str) -> bool {
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

    /// `query_hang`: holds a query without an answer (ten minutes, far past
    /// any client's deadline), as a black-holed connection would.
    pub(super) async fn hold_if_hung(&self, req_method: &str, path: &str) {
        let s = Subject {
            method: req_method,
            path,
            aggregate_id: None,
            request_id: None,
        };
        if self.faults.pick(&s, &[FaultKind::QueryHang]).is_some() {
            tokio::time::sleep(std::time::Duration::from_secs(600)).await;
        }
    }

    pub(super) async fn event_query(
        &self,
        target: &Target,
        op: &str,
        req: Request<Incoming>,
    ) -> Response<Body> {
        let path = req.uri().path().to_owned();
        let tenant_header = header(&req, names::TENANT_ID).map(str::to_owned);
        let owner_header = header(&req, names::OWNER_ID).map(str::to_owned);
        let authorization = header(&req, "authorization").map(str::to_owned);
        let bytes = read_body(req).await;
        self.arrived("POST", &path, None, authorization.as_deref(), Some(&bytes));
        self.hold_if_hung("POST", &path).await;
        if self.query_fault("POST", &path) {
            return http::unavailable();
        }
        if self.settings.query_scope && authorization.is_none() {
            let answer = json!({
                "errorCode": "IllegalAccessQueryScope", "succeeded": false,
                "errorMsg": "The query requires an authenticated query scope.",
            });
            return http::json(403, "IllegalAccessQueryScope", &answer);
        }
        let body: Value = match serde_json::from_slice(&bytes) {
            Ok(v) => v,
            Err(e) => return illegal(&format!("Invalid query body: {e}")),
        };
        let wow = self.settings.wow;
        let condition = match query::tree_of(&body, op == "count", wow) {
            Ok(tree) => tree,
            Err(e) => {
                let answer = json!({
                    "errorCode": "QuerySchemaValidation", "errorMsg": e.msg, "succeeded": false,
                    "bindingErrors": [{ "name": e.name, "msg": e.msg, "code": e.code }],
                });
                return http::json(400, "QuerySchemaValidation", &answer);
            }
        };
        if let Err(why) = query::guard(&condition, wow) {
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
        // A count reads no fields; a list and a page are projected as Wow's store projects them.
        let matched: Vec<Value> = if op == "count" {
            matched
        } else {
            match matched
                .into_iter()
                .map(|doc| query::project(doc, &body["projection"]))
                .collect::<Result<_, _>>()
            {
                Ok(projected) => projected,
                // Documents.replacePrimaryKeyToId: checkNotNull(getString("_id")).
                Err(query::ProjectionError::NoId) => {
                    return http::json(
                        400,
                        "IllegalState",
                        &error_info(ErrorCode::IllegalState, "Required value was null.", vec![]),
                    )
                }
                // Mongo refuses the projection (a MongoCommandException): no converter of Wow's takes it.
                Err(query::ProjectionError::Refused) => return http::internal_error(),
            }
        };
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

    pub(super) fn load_range(
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

    pub(super) fn state(&self, target: &Target, id: &str) -> Response<Body> {
        let (state, version) = self.latest(target.agg, id);
        if version == 0 || domain::is_deleted(&state) {
            return not_found_resource();
        }
        http::json(200, "Ok", &state)
    }

    /// `GET …/{id}/snapshot`: a MaterializedSnapshot, written as the
    /// SNAPSHOT stage would have (here folded on read, from the same history).
    pub(super) fn snapshot(&self, target: &Target, id: &str) -> Response<Body> {
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
}
