//! Event-stream queries: the Condition DSL evaluated over streams, with the
//! server's HTTP query guard (PROTOCOL §5.1, §5.3).

use serde_json::Value;

/// A refusal: 400 `IllegalArgument`.
pub type Refusal = String;

/// Which Wow a rule that changed after 8.10 follows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Wow {
    /// 8.10.10: a query body's tree is `condition` (a count's body is a
    /// bare condition); a field it does not know, such as 9's `filter` or
    /// `op`, is ignored, so an operator left out is `ALL`. Reserved
    /// `Command-Header-` keys are copied.
    EightTen,
    /// 9.x (the sources of 9.x, `QueryBodyExtractor`, `FilterExpression`,
    /// `QueryErrorCodes`, `HttpQueryGuardFilter`, `ReservedCommandHeaderKeys`):
    /// a body's tree is `filter` (`op`, `operands`, `field`, `value`,
    /// `values`; strict) or the deprecated `condition`, never both; a
    /// guard of 128 nodes; reserved `Command-Header-` keys refused.
    Nine,
    /// 9.x with the deprecated `condition` shape removed, as 9.x's
    /// documentation plans for 10.0 (no 10.0 is released): a body's tree is
    /// `filter` only; a `condition` (a count's bare `operator`) is refused.
    Ten,
}

impl Wow {
    /// The version a gateway in this mode states (its OpenAPI `info`):
    /// the newest release each follows, and 10.0.0 for the plan.
    pub const fn version(self) -> &'static str {
        match self {
            Wow::EightTen => "8.10.10",
            Wow::Nine => "9.1.5",
            Wow::Ten => "10.0.0",
        }
    }
}

/// A query body that cannot be read: 400 `QuerySchemaValidation`, with the
/// JSON path and the machine-readable code Wow 9 reports (`BindingError`).
#[derive(Debug, PartialEq, Eq)]
pub struct SchemaError {
    /// The JSON path, or `body`.
    pub name: String,
    /// Wow's `QueryErrorCodes`: `UNKNOWN_PROPERTY`, `UNKNOWN_TYPE`, `INVALID_VALUE`, `INVALID_REQUEST`.
    pub code: &'static str,
    /// What is wrong.
    pub msg: String,
}

fn schema_error(name: &str, code: &'static str, msg: String) -> SchemaError {
    SchemaError {
        name: name.to_owned(),
        code,
        msg,
    }
}

/// The condition tree a query body asks for, read as `wow` reads it: a
/// count's body is the tree itself, a list's or page's is under
/// `condition` or (Wow 9) `filter`. Wow 9's filter is translated into the
/// condition it means, so one evaluator serves both.
pub fn tree_of(body: &Value, count: bool, wow: Wow) -> Result<Value, SchemaError> {
    if wow == Wow::EightTen {
        return Ok(if count {
            body.clone()
        } else {
            body["condition"].clone()
        });
    }
    if wow == Wow::Ten {
        return match (count, body.get("condition")) {
            (true, _) => condition_of_filter(body, "body"),
            (false, Some(_)) => Err(schema_error(
                "condition",
                "UNKNOWN_PROPERTY",
                "Unknown property [condition]: use filter.".into(),
            )),
            (false, None) => match body.get("filter") {
                Some(filter) => condition_of_filter(filter, "filter"),
                None => Ok(Value::Null),
            },
        };
    }
    if count {
        if body.get("op").is_some() && body.get("operator").is_some() {
            return Err(schema_error(
                "body",
                "INVALID_REQUEST",
                "op and operator cannot be used together.".into(),
            ));
        }
        return if body.get("op").is_some() {
            condition_of_filter(body, "body")
        } else {
            Ok(body.clone())
        };
    }
    match (body.get("filter"), body.get("condition")) {
        (Some(_), Some(_)) => Err(schema_error(
            "body",
            "INVALID_REQUEST",
            "filter and condition cannot be used together.".into(),
        )),
        (Some(filter), None) => condition_of_filter(filter, "filter"),
        _ => Ok(body["condition"].clone()),
    }
}

