//! The query Condition DSL (PROTOCOL §5.3) and the confirm query (§5.4):
//! "did aggregate X append a stream with requestId R?". One tree, written
//! in the shape the gateway's Wow reads ([`QueryShape`]): 8.10's
//! `condition` or, since 8.11, the `filter` that Wow 10 will require.

use serde::{Deserialize, Serialize};

use super::json_codec::{JsonOut, ObjectWriter, ToJson};
use super::json_value::JsonValue;
use super::route::{AggregateRoute, RouteError};

macro_rules! operators {
    ($( $variant:ident = $wire:literal, )*) => {
        /// A query operator, upper-case on the wire.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
        pub enum Operator {
            $( #[doc = $wire] #[serde(rename = $wire)] $variant, )*
        }
        impl Operator {
            /// Every operator, in the server's order.
            pub const ALL: &'static [Operator] = &[ $( Operator::$variant, )* ];
            /// The wire name.
            pub const fn as_str(self) -> &'static str {
                match self { $( Operator::$variant => $wire, )* }
            }
        }
    };
}

operators! {
    And = "AND", Or = "OR", Nor = "NOR", Id = "ID", Ids = "IDS", AggregateId = "AGGREGATE_ID",
    AggregateIds = "AGGREGATE_IDS", TenantId = "TENANT_ID", OwnerId = "OWNER_ID",
    SpaceId = "SPACE_ID", Deleted = "DELETED", All = "ALL", Eq = "EQ", Ne = "NE", Gt = "GT",
    Lt = "LT", Gte = "GTE", Lte = "LTE", Contains = "CONTAINS", In = "IN", NotIn = "NOT_IN",
    Between = "BETWEEN", AllIn = "ALL_IN", StartsWith = "STARTS_WITH", EndsWith = "ENDS_WITH",
    ElemMatch = "ELEM_MATCH", Null = "NULL", NotNull = "NOT_NULL", True = "TRUE", False = "FALSE",
    Exists = "EXISTS", Today = "TODAY", BeforeToday = "BEFORE_TODAY", Tomorrow = "TOMORROW",
    ThisWeek = "THIS_WEEK", NextWeek = "NEXT_WEEK", LastWeek = "LAST_WEEK",
    ThisMonth = "THIS_MONTH", LastMonth = "LAST_MONTH", RecentDays = "RECENT_DAYS",
    EarlierDays = "EARLIER_DAYS", Match = "MATCH", Raw = "RAW",
}

fn is_empty_value(v: &JsonValue) -> bool {
    matches!(v, JsonValue::Null) || matches!(v, JsonValue::String(s) if s.is_empty())
}

/// One node of a condition tree. Empty `field`, `value` and `children` are
/// omitted on the wire, as the server does.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Condition {
    /// The field, e.g. `requestId`; empty for identity shortcuts.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub field: String,
    /// The operator.
    pub operator: Operator,
    /// The value.
    #[serde(default, skip_serializing_if = "is_empty_value")]
    pub value: JsonValue,
    /// Children of AND / OR / NOR.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub children: Vec<Condition>,
}

impl Condition {
    /// `AGGREGATE_ID = id`.
    pub fn aggregate_id(id: &str) -> Condition {
        Condition {
            field: String::new(),
            operator: Operator::AggregateId,
            value: JsonValue::String(id.to_owned()),
            children: Vec::new(),
        }
    }

    /// `field EQ value`.
    pub(crate) fn eq(field: &str, value: JsonValue) -> Condition {
        Condition {
            field: field.to_owned(),
            operator: Operator::Eq,
            value,
            children: Vec::new(),
        }
    }

    /// `AND(children…)`.
    pub fn and(children: Vec<Condition>) -> Condition {
        Condition {
            field: String::new(),
            operator: Operator::And,
            value: JsonValue::Null,
            children,
        }
    }
}

/// Which body a Wow reads a query's tree from. Never learned from a query's
/// answer: an 8.10 gateway ignores a `filter` it does not know and counts
/// everything (its operator defaults to `ALL`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum QueryShape {
    /// `{"condition": {"operator", "children", "field", "value"}}`: 8.10
    /// and before; still read by 9.x, removal planned for 10.0.
    #[default]
    Condition,
    /// `{"filter": {"op", "operands", "field", "value" | "values"}}`:
    /// 8.11 and after (`FilterExpression`, read strictly).
    Filter,
}

