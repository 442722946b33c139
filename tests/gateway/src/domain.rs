//! The example domains of the reference: the transfer service's `account`
//! (with `TransferSaga`), and the example service's `cart` and `sales-order`.
//! State is a JSON object folded from the event history.

use serde_json::{json, Map, Value};
use wow_command_client::core::protocol::ErrorCode;

/// How an aggregate is owned (`@AggregateRoute(owner)`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Owner {
    /// No owner path.
    Never,
    /// The owner id is the aggregate id; no `{id}` in paths.
    AggregateId,
    /// An owner path on every command.
    Always,
}

/// One aggregate type.
#[derive(Debug)]
pub struct AggregateType {
    /// Aggregate name (as in results and streams).
    pub name: &'static str,
    /// Resource name in paths.
    pub resource: &'static str,
    /// Bounded context.
    pub context: &'static str,
    /// Static tenant id, when it has one (no tenant path then).
    pub static_tenant: Option<&'static str>,
    /// Owner mode.
    pub owner: Owner,
    /// The aggregate class name (the PROCESSED processor).
    pub processor: &'static str,
    /// Event-type package for `bodyType`.
    pub package: &'static str,
    /// Whether a saga reacts to its events.
    pub saga: Option<&'static str>,
}

/// One command route.
#[derive(Debug)]
pub struct CommandDef {
    /// snake_case name.
    pub name: &'static str,
    /// Aggregate type name.
    pub aggregate: &'static str,
    /// HTTP method.
    pub method: &'static str,
    /// Path action segment (`""` for none).
    pub action: &'static str,
    /// Whether the route has `{id}`.
    pub id_in_path: bool,
    /// `@CreateAggregate`.
    pub create: bool,
    /// `@AllowCreate`.
    pub allow_create: bool,
    /// `@VoidCommand`.
    pub void: bool,
}

/// The aggregate types served.
pub const AGGREGATES: &[AggregateType] = &[
    AggregateType {
        name: "account",
        resource: "account",
        context: "transfer-service",
        static_tenant: Some("(0)"),
        owner: Owner::Never,
        processor: "Account",
        package: "me.ahoo.wow.example.transfer.api",
        saga: Some("TransferSaga"),
    },
    AggregateType {
        name: "cart",
        resource: "cart",
        context: "example-service",
        static_tenant: Some("(0)"),
        owner: Owner::AggregateId,
        processor: "Cart",
        package: "me.ahoo.wow.example.api.cart",
        saga: None,
    },
    AggregateType {
        name: "order",
        resource: "sales-order",
        context: "example-service",
        static_tenant: None,
        owner: Owner::Always,
        processor: "Order",
        package: "me.ahoo.wow.example.api.order",
        saga: None,
    },
];

const CREATE: u8 = 1;
const ALLOW_CREATE: u8 = 2;
const VOID: u8 = 4;

const fn cmd(
    aggregate: &'static str,
    name: &'static str,
    method: &'static str,
    action: &'static str,
    id_in_path: bool,
    flags: u8,
) -> CommandDef {
    CommandDef {
        name,
        aggregate,
        method,
        action,
        id_in_path,
        create: flags & CREATE != 0,
        allow_create: flags & ALLOW_CREATE != 0,
        void: flags & VOID != 0,
    }
}