/// Wow 9's `FilterExpression` at `path`, read strictly (an unknown
/// operator or property is refused), as the legacy condition it means.
fn condition_of_filter(f: &Value, path: &str) -> Result<Value, SchemaError> {
    let object = f
        .as_object()
        .ok_or_else(|| schema_error(path, "INVALID_VALUE", "A filter must be an object.".into()))?;
    let op = f["op"].as_str().ok_or_else(|| {
        schema_error(
            path,
            "INVALID_REQUEST",
            "Nested filter expression must use op.".into(),
        )
    })?;
    // The properties each operator the gateway evaluates takes.
    let (operator, properties): (&str, &[&str]) = match op {
        "AND" | "OR" => (op, &["operands"]),
        "MATCH_ALL" => ("ALL", &[]),
        "ID" | "AGGREGATE_ID" | "TENANT_ID" | "OWNER_ID" | "SPACE_ID" => (op, &["value"]),
        "IDS" | "AGGREGATE_IDS" => (op, &["values"]),
        "EQ" | "GT" | "GTE" | "LT" | "LTE" => (op, &["field", "value"]),
        "IN" => (op, &["field", "values"]),
        _ => {
            return Err(schema_error(
                path,
                "UNKNOWN_TYPE",
                format!("Unknown filter operator [{op}]."),
            ))
        }
    };
    if let Some(key) = object
        .keys()
        .find(|k| *k != "op" && !properties.contains(&k.as_str()))
    {
        return Err(schema_error(
            &format!("{path}.{key}"),
            "UNKNOWN_PROPERTY",
            format!("Unknown property [{key}] of filter {op}."),
        ));
    }
    let mut condition = serde_json::Map::new();
    condition.insert("operator".into(), operator.into());
    if let Some(field) = f.get("field") {
        condition.insert("field".into(), field.clone());
    }
    if let Some(value) = f.get("value").or(f.get("values")) {
        condition.insert("value".into(), value.clone());
    }
    if let Some(operands) = f.get("operands") {
        let operands = operands
            .as_array()
            .filter(|a| !a.is_empty())
            .ok_or_else(|| {
                schema_error(
                    path,
                    "INVALID_VALUE",
                    format!("{op} operands cannot be empty."),
                )
            })?;
        let children = operands
            .iter()
            .enumerate()
            .map(|(i, o)| condition_of_filter(o, &format!("{path}.operands[{i}]")))
            .collect::<Result<Vec<_>, _>>()?;
        condition.insert("children".into(), children.into());
    }
    Ok(Value::Object(condition))
}

const EXPENSIVE: &[&str] = &[
    "NE",
    "NOT_IN",
    "NOR",
    "NULL",
    "NOT_NULL",
    "CONTAINS",
    "ENDS_WITH",
    "RAW",
];
const SUPPORTED: &[&str] = &[
    "AND",
    "OR",
    "ALL",
    "ID",
    "IDS",
    "AGGREGATE_ID",
    "AGGREGATE_IDS",
    "TENANT_ID",
    "OWNER_ID",
    "SPACE_ID",
    "EQ",
    "IN",
    "GT",
    "GTE",
    "LT",
    "LTE",
];

fn count_nodes(c: &Value) -> usize {
    1 + c["children"]
        .as_array()
        .map_or(0, |ch| ch.iter().map(count_nodes).sum())
}

/// Applies the guard to a condition tree: 64 nodes in 8.10, 128 since 9.
pub fn guard(c: &Value, wow: Wow) -> Result<(), Refusal> {
    let most = if wow == Wow::EightTen { 64 } else { 128 };
    if count_nodes(c) > most {
        return Err(format!("Condition has more than {most} nodes."));
    }
    check(c)
}