impl QueryShape {
    /// The shape a gateway of Wow `version` (`"9.1.3"`, `"8.10"`,
    /// `"9.2.0-SNAPSHOT"`) reads: the filter from 8.11.0 on; `None` for text
    /// that does not begin with a major and optional minor version.
    pub(crate) fn of_version(version: &str) -> Option<QueryShape> {
        // [major, minor], each of 1 to 6 digits; what follows a second `.` is not read.
        let (mut n, mut part, mut digits) = ([0u32; 2], 0, 0);
        for b in version.trim().bytes() {
            match b {
                b'0'..=b'9' if digits < 6 => {
                    n[part] = n[part] * 10 + u32::from(b - b'0');
                    digits += 1;
                }
                b'.' if digits > 0 && part == 0 => (part, digits) = (1, 0),
                b'.' if digits > 0 => break,
                _ => return None,
            }
        }
        if digits == 0 {
            return None;
        }
        Some(if (n[0], n[1]) >= (8, 11) {
            QueryShape::Filter
        } else {
            QueryShape::Condition
        })
    }

    /// The body's key of a list query's tree.
    pub const fn key(self) -> &'static str {
        match self {
            QueryShape::Condition => "condition",
            QueryShape::Filter => "filter",
        }
    }
}

/// A tree written in a shape: a count's whole body, a list's tree.
pub struct Tree<'a>(pub &'a Condition, pub QueryShape);

impl ToJson for Tree<'_> {
    fn write_json(&self, out: &mut JsonOut) {
        match self.1 {
            QueryShape::Condition => self.0.write_json(out),
            QueryShape::Filter => write_filter(self.0, out),
        }
    }
}

/// `c` as Wow's `FilterExpression`: `op`; `operands` of AND / OR / NOR;
/// `values` for an operator over a list, else `value`; `field` when named.
fn write_filter(c: &Condition, out: &mut JsonOut) {
    /// Children as the filters they are.
    struct Operands<'a>(&'a [Condition]);
    impl ToJson for Operands<'_> {
        fn write_json(&self, out: &mut JsonOut) {
            out.text.push('[');
            for (i, child) in self.0.iter().enumerate() {
                if i > 0 {
                    out.text.push(',');
                }
                write_filter(child, out);
            }
            out.text.push(']');
        }
    }
    let mut o = ObjectWriter::new(out);
    if !c.field.is_empty() {
        o.put("field", &c.field);
    }
    o.put("op", &c.operator.as_str());
    if !is_empty_value(&c.value) {
        let key = if matches!(c.value, JsonValue::Array(_)) {
            "values"
        } else {
            "value"
        };
        o.put(key, &c.value);
    }
    if !c.children.is_empty() {
        o.put("operands", &Operands(&c.children));
    }
    o.done()
}

/// A list query. The server's default `limit` is 0, which its guard
/// rejects, so the limit is always sent.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ListQuery {
    /// The filter.
    pub condition: Condition,
    /// 1..=1000.
    pub limit: u32,
    /// The body's shape (the derives write 8.10's).
    #[serde(skip)]
    pub shape: QueryShape,
}

impl ToJson for Condition {
    fn write_json(&self, out: &mut JsonOut) {
        let mut o = ObjectWriter::new(out);
        if !self.field.is_empty() {
            o.put("field", &self.field);
        }
        o.put("operator", &self.operator.as_str());
        if !is_empty_value(&self.value) {
            o.put("value", &self.value);
        }
        o.non_empty("children", &self.children).done()
    }
}

impl ToJson for ListQuery {
    fn write_json(&self, out: &mut JsonOut) {
        ObjectWriter::new(out)
            .put(self.shape.key(), &Tree(&self.condition, self.shape))
            .put("limit", &self.limit)
            .done()
    }
}

/// "Did `aggregate_id` append a stream carrying `request_id`?" — the
/// authoritative question of DESIGN rule 4.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConfirmQuery {
    /// The aggregate type's route (tenant scoping comes from it).
    pub route: AggregateRoute,
    /// The aggregate instance.
    pub aggregate_id: String,
    /// The intent's requestId.
    pub request_id: String,
}