/// Every command route.
pub const COMMANDS: &[CommandDef] = &[
    cmd(
        "account",
        "create_account",
        "POST",
        "create_account",
        false,
        CREATE,
    ),
    cmd("account", "prepare", "POST", "prepare", true, 0),
    cmd("account", "entry", "PUT", "entry", true, 0),
    cmd("account", "confirm", "PUT", "confirm", true, 0),
    cmd("account", "lock_amount", "PUT", "lock_amount", true, 0),
    cmd("account", "unlock_amount", "PUT", "unlock_amount", true, 0),
    cmd(
        "account",
        "freeze_account",
        "PUT",
        "freeze_account",
        true,
        0,
    ),
    cmd(
        "account",
        "unfreeze_account",
        "PUT",
        "unfreeze_account",
        true,
        0,
    ),
    cmd(
        "cart",
        "add_cart_item",
        "POST",
        "add_cart_item",
        false,
        ALLOW_CREATE,
    ),
    cmd(
        "cart",
        "change_quantity",
        "PUT",
        "change_quantity",
        false,
        0,
    ),
    cmd(
        "cart",
        "remove_cart_item",
        "PUT",
        "remove_cart_item",
        false,
        0,
    ),
    cmd("cart", "view_cart", "PUT", "view_cart", false, VOID),
    cmd("order", "create_order", "POST", "", false, CREATE),
    cmd("order", "pay_order", "POST", "pay", true, 0),
    // The built-ins every aggregate gets (DefaultDeleteAggregate, DefaultRecoverAggregate).
    cmd("account", "delete_aggregate", "DELETE", "", true, 0),
    cmd("account", "recover_aggregate", "PUT", "recover", true, 0),
    cmd("cart", "delete_aggregate", "DELETE", "", false, 0),
    cmd("cart", "recover_aggregate", "PUT", "recover", false, 0),
    cmd("order", "delete_aggregate", "DELETE", "", true, 0),
    cmd("order", "recover_aggregate", "PUT", "recover", true, 0),
];

/// Whether the folded state is deleted.
pub fn is_deleted(state: &Value) -> bool {
    state
        .get("deleted")
        .and_then(Value::as_bool)
        .unwrap_or(false)
}

/// What a handler decided.
pub enum Decision {
    /// Events to append (name, body), plus handler-set `result` entries, and
    /// the code of an event that implements ErrorInfo (stored, fails the command).
    Events {
        /// The events.
        events: Vec<(String, Value)>,
        /// `CommandResult.result` entries.
        result: Map<String, Value>,
        /// An error event's code.
        error_event: Option<(String, String)>,
    },
    /// A business refusal: nothing appended.
    Reject(ErrorCode, String),
}

fn events(list: Vec<(&str, Value)>) -> Decision {
    Decision::Events {
        events: list.into_iter().map(|(n, b)| (n.to_owned(), b)).collect(),
        result: Map::new(),
        error_event: None,
    }
}

fn num(v: &Value, key: &str) -> i64 {
    v.get(key).and_then(Value::as_i64).unwrap_or(0)
}

fn text<'a>(v: &'a Value, key: &str) -> &'a str {
    v.get(key).and_then(Value::as_str).unwrap_or("")
}

/// Jakarta-style validation at SENT: field errors, or none.
pub fn validate(cmd: &CommandDef, body: &Value) -> Vec<(String, String)> {
    let mut errors = Vec::new();
    let mut need = |ok: bool, field: &str, msg: &str| {
        if !ok {
            errors.push((field.to_owned(), msg.to_owned()));
        }
    };
    let positive = |k: &str| body.get(k).and_then(Value::as_i64).is_some_and(|n| n > 0);
    match cmd.name {
        "create_account" => {
            need(
                !text(body, "name").trim().is_empty(),
                "name",
                "must not be blank",
            );
            need(
                body.get("balance")
                    .and_then(Value::as_i64)
                    .is_some_and(|n| n >= 0),
                "balance",
                "must be greater than or equal to 0",
            );
        }
        "prepare" => {
            need(
                !text(body, "to").trim().is_empty(),
                "to",
                "must not be blank",
            );
            need(positive("amount"), "amount", "must be greater than 0");
        }
        "lock_amount" | "unlock_amount" => {
            need(positive("amount"), "amount", "must be greater than 0")
        }
        "add_cart_item" | "change_quantity" => {
            need(
                !text(body, "productId").trim().is_empty(),
                "productId",
                "must not be blank",
            );
            if body.get("quantity").is_some() || cmd.name == "change_quantity" {
                need(positive("quantity"), "quantity", "must be greater than 0");
            }
        }
        "remove_cart_item" => need(
            body.get("productIds")
                .and_then(Value::as_array)
                .is_some_and(|a| !a.is_empty()),
            "productIds",
            "must not be empty",
        ),
        "create_order" => {
            let items = body.get("items").and_then(Value::as_array);
            need(
                items.is_some_and(|a| !a.is_empty()),
                "items",
                "size must be at least 1",
            );
            for (i, item) in items.into_iter().flatten().enumerate() {
                need(
                    num(item, "quantity") > 0,
                    &format!("items[{i}].quantity"),
                    "must be greater than 0",
                );
                need(
                    item.get("price")
                        .and_then(Value::as_f64)
                        .is_some_and(|p| p > 0.0),
                    &format!("items[{i}].price"),
                    "must be greater than 0",
                );
            }
        }
        "pay_order" => {
            need(
                !text(body, "paymentId").trim().is_empty(),
                "paymentId",
                "must not be blank",
            );
            need(
                body.get("amount")
                    .and_then(Value::as_f64)
                    .is_some_and(|a| a > 0.0),
                "amount",
                "must be greater than 0",
            );
        }
        _ => {}
    }
    errors
}

