//! Holds the Rust wire models to the server's own OpenAPI document
//! (`tests/fixtures/wow-8.10.10/example-domain-openapi.json`; `WOW_REFERENCE_DIR`
//! points at another release's).
#![allow(clippy::disallowed_macros)] // a test: format! is allowed here (clippy.toml)
#![cfg(not(target_arch = "wasm32"))]

use std::collections::BTreeSet;
use std::path::PathBuf;

use serde_json::Value;
use wow_command_client::core::protocol::{
    AggregateRoute, CommandResult, CommandStage, ConfirmQuery, ErrorInfo, Operator,
};

/// The document; the repository carries it, so a missing one is a failure
/// that names the path, never a test passed without it.
fn openapi() -> Value {
    let dir = std::env::var_os("WOW_REFERENCE_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/wow-8.10.10")
        });
    let path = dir.join("example-domain-openapi.json");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| {
        panic!(
            "{}: {e} (WOW_REFERENCE_DIR names another release's folder)",
            path.display()
        )
    });
    serde_json::from_str(&text).expect("the OpenAPI document is JSON")
}

fn schema<'a>(doc: &'a Value, name: &str) -> &'a Value {
    &doc["components"]["schemas"][name]
}

fn keys(v: &Value) -> BTreeSet<String> {
    v.as_object()
        .map(|o| o.keys().cloned().collect())
        .unwrap_or_default()
}

