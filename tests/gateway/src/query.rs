//! Event-stream queries: the Condition DSL evaluated over streams, with the
//! server's HTTP query guard (PROTOCOL §5.1, §5.3).

use serde_json::Value;

/// A refusal: 400 `IllegalArgument`.
pub type Refusal = String;

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

/// Applies the guard to a condition tree.
pub fn guard(c: &Value) -> Result<(), Refusal> {
    if count_nodes(c) > 64 {
        return Err("Condition has more than 64 nodes.".into());
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

/// A query's `projection` applied to one result: with `include`, only the
/// fields it names (their first path segment); then without those
/// `exclude` names. Wow passes it to the store (Mongo's projection); a
/// client asks for the few fields it reads, so no event bodies travel.
pub fn project(doc: Value, projection: &Value) -> Value {
    let names = |k: &str| -> Vec<String> {
        projection[k]
            .as_array()
            .map(|a| {
                a.iter()
                    .filter_map(Value::as_str)
                    .map(|f| f.split('.').next().unwrap_or(f).to_owned())
                    .collect()
            })
            .unwrap_or_default()
    };
    let (include, exclude) = (names("include"), names("exclude"));
    let Value::Object(mut fields) = doc else {
        return doc;
    };
    if !include.is_empty() {
        fields.retain(|k, _| include.iter().any(|i| i == k));
    }
    fields.retain(|k, _| !exclude.iter().any(|e| e == k));
    Value::Object(fields)
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
            &json!({"include": ["aggregateId", "requestId", "version", "header.upstream_name"]}),
        );
        assert_eq!(
            only,
            json!({"aggregateId": "a1", "requestId": "r1", "version": 3, "header": {"upstream_name": "prepare"}})
        );
        let without = project(doc(), &json!({"exclude": ["body", "header"]}));
        assert!(without.get("body").is_none() && without.get("header").is_none());
        assert_eq!(without["requestId"], "r1");
        assert_eq!(
            project(doc(), &Value::Null),
            doc(),
            "no projection: the whole stream"
        );
    }

    #[test]
    fn evaluates_the_confirm_query_and_field_paths() {
        let c = json!({"operator": "AND", "children": [
            {"operator": "AGGREGATE_ID", "value": "a1"},
            {"field": "requestId", "operator": "EQ", "value": "r1"}]});
        assert!(guard(&c).is_ok());
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
    fn the_guard_refuses_unknown_expensive_and_oversized_conditions() {
        assert!(guard(&json!({"operator": "LIKE"})).is_err());
        assert!(guard(&json!({"operator": "NE", "field": "x", "value": 1})).is_err());
        assert!(guard(&json!({"operator": "RAW", "value": "{}"})).is_err());
        assert!(guard(&json!({"operator": "AND", "children": []})).is_err());
        let wide: Vec<Value> = (0..65).map(|_| json!({"operator": "ALL"})).collect();
        assert!(guard(&json!({"operator": "AND", "children": wide})).is_err());
        assert!(matches_all(&json!({"operator": "ALL"})));
        assert!(!matches_all(
            &json!({"operator": "AGGREGATE_ID", "value": "x"})
        ));
    }
}