/// `CreateOrder.validate()`: a `require`, so `IllegalArgument` at SENT.
pub fn self_validate(cmd: &CommandDef, body: &Value) -> Option<String> {
    if cmd.name == "create_order" {
        let country = body.pointer("/address/country").and_then(Value::as_str);
        if country != Some("China") {
            return Some("Only support China.".to_owned());
        }
    }
    None
}

/// Runs a command handler against the current state.
pub fn handle(cmd: &CommandDef, state: &Value, aggregate_id: &str, body: &Value) -> Decision {
    match (cmd.name, is_deleted(state)) {
        ("recover_aggregate", true) => {
            return events(vec![("default_aggregate_recovered", json!({}))])
        }
        ("recover_aggregate", false) => {
            return Decision::Reject(ErrorCode::IllegalState, "Aggregate is not deleted.".into())
        }
        (_, true) => {
            return Decision::Reject(
                ErrorCode::IllegalAccessDeletedAggregate,
                format!("Aggregate[{aggregate_id}] is deleted."),
            )
        }
        ("delete_aggregate", false) => {
            return events(vec![("default_aggregate_deleted", json!({}))])
        }
        _ => {}
    }
    let amount = num(body, "amount");
    let frozen = state
        .get("frozen")
        .and_then(Value::as_bool)
        .unwrap_or(false);
    match cmd.name {
        "create_account" => events(vec![(
            "account_created",
            json!({"name": text(body, "name"), "balance": num(body, "balance")}),
        )]),
        "prepare" => {
            if frozen {
                return Decision::Reject(ErrorCode::IllegalState, "Account is frozen.".into());
            }
            if num(state, "balanceAmount") < amount {
                return Decision::Reject(ErrorCode::IllegalState, "Insufficient balance.".into());
            }
            events(vec![
                ("amount_locked", json!({ "amount": amount })),
                (
                    "prepared",
                    json!({"to": text(body, "to"), "amount": amount}),
                ),
            ])
        }
        "entry" => {
            let source = text(body, "sourceId");
            if frozen {
                Decision::Events {
                    events: vec![(
                        "entry_failed".into(),
                        json!({"sourceId": source, "amount": amount}),
                    )],
                    result: Map::new(),
                    error_event: Some(("Account-Entry-Failed".into(), "Account is frozen.".into())),
                }
            } else {
                events(vec![(
                    "amount_entered",
                    json!({"sourceId": source, "amount": amount}),
                )])
            }
        }
        "confirm" => events(vec![("confirmed", json!({ "amount": amount }))]),
        "lock_amount" => events(vec![("amount_locked", json!({ "amount": amount }))]),
        "unlock_amount" => events(vec![("amount_unlocked", json!({ "amount": amount }))]),
        "freeze_account" if frozen => {
            Decision::Reject(ErrorCode::IllegalState, "Account is already frozen.".into())
        }
        "freeze_account" => events(vec![(
            "account_frozen",
            json!({"reason": text(body, "reason")}),
        )]),
        "unfreeze_account" => events(vec![(
            "account_unfrozen",
            json!({"reason": text(body, "reason")}),
        )]),
        "add_cart_item" => events(vec![(
            "cart_item_added",
            json!({"added": {"productId": text(body, "productId"), "quantity": body.get("quantity").and_then(Value::as_i64).unwrap_or(1)}}),
        )]),
        "change_quantity" => {
            let has = state["items"]
                .as_array()
                .is_some_and(|items| items.iter().any(|i| i["productId"] == body["productId"]));
            if !has {
                return Decision::Reject(ErrorCode::IllegalState, "Product not in cart.".into());
            }
            events(vec![(
                "cart_quantity_changed",
                // `CartQuantityChanged(changed: CartItem)`, as in Wow's example.
                json!({"changed": {"productId": text(body, "productId"), "quantity": num(body, "quantity")}}),
            )])
        }
        "remove_cart_item" => events(vec![(
            "cart_item_removed",
            json!({"productIds": body["productIds"]}),
        )]),
        "create_order" => {
            let items = body["items"].as_array().cloned().unwrap_or_default();
            let total: f64 = items
                .iter()
                .map(|i| i["price"].as_f64().unwrap_or(0.0) * i["quantity"].as_f64().unwrap_or(0.0))
                .sum();
            let mut result = Map::new();
            result.insert("totalAmount".into(), json!(total));
            Decision::Events {
                events: vec![(
                    "order_created".into(),
                    json!({"orderId": aggregate_id, "items": items, "address": body["address"],
                           "fromCart": body["fromCart"].as_bool().unwrap_or(false), "totalAmount": total}),
                )],
                result,
                error_event: None,
            }
        }
        "pay_order" => {
            let paid = state["paidAmount"].as_f64().unwrap_or(0.0);
            let total = state["totalAmount"].as_f64().unwrap_or(0.0);
            let pay = body["amount"].as_f64().unwrap_or(0.0);
            if paid >= total {
                // Wow's `Order.onCommand(PayOrder)` answers a paid order with this error event.
                let duplicated =
                    format!("The current order[{aggregate_id}] status[PAID] cannot pay order.");
                return Decision::Events {
                    events: vec![(
                        "order_pay_duplicated".into(),
                        json!({"paymentId": text(body, "paymentId"), "errorMsg": duplicated}),
                    )],
                    result: Map::new(),
                    error_event: Some(("OrderPayDuplicated".into(), duplicated.clone())),
                };
            }
            events(vec![(
                "order_paid",
                json!({"amount": pay, "paid": paid + pay >= total}),
            )])
        }
        other => Decision::Reject(
            ErrorCode::IllegalArgument,
            format!("Unknown command {other}."),
        ),
    }
}