impl ConfirmQuery {
    /// `AGGREGATE_ID = X AND requestId EQ R`.
    pub fn condition(&self) -> Condition {
        Condition::and(vec![
            Condition::aggregate_id(&self.aggregate_id),
            Condition::eq("requestId", JsonValue::String(self.request_id.clone())),
        ])
    }

    /// `POST …/event/list` body: the condition, limit 1 (the unique index
    /// allows at most one match).
    pub fn list_body(&self, shape: QueryShape) -> ListQuery {
        ListQuery {
            condition: self.condition(),
            limit: 1,
            shape,
        }
    }

    /// Path of the list query (returns the stream: version and commandId).
    pub fn list_path(&self) -> Result<String, RouteError> {
        self.route.event_list_path()
    }

    /// Path of the count query (existence only: no event bodies reach the client).
    pub(crate) fn count_path(&self) -> Result<String, RouteError> {
        self.route.event_count_path()
    }
}

/// A requestId no intent is ever given (not a UUID, as every requestId the
/// client mints is): the one-time check of a query shape counts it, in the
/// look's own count, where it must be 0.
pub(crate) const NEVER_USED_REQUEST_ID: &str = "wow-command-client.query-shape-check";

/// The most streams a batched look asks for: the query guard's `limit`.
pub(crate) const BATCH_LIMIT: u32 = 1_000;

/// One look for many intents of one route (`POST …/event/list`):
/// `AGGREGATE_IDS [ids] AND requestId IN [requestIds]`, only the fields an
/// answer is matched and reported by (no event bodies reach the client),
/// at most `BATCH_LIMIT` streams. Within the query guard for up to 1,000
/// questions: two lists of at most 1,000 values, three nodes.
#[derive(Clone, Debug, PartialEq)]
pub struct BatchQuery {
    /// The filter.
    pub condition: Condition,
    /// The body's shape.
    pub shape: QueryShape,
}

impl BatchQuery {
    /// The look for `questions` (all of one route), written in `shape`.
    pub fn of(questions: &[ConfirmQuery], shape: QueryShape) -> BatchQuery {
        let mut aggregates = Vec::new();
        let mut requests = Vec::new();
        for (i, q) in questions.iter().enumerate() {
            if !questions[..i]
                .iter()
                .any(|p| p.aggregate_id == q.aggregate_id)
            {
                aggregates.push(JsonValue::String(q.aggregate_id.clone()));
            }
            requests.push(JsonValue::String(q.request_id.clone()));
        }
        BatchQuery {
            condition: Condition::and(vec![
                Condition {
                    operator: Operator::AggregateIds,
                    value: JsonValue::Array(aggregates),
                    ..Condition::aggregate_id("")
                },
                Condition {
                    operator: Operator::In,
                    ..Condition::eq("requestId", JsonValue::Array(requests))
                },
            ]),
            shape,
        }
    }
}

impl ToJson for BatchQuery {
    fn write_json(&self, out: &mut JsonOut) {
        ObjectWriter::new(out)
            .put(self.shape.key(), &Tree(&self.condition, self.shape))
            .put("projection", &Include)
            .put("limit", &BATCH_LIMIT)
            .done()
    }
}

/// `{"include": ["aggregateId", "requestId", "version", "commandId"]}`.
struct Include;