fn check(c: &Value) -> Result<(), Refusal> {
    let op = c["operator"].as_str().unwrap_or("ALL");
    if EXPENSIVE.contains(&op) {
        return Err(format!("Operator {op} is not allowed."));
    }
    if !SUPPORTED.contains(&op) {
        return Err(format!("Unsupported operator {op}."));
    }
    if matches!(op, "IN" | "IDS" | "AGGREGATE_IDS")
        && c["value"].as_array().is_none_or(|a| a.len() > 1000)
    {
        return Err(format!("{op} needs an array of at most 1000 values."));
    }
    if matches!(op, "AND" | "OR") {
        let children = c["children"].as_array().filter(|a| !a.is_empty());
        let children = children.ok_or_else(|| format!("{op} needs children."))?;
        for child in children {
            check(child)?;
        }
    }
    Ok(())
}

/// Whether a condition matches nothing narrower than "everything".
pub fn matches_all(c: &Value) -> bool {
    match c["operator"].as_str().unwrap_or("ALL") {
        "ALL" => true,
        "AND" => c["children"]
            .as_array()
            .is_some_and(|ch| ch.iter().all(matches_all)),
        _ => false,
    }
}

/// The aggregate ids a condition pins, when its top level does (to narrow the scan).
pub fn pinned_ids(c: &Value) -> Option<Vec<String>> {
    match c["operator"].as_str()? {
        "AGGREGATE_ID" => Some(vec![c["value"].as_str()?.to_owned()]),
        "AGGREGATE_IDS" => c["value"]
            .as_array()?
            .iter()
            .map(|v| v.as_str().map(str::to_owned))
            .collect(),
        "AND" => c["children"].as_array()?.iter().find_map(pinned_ids),
        _ => None,
    }
}

/// Why a projection cannot be applied, as Wow's Mongo event store fails it.
#[derive(Debug, PartialEq, Eq)]
pub enum ProjectionError {
    /// `id` excluded: the document comes back without Mongo's `_id`, which
    /// Wow turns back into `id` with `checkNotNull` (an IllegalState).
    NoId,
    /// Mongo refuses the projection itself (a server error, no ErrorInfo
    /// of Wow's): an inclusion with an exclusion other than `id`, or a
    /// field path with an empty or `$`-led segment.
    Refused,
}

/// A query's `projection` applied to one result, as Wow applies it: passed
/// to Mongo (MongoProjectionConverter: `Projections.include`/`exclude` of
/// the field paths, `id` being Mongo's `_id`). With `include`, the
/// document's `id` and the paths it names (a dotted path keeps that
/// sub-field only, in each element of an array on the way); with
/// `exclude`, everything but the paths it names. `id` is always there
/// unless excluded. A client asks for the few fields it reads, so no
/// event bodies travel.
pub fn project(doc: Value, projection: &Value) -> Result<Value, ProjectionError> {
    let names = |k: &str| -> Vec<String> {
        projection[k]
            .as_array()
            .map(|a| {
                a.iter()
                    .filter_map(Value::as_str)
                    .map(str::to_owned)
                    .collect()
            })
            .unwrap_or_default()
    };
    let (include, exclude) = (names("include"), names("exclude"));
    let bad_path = |p: &String| {
        p.split('.')
            .any(|seg| seg.is_empty() || seg.starts_with('$'))
    };
    if include.iter().chain(&exclude).any(bad_path)
        || (!include.is_empty() && exclude.iter().any(|e| e != "id"))
    {
        return Err(ProjectionError::Refused);
    }
    if exclude.iter().any(|e| e == "id") {
        return Err(ProjectionError::NoId);
    }
    if !include.is_empty() {
        let mut kept = Value::Object(serde_json::Map::new());
        for path in include.iter().map(String::as_str).chain(["id"]) {
            let path: Vec<&str> = path.split('.').collect();
            if let Some(picked) = pick(&doc, &path) {
                merge(&mut kept, picked);
            }
        }
        return Ok(kept);
    }
    let mut doc = doc;
    for path in &exclude {
        drop_path(&mut doc, &path.split('.').collect::<Vec<_>>());
    }
    Ok(doc)
}