/// Folds one event into the state.
pub fn apply(aggregate: &str, state: &mut Value, id: &str, name: &str, body: &Value) {
    if !state.is_object() {
        *state = json!({ "id": id });
    }
    let s = state.as_object_mut().expect("an object");
    let add = |s: &mut Map<String, Value>, k: &str, d: i64| {
        let v = s.get(k).and_then(Value::as_i64).unwrap_or(0) + d;
        s.insert(k.into(), json!(v));
    };
    let amount = body["amount"].as_i64().unwrap_or(0);
    match (aggregate, name) {
        ("account", "account_created") => {
            s.insert("name".into(), body["name"].clone());
            s.insert("balanceAmount".into(), body["balance"].clone());
            s.insert("lockedAmount".into(), json!(0));
            s.insert("frozen".into(), json!(false));
        }
        ("account", "amount_locked") => {
            add(s, "balanceAmount", -amount);
            add(s, "lockedAmount", amount);
        }
        ("account", "amount_unlocked") => {
            add(s, "lockedAmount", -amount);
            add(s, "balanceAmount", amount);
        }
        ("account", "amount_entered") => add(s, "balanceAmount", amount),
        ("account", "confirmed") => add(s, "lockedAmount", -amount),
        ("account", "account_frozen") => {
            s.insert("frozen".into(), json!(true));
        }
        ("account", "account_unfrozen") => {
            s.insert("frozen".into(), json!(false));
        }
        ("cart", "cart_item_added") => {
            let added = body["added"].clone();
            let items = s.entry("items").or_insert_with(|| json!([]));
            let list = items.as_array_mut().expect("items");
            match list
                .iter_mut()
                .find(|i| i["productId"] == added["productId"])
            {
                Some(item) => {
                    let q = item["quantity"].as_i64().unwrap_or(0)
                        + added["quantity"].as_i64().unwrap_or(0);
                    item["quantity"] = json!(q);
                }
                None => list.push(added),
            }
        }
        ("cart", "cart_quantity_changed") => {
            if let Some(list) = s.get_mut("items").and_then(Value::as_array_mut) {
                for item in list
                    .iter_mut()
                    .filter(|i| i["productId"] == body["changed"]["productId"])
                {
                    item["quantity"] = body["changed"]["quantity"].clone();
                }
            }
        }
        ("cart", "cart_item_removed") => {
            let ids = body["productIds"].as_array().cloned().unwrap_or_default();
            if let Some(list) = s.get_mut("items").and_then(Value::as_array_mut) {
                list.retain(|i| !ids.contains(&i["productId"]));
            }
        }
        ("order", "order_created") => {
            s.insert("items".into(), body["items"].clone());
            s.insert("address".into(), body["address"].clone());
            s.insert("totalAmount".into(), body["totalAmount"].clone());
            s.insert("paidAmount".into(), json!(0.0));
            s.insert("status".into(), json!("CREATED"));
        }
        ("order", "order_paid") => {
            let paid = s.get("paidAmount").and_then(Value::as_f64).unwrap_or(0.0)
                + body["amount"].as_f64().unwrap_or(0.0);
            s.insert("paidAmount".into(), json!(paid));
            if body["paid"].as_bool() == Some(true) {
                s.insert("status".into(), json!("PAID"));
            }
        }
        (_, "default_aggregate_deleted") => {
            s.insert("deleted".into(), json!(true));
        }
        (_, "default_aggregate_recovered") => {
            s.insert("deleted".into(), json!(false));
        }
        _ => {}
    }
}

