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