fn strings(v: &Value) -> Vec<String> {
    v.as_array()
        .map(|a| {
            a.iter()
                .filter_map(|s| s.as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default()
}

const FULL_RESULT: &str = r#"{"id":"1","waitCommandId":"1","stage":"PROCESSED","contextName":"c",
"aggregateName":"a","tenantId":"(0)","aggregateId":"x","aggregateVersion":1,"requestId":"r",
"commandId":"1","function":{"functionKind":"COMMAND","contextName":"c","processorName":"P","name":"onCommand"},
"errorCode":"CommandValidation","errorMsg":"m","bindingErrors":[{"name":"n","msg":"m"}],
"result":{"k":1},"signalTime":1,"succeeded":false}"#;

#[test]
fn command_result_has_exactly_the_documented_properties() {
    let doc = openapi();
    let s = schema(&doc, "wow.command.CommandResult");
    let documented = keys(&s["properties"]);
    let ours: CommandResult = serde_json::from_str(FULL_RESULT).unwrap();
    let encoded = keys(&serde_json::to_value(&ours).unwrap());
    assert_eq!(encoded, documented);
    // Each required property, when missing, makes decoding fail.
    let required = strings(&s["required"]);
    assert!(!required.is_empty());
    for name in required {
        let mut v: Value = serde_json::from_str(FULL_RESULT).unwrap();
        v.as_object_mut().unwrap().remove(&name);
        assert!(
            serde_json::from_value::<CommandResult>(v).is_err(),
            "`{name}` is required by the schema but not by the model"
        );
    }
    // And each optional one may be left out.
    for name in documented
        .iter()
        .filter(|n| !strings(&s["required"]).contains(n))
    {
        let mut v: Value = serde_json::from_str(FULL_RESULT).unwrap();
        v.as_object_mut().unwrap().remove(name);
        assert!(
            serde_json::from_value::<CommandResult>(v).is_ok(),
            "`{name}` is optional"
        );
    }
}

#[test]
fn error_info_and_binding_error_match_the_schema() {
    let doc = openapi();
    let documented = keys(&schema(&doc, "wow.api.DefaultErrorInfo")["properties"]);
    let info: ErrorInfo = serde_json::from_str(
        r#"{"errorCode":"X","errorMsg":"m","bindingErrors":[{"name":"n","msg":"m"}],"succeeded":false}"#,
    )
    .unwrap();
    assert_eq!(keys(&serde_json::to_value(&info).unwrap()), documented);
    assert_eq!(
        strings(&schema(&doc, "wow.api.DefaultErrorInfo")["required"]),
        ["errorCode"]
    );
    assert!(serde_json::from_str::<ErrorInfo>(r#"{"errorMsg":"m"}"#).is_err());
}

#[test]
fn stage_and_operator_enums_are_the_servers() {
    let doc = openapi();
    let stages = strings(&schema(&doc, "wow.command.CommandStage")["enum"]);
    let ours: Vec<String> = CommandStage::ALL
        .iter()
        .map(|s| s.as_str().to_owned())
        .collect();
    assert_eq!(ours, stages);
    let operators = strings(&schema(&doc, "wow.api.query.Operator")["enum"]);
    let ours: Vec<String> = Operator::ALL
        .iter()
        .map(|o| o.as_str().to_owned())
        .collect();
    assert_eq!(ours, operators);
    // The confirm query only uses operators the server defines.
    let q = ConfirmQuery {
        route: AggregateRoute::new("account"),
        aggregate_id: "x".into(),
        request_id: "r".into(),
    };
    let body = serde_json::to_value(
        q.list_body(wow_command_client::core::protocol::QueryShape::Condition),
    )
    .unwrap();
    for child in body["condition"]["children"].as_array().unwrap() {
        assert!(operators.contains(&child["operator"].as_str().unwrap().to_owned()));
    }
    let list_query = keys(&schema(&doc, "wow.api.query.ListQuery")["properties"]);
    assert!(keys(&body).is_subset(&list_query));
}

#[test]
fn command_routes_declare_the_headers_we_send() {
    let doc = openapi();
    let params = keys(&doc["components"]["parameters"]);
    use wow_command_client::core::protocol::headers::names;
    for h in [
        names::WAIT_STAGE,
        names::WAIT_CONTEXT,
        names::WAIT_PROCESSOR,
        names::WAIT_FUNCTION,
        names::WAIT_TIMEOUT,
        names::WAIT_TAIL_STAGE,
        names::WAIT_TAIL_CONTEXT,
        names::WAIT_TAIL_PROCESSOR,
        names::WAIT_TAIL_FUNCTION,
        names::AGGREGATE_ID,
        names::AGGREGATE_VERSION,
        names::REQUEST_ID,
        names::LOCAL_FIRST,
        names::SPACE_ID,
    ] {
        assert!(
            params.contains(&format!("wow.{h}")),
            "no parameter component for {h}"
        );
    }
}

/// Wow 9.1.5's query schemas (`tests/fixtures/wow-9.1.5/query-excerpt.json`).
fn wow9_queries() -> Value {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/wow-9.1.5/query-excerpt.json");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).expect("JSON")
}

/// Follows a local `$ref`.
fn resolve<'a>(doc: &'a Value, v: &'a Value) -> &'a Value {
    match v["$ref"].as_str() {
        Some(r) => {
            let mut at = doc;
            for part in r.trim_start_matches("#/").split('/') {
                at = &at[part];
            }
            resolve(doc, at)
        }
        None => v,
    }
}

/// Whether `value` is valid under `schema`, for the keywords these schemas
/// use (`$ref`, `oneOf`, `type`, `enum`, `required`, `properties`,
/// `additionalProperties: false`, `items`, `minItems`, `minimum`); why not.
fn check(doc: &Value, schema: &Value, value: &Value, at: &str) -> Result<(), String> {
    let schema = resolve(doc, schema);
    if let Some(alternatives) = schema["oneOf"].as_array() {
        let valid = alternatives
            .iter()
            .filter(|s| check(doc, s, value, at).is_ok())
            .count();
        return if valid == 1 {
            Ok(())
        } else {
            Err(format!("{at}: {valid} alternatives match {value}"))
        };
    }
    if let Some(allowed) = schema["enum"].as_array() {
        if !allowed.contains(value) {
            return Err(format!("{at}: {value} not in {allowed:?}"));
        }
    }
    let types: Vec<&str> = match &schema["type"] {
        Value::String(t) => vec![t.as_str()],
        Value::Array(ts) => ts.iter().filter_map(Value::as_str).collect(),
        _ => vec![],
    };
    let is = |t: &str| match t {
        "string" => value.is_string(),
        "number" => value.is_number(),
        "integer" => value.is_i64() || value.is_u64(),
        "boolean" => value.is_boolean(),
        "null" => value.is_null(),
        "array" => value.is_array(),
        "object" => value.is_object(),
        _ => false,
    };
    if !types.is_empty() && !types.iter().any(|t| is(t)) {
        return Err(format!("{at}: {value} is not {types:?}"));
    }
    if let Some(min) = schema["minimum"].as_i64() {
        if value.as_i64().is_some_and(|n| n < min) {
            return Err(format!("{at}: below {min}"));
        }
    }
    if let Some(object) = value.as_object() {
        for name in strings(&schema["required"]) {
            if !object.contains_key(&name) {
                return Err(format!("{at}: `{name}` is required"));
            }
        }
        for (name, v) in object {
            match schema["properties"].get(name) {
                Some(s) => check(doc, s, v, &format!("{at}.{name}"))?,
                None if schema["additionalProperties"] == Value::Bool(false) => {
                    return Err(format!("{at}: `{name}` is not a property"))
                }
                None => {}
            }
        }
    }
    if let Some(items) = value.as_array() {
        if let Some(min) = schema["minItems"].as_u64() {
            if (items.len() as u64) < min {
                return Err(format!("{at}: fewer than {min} items"));
            }
        }
        for (i, item) in items.iter().enumerate() {
            check(doc, &schema["items"], item, &format!("{at}[{i}]"))?;
        }
    }
    Ok(())
}

#[test]
fn the_filter_bodies_are_wow_9s_published_schemas() {
    use wow_command_client::core::protocol::{BatchQuery, JsonOut, QueryShape, Tree};
    let doc = wow9_queries();
    assert_eq!(doc["info"]["x-wow-version"], "9.1.5");
    let text = |v: &dyn Fn(&mut JsonOut)| {
        let mut out = JsonOut::new(wow_command_client::core::protocol::float_text);
        v(&mut out);
        serde_json::from_str::<Value>(&out.text).unwrap()
    };
    use wow_command_client::core::protocol::ToJson;
    let q = |a: &str, r: &str| ConfirmQuery {
        route: AggregateRoute::new("account"),
        aggregate_id: a.into(),
        request_id: r.into(),
    };
    let filter = schema(&doc, "wow.api.query.FilterExpression");
    let list_query = schema(&doc, "wow.api.query.ListQuery");
    let count = text(&|o| Tree(&q("x", "r").condition(), QueryShape::Filter).write_json(o));
    check(&doc, &doc["x-count-request-body"], &count, "count").unwrap();
    let list = text(&|o| q("x", "r").list_body(QueryShape::Filter).write_json(o));
    check(&doc, list_query, &list, "list").unwrap();
    let batch = BatchQuery::of(
        &[q("x", "r1"), q("y", "r2"), q("x", "r3")],
        QueryShape::Filter,
    );
    let batch = text(&|o| batch.write_json(o));
    check(&doc, list_query, &batch, "batch").unwrap();
    // The checker refuses what Wow refuses: the 8.10 shape, a filter's stray
    // property, a list where a value goes, an empty AND.
    let old = text(&|o| q("x", "r").list_body(QueryShape::Condition).write_json(o));
    assert!(check(&doc, list_query, &old, "old").is_err());
    for wrong in [
        serde_json::json!({"op": "EQ", "field": "requestId", "value": "r", "children": []}),
        serde_json::json!({"op": "AGGREGATE_IDS", "value": ["x"]}),
        serde_json::json!({"op": "AND", "operands": []}),
        serde_json::json!({"operator": "AND", "children": []}),
    ] {
        assert!(check(&doc, filter, &wrong, "wrong").is_err(), "{wrong}");
    }
}