/// `TransferSaga`: the commands it sends for one event, as
/// (aggregate id, command name, body).
pub fn transfer_saga(
    source_id: &str,
    name: &str,
    body: &Value,
) -> Option<(String, &'static str, Value)> {
    let amount = body["amount"].clone();
    match name {
        "prepared" => Some((
            text(body, "to").to_owned(),
            "entry",
            json!({"sourceId": source_id, "amount": amount}),
        )),
        "amount_entered" => Some((
            text(body, "sourceId").to_owned(),
            "confirm",
            json!({ "amount": amount }),
        )),
        "entry_failed" => Some((
            text(body, "sourceId").to_owned(),
            "unlock_amount",
            json!({ "amount": amount }),
        )),
        _ => None,
    }
}

/// An event's `bodyType`: the built-in delete and recover events are Wow's own
/// classes (`wow-api/.../event/AggregateDeleted.kt`, `AggregateRecovered.kt`),
/// the rest the aggregate's API package.
pub fn body_type(agg: &AggregateType, name: &str) -> String {
    let package = if name.starts_with("default_aggregate_") {
        "me.ahoo.wow.api.event"
    } else {
        agg.package
    };
    format!("{package}.{}", pascal(name))
}

/// PascalCase of a snake_case event name, for `bodyType`.
pub fn pascal(name: &str) -> String {
    name.split('_')
        .map(|w| {
            let mut c = w.chars();
            c.next()
                .map(|f| f.to_ascii_uppercase().to_string() + c.as_str())
                .unwrap_or_default()
        })
        .collect()
}