/// The part of `v` at `path`, in `v`'s shape (objects around it, arrays
/// keeping the elements that have it), or `None` where it has none.
fn pick(v: &Value, path: &[&str]) -> Option<Value> {
    let Some((first, rest)) = path.split_first() else {
        return Some(v.clone());
    };
    match v {
        Value::Object(fields) => {
            let inner = pick(fields.get(*first)?, rest)?;
            Some(Value::Object(
                [((*first).to_owned(), inner)].into_iter().collect(),
            ))
        }
        Value::Array(items) => Some(Value::Array(
            items
                .iter()
                .filter(|i| i.is_object())
                .filter_map(|i| pick(i, path))
                .collect(),
        )),
        _ => None,
    }
}

/// Merges `add` into `into`: objects key by key, arrays element by element.
fn merge(into: &mut Value, add: Value) {
    match (into, add) {
        (Value::Object(a), Value::Object(b)) => {
            for (k, v) in b {
                match a.get_mut(&k) {
                    Some(existing) => merge(existing, v),
                    None => {
                        a.insert(k, v);
                    }
                }
            }
        }
        (Value::Array(a), Value::Array(b)) if a.len() == b.len() => {
            for (x, y) in a.iter_mut().zip(b) {
                merge(x, y);
            }
        }
        (into, add) => *into = add,
    }
}

/// Removes `path` from `v` (in each element of an array on the way).
fn drop_path(v: &mut Value, path: &[&str]) {
    let Some((first, rest)) = path.split_first() else {
        return;
    };
    match v {
        Value::Object(fields) if rest.is_empty() => {
            fields.remove(*first);
        }
        Value::Object(fields) => {
            if let Some(inner) = fields.get_mut(*first) {
                drop_path(inner, rest);
            }
        }
        Value::Array(items) => items.iter_mut().for_each(|i| drop_path(i, path)),
        _ => {}
    }
}

/// The values at a dotted field path; arrays on the way fan out (Mongo-like).
fn values<'a>(doc: &'a Value, path: &str) -> Vec<&'a Value> {
    let mut current = vec![doc];
    for key in path.split('.') {
        let mut next = Vec::new();
        for v in current {
            match v {
                Value::Array(items) => next.extend(items.iter().filter_map(|i| i.get(key))),
                other => next.extend(other.get(key)),
            }
        }
        current = next;
    }
    current
        .into_iter()
        .flat_map(|v| match v {
            Value::Array(items) => items.iter().collect::<Vec<_>>(),
            other => vec![other],
        })
        .collect()
}

fn cmp(a: &Value, b: &Value) -> Option<std::cmp::Ordering> {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => x.as_f64()?.partial_cmp(&y.as_f64()?),
        (Value::String(x), Value::String(y)) => Some(x.cmp(y)),
        _ => None,
    }
}