impl ToJson for Include {
    fn write_json(&self, out: &mut JsonOut) {
        ObjectWriter::new(out)
            .put(
                "include",
                &["aggregateId", "requestId", "version", "commandId"][..],
            )
            .done()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::test_support::test;

    fn query() -> ConfirmQuery {
        ConfirmQuery {
            route: AggregateRoute::new("account"),
            aggregate_id: "X".into(),
            request_id: "R".into(),
        }
    }

    #[test]
    fn a_batched_look_is_within_the_query_guard_and_asks_only_the_matched_fields() {
        let questions: Vec<ConfirmQuery> = [("X", "R1"), ("Y", "R2"), ("X", "R3")]
            .iter()
            .map(|(a, r)| ConfirmQuery {
                aggregate_id: (*a).into(),
                request_id: (*r).into(),
                ..query()
            })
            .collect();
        let text = crate::protocol::JsonOut::of(
            &BatchQuery::of(&questions, QueryShape::Condition),
            |_, _| {},
        );
        let body: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert_eq!(
            body,
            serde_json::json!({
                "condition": {"operator": "AND", "children": [
                    {"operator": "AGGREGATE_IDS", "value": ["X", "Y"]},
                    {"field": "requestId", "operator": "IN", "value": ["R1", "R2", "R3"]}
                ]},
                "projection": {"include": ["aggregateId", "requestId", "version", "commandId"]},
                "limit": 1000
            })
        );
    }

    #[test]
    fn confirm_list_body_is_the_reference_request() {
        let body = serde_json::to_value(query().list_body(QueryShape::Condition)).unwrap();
        let expected = serde_json::json!({
            "condition": {"operator": "AND", "children": [
                {"operator": "AGGREGATE_ID", "value": "X"},
                {"field": "requestId", "operator": "EQ", "value": "R"}
            ]},
            "limit": 1
        });
        assert_eq!(body, expected);
        let text = super::super::json_codec::JsonOut::of(
            &query().list_body(QueryShape::Condition),
            super::super::json_value::float_text,
        );
        let ours: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert_eq!(ours, expected, "the wasm build's hand-written body");
        assert_eq!(query().list_path().unwrap(), "/account/event/list");
        assert_eq!(query().count_path().unwrap(), "/account/event/count");
    }

    #[test]
    fn count_body_is_the_bare_condition_and_round_trips() {
        let text = serde_json::to_string(&query().condition()).unwrap();
        assert!(text.starts_with("{\"operator\":\"AND\""));
        let back: Condition = serde_json::from_str(&text).unwrap();
        assert_eq!(back, query().condition());
        assert!(serde_json::from_str::<Condition>(r#"{"operator":"LIKE"}"#).is_err());
    }

    fn filter_text(value: &impl ToJson) -> serde_json::Value {
        let text =
            super::super::json_codec::JsonOut::of(value, super::super::json_value::float_text);
        serde_json::from_str(&text).unwrap()
    }

    // Wow 8.11+'s FilterExpression (PR #2999, `FilterExpression.kt`): the
    // bodies pinned as text, not computed a second way.
    #[test]
    fn the_filter_shape_is_wow_9s_filter_expression() {
        let count = Tree(&query().condition(), QueryShape::Filter);
        assert_eq!(
            filter_text(&count),
            serde_json::json!({"op": "AND", "operands": [
                {"op": "AGGREGATE_ID", "value": "X"},
                {"field": "requestId", "op": "EQ", "value": "R"}
            ]})
        );
        assert_eq!(
            filter_text(&query().list_body(QueryShape::Filter)),
            serde_json::json!({"filter": {"op": "AND", "operands": [
                {"op": "AGGREGATE_ID", "value": "X"},
                {"field": "requestId", "op": "EQ", "value": "R"}
            ]}, "limit": 1})
        );
        let batch = BatchQuery::of(&[query()], QueryShape::Filter);
        assert_eq!(
            filter_text(&batch),
            serde_json::json!({
                "filter": {"op": "AND", "operands": [
                    {"op": "AGGREGATE_IDS", "values": ["X"]},
                    {"field": "requestId", "op": "IN", "values": ["R"]}
                ]},
                "projection": {"include": ["aggregateId", "requestId", "version", "commandId"]},
                "limit": 1000
            })
        );
    }

    #[test]
    fn the_shape_follows_the_stated_version() {
        use QueryShape::{Condition as Old, Filter as New};
        for (version, shape) in [
            ("8.10.10", Some(Old)),
            ("8.10", Some(Old)),
            ("8", Some(Old)),
            ("7.9.1", Some(Old)),
            ("8.11.0", Some(New)),
            ("8.16.2", Some(New)),
            ("9.1.3", Some(New)),
            (" 10 ", Some(New)),
            ("9.2.0-SNAPSHOT", Some(New)),
            ("8.10.10.1", Some(Old)),
            ("9.x", None),
            ("", None),
            ("v9", None),
            ("9.", None),
            ("9..1", None),
            ("-9", None),
            ("4294967296.0", None),
        ] {
            assert_eq!(QueryShape::of_version(version), shape, "{version:?}");
        }
    }

    #[test]
    fn operator_names_are_the_server_enum() {
        assert_eq!(Operator::ALL.len(), 43);
        for op in Operator::ALL {
            let wire = serde_json::to_string(op).unwrap();
            assert_eq!(wire, format!("\"{}\"", op.as_str()));
        }
    }
}