/// Evaluates a (guarded) condition against one stream's JSON.
pub fn eval(c: &Value, doc: &Value) -> bool {
    let op = c["operator"].as_str().unwrap_or("ALL");
    let value = &c["value"];
    let field = c["field"].as_str().unwrap_or("");
    let any = |path: &str, f: &dyn Fn(&Value) -> bool| values(doc, path).into_iter().any(f);
    match op {
        "ALL" => true,
        "AND" => c["children"]
            .as_array()
            .is_some_and(|ch| ch.iter().all(|x| eval(x, doc))),
        "OR" => c["children"]
            .as_array()
            .is_some_and(|ch| ch.iter().any(|x| eval(x, doc))),
        "ID" => doc["id"] == *value,
        "IDS" => value.as_array().is_some_and(|a| a.contains(&doc["id"])),
        "AGGREGATE_ID" => doc["aggregateId"] == *value,
        "AGGREGATE_IDS" => value
            .as_array()
            .is_some_and(|a| a.contains(&doc["aggregateId"])),
        "TENANT_ID" => doc["tenantId"] == *value,
        "OWNER_ID" => doc["ownerId"] == *value,
        "SPACE_ID" => doc["spaceId"] == *value,
        "EQ" => any(field, &|v| v == value),
        "IN" => any(field, &|v| value.as_array().is_some_and(|a| a.contains(v))),
        "GT" => any(field, &|v| {
            cmp(v, value) == Some(std::cmp::Ordering::Greater)
        }),
        "GTE" => any(field, &|v| cmp(v, value).is_some_and(|o| o.is_ge())),
        "LT" => any(field, &|v| cmp(v, value) == Some(std::cmp::Ordering::Less)),
        "LTE" => any(field, &|v| cmp(v, value).is_some_and(|o| o.is_le())),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn doc() -> Value {
        json!({"id": "s1", "aggregateId": "a1", "tenantId": "(0)", "ownerId": "", "requestId": "r1",
               "version": 3, "header": {"upstream_name": "prepare"},
               "body": [{"name": "amount_locked"}, {"name": "prepared"}]})
    }

    #[test]
    fn a_projection_keeps_the_fields_it_includes_and_drops_those_it_excludes() {
        let only = project(
            doc(),
            &json!({"include": ["aggregateId", "requestId", "version", "header.upstream_name", "body.name"]}),
        )
        .unwrap();
        assert_eq!(
            only,
            json!({"id": "s1", "aggregateId": "a1", "requestId": "r1", "version": 3,
                   "header": {"upstream_name": "prepare"},
                   "body": [{"name": "amount_locked"}, {"name": "prepared"}]})
        );
        let without =
            project(doc(), &json!({"exclude": ["body", "header.upstream_name"]})).unwrap();
        assert!(without.get("body").is_none());
        assert_eq!(without["header"], json!({}));
        assert_eq!(without["requestId"], "r1");
        assert_eq!(
            project(doc(), &Value::Null).unwrap(),
            doc(),
            "no projection: the whole stream"
        );
    }

    /// Mongo keeps `_id` in every inclusion, so Wow's answer always has
    /// `id`: a projection of nothing that exists is `{id}`, never `{}`.
    #[test]
    fn a_projection_always_keeps_the_id_as_mongo_keeps_its_primary_key() {
        assert_eq!(
            project(doc(), &json!({"include": ["no_such_field"]})).unwrap(),
            json!({"id": "s1"})
        );
        assert_eq!(
            project(doc(), &json!({"exclude": ["id"]})),
            Err(ProjectionError::NoId)
        );
        for refused in [
            json!({"include": ["version"], "exclude": ["body"]}),
            json!({"include": [""]}),
            json!({"exclude": ["header..x"]}),
            json!({"include": ["$where"]}),
        ] {
            assert_eq!(
                project(doc(), &refused),
                Err(ProjectionError::Refused),
                "{refused}"
            );
        }
    }

    #[test]
    fn evaluates_the_confirm_query_and_field_paths() {
        let c = json!({"operator": "AND", "children": [
            {"operator": "AGGREGATE_ID", "value": "a1"},
            {"field": "requestId", "operator": "EQ", "value": "r1"}]});
        assert!(guard(&c, Wow::EightTen).is_ok());
        assert!(eval(&c, &doc()));
        assert_eq!(pinned_ids(&c), Some(vec!["a1".to_owned()]));
        let other = json!({"field": "requestId", "operator": "EQ", "value": "r2"});
        assert!(!eval(&other, &doc()));
        assert!(eval(
            &json!({"field": "body.name", "operator": "EQ", "value": "prepared"}),
            &doc()
        ));
        assert!(eval(
            &json!({"field": "header.upstream_name", "operator": "IN", "value": ["prepare"]}),
            &doc()
        ));
        assert!(eval(
            &json!({"field": "version", "operator": "GTE", "value": 3}),
            &doc()
        ));
        assert!(!eval(
            &json!({"field": "version", "operator": "GT", "value": 3}),
            &doc()
        ));
    }

    #[test]
    fn wow_9_reads_a_filter_or_a_condition_never_both_10_only_the_filter_and_8_10_ignores_it() {
        let filter = json!({"op": "AND", "operands": [
            {"op": "AGGREGATE_IDS", "values": ["a1", "a2"]},
            {"op": "IN", "field": "requestId", "values": ["r1"]}]});
        let condition = json!({"operator": "AND", "children": [
            {"operator": "AGGREGATE_IDS", "value": ["a1", "a2"]},
            {"operator": "IN", "field": "requestId", "value": ["r1"]}]});
        let list = json!({"filter": filter, "limit": 1});
        assert_eq!(tree_of(&list, false, Wow::Nine), Ok(condition.clone()));
        assert_eq!(tree_of(&filter, true, Wow::Nine), Ok(condition.clone()));
        let old = json!({"condition": condition, "limit": 1});
        assert_eq!(tree_of(&old, false, Wow::Nine), Ok(condition.clone()));
        assert_eq!(tree_of(&condition, true, Wow::Nine), Ok(condition.clone()));
        assert!(eval(&tree_of(&filter, true, Wow::Nine).unwrap(), &doc()));
        // Both at once is a 400, at the top and inside a count's tree.
        let both = json!({"filter": filter, "condition": condition, "limit": 1});
        assert_eq!(
            tree_of(&both, false, Wow::Nine).unwrap_err().code,
            "INVALID_REQUEST"
        );
        let mixed = json!({"op": "AND", "operator": "AND", "operands": []});
        assert_eq!(
            tree_of(&mixed, true, Wow::Nine).unwrap_err().code,
            "INVALID_REQUEST"
        );
        // Strict: an unknown property or operator is refused, naming where.
        let stray = json!({"op": "AND", "operands": [{"op": "EQ", "field": "requestId", "value": "r", "children": []}]});
        let e = tree_of(&stray, true, Wow::Nine).unwrap_err();
        assert_eq!(
            (e.name.as_str(), e.code),
            ("body.operands[0].children", "UNKNOWN_PROPERTY")
        );
        assert_eq!(
            tree_of(&json!({"op": "MATCH"}), true, Wow::Nine)
                .unwrap_err()
                .code,
            "UNKNOWN_TYPE"
        );
        assert_eq!(
            tree_of(&json!({"op": "AND", "operands": []}), true, Wow::Nine)
                .unwrap_err()
                .code,
            "INVALID_VALUE"
        );
        // 8.10 does not know `filter` or `op`: the tree it reads is "everything".
        assert_eq!(tree_of(&list, false, Wow::Ten), Ok(condition.clone()));
        assert_eq!(tree_of(&filter, true, Wow::Ten), Ok(condition.clone()));
        assert_eq!(
            tree_of(&old, false, Wow::Ten).unwrap_err().code,
            "UNKNOWN_PROPERTY"
        );
        assert_eq!(
            tree_of(&condition, true, Wow::Ten).unwrap_err().code,
            "INVALID_REQUEST"
        );
        assert_eq!(tree_of(&list, false, Wow::EightTen), Ok(Value::Null));
        assert!(matches_all(&tree_of(&filter, true, Wow::EightTen).unwrap()));
        // The guard: 128 nodes in 9, 64 in 8.10.
        let wide = json!({"operator": "OR", "children": (0..100).map(|i| json!({"operator": "AGGREGATE_ID", "value": i.to_string()})).collect::<Vec<_>>()});
        assert!(guard(&wide, Wow::Nine).is_ok() && guard(&wide, Wow::EightTen).is_err());
    }

    #[test]
    fn the_guard_refuses_unknown_expensive_and_oversized_conditions() {
        assert!(guard(&json!({"operator": "LIKE"}), Wow::EightTen).is_err());
        assert!(guard(
            &json!({"operator": "NE", "field": "x", "value": 1}),
            Wow::EightTen
        )
        .is_err());
        assert!(guard(&json!({"operator": "RAW", "value": "{}"}), Wow::EightTen).is_err());
        assert!(guard(&json!({"operator": "AND", "children": []}), Wow::EightTen).is_err());
        let wide: Vec<Value> = (0..65).map(|_| json!({"operator": "ALL"})).collect();
        assert!(guard(&json!({"operator": "AND", "children": wide}), Wow::EightTen).is_err());
        assert!(matches_all(&json!({"operator": "ALL"})));
        assert!(!matches_all(
            &json!({"operator": "AGGREGATE_ID", "value": "x"})
        ));
    }
}
