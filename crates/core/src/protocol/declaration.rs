//! A wire type's TypeScript declaration, from the same `wire_object!` list
//! that makes its struct, its writer and its reader: each field's doc, its
//! JSON name and its type's TypeScript ([`TsType`]), optional where its
//! writer may leave it out. The core's `wire_fields` test writes them out.

/// The TypeScript a field of this Rust type is declared with.
pub(crate) trait TsType {
    /// The type's TypeScript.
    fn ts() -> String;
    /// `None` is written as `null` (where its writer writes it at all).
    const NULLABLE: bool = false;
}

/// Each type's TypeScript, as given (the wire types' own are beside their
/// lists' check, `wire_fields.rs`).
macro_rules! ts_types {
    ($($ty:ty => $ts:literal,)*) => {
        $(impl $crate::protocol::declaration::TsType for $ty {
            fn ts() -> String {
                $ts.into()
            }
        })*
    };
}

pub(crate) use ts_types;

ts_types! {
    String => "string",
    bool => "boolean",
    u32 => "number",
    u64 => "number",
    i64 => "number",
}

impl<T: TsType> TsType for Option<T> {
    fn ts() -> String {
        T::ts()
    }
    const NULLABLE: bool = true;
}

impl<T: TsType> TsType for Vec<T> {
    fn ts() -> String {
        format!("{}[]", T::ts())
    }
}

/// `names` as a union of string literals.
pub(crate) fn union(names: impl IntoIterator<Item = String>) -> String {
    names
        .into_iter()
        .map(|n| format!("{n:?}"))
        .collect::<Vec<_>>()
        .join(" | ")
}

/// A wire type whose field list (`wire_object!`) is its declaration.
pub(crate) trait Declared {
    /// Its `export interface`, with its docs and each field's.
    fn declaration() -> String;
}

/// One field of a `wire_object!` list, as the macro hands it over.
pub(crate) struct Field {
    pub json: &'static str,
    /// The writer's method: `some` and `non_empty` leave the field out.
    pub write: &'static str,
    pub ts: String,
    pub nullable: bool,
    /// Its attributes, as written (the docs among them).
    pub attributes: &'static [&'static str],
}

/// The doc comment among `attributes` (each as `stringify!` wrote it), as
/// JSDoc indented by `indent`, or nothing.
fn jsdoc(attributes: &[&str], indent: &str) -> String {
    let lines: Vec<String> = attributes
        .iter()
        // `stringify!` breaks a long attribute after its `=`.
        .filter_map(|a| a.strip_prefix("doc")?.trim_start().strip_prefix('='))
        .map(str::trim_start)
        // A `///` line is a raw literal (`r" text"`, `r#" text "#`): no escapes.
        .map(|literal| {
            let raw = literal.trim_start_matches('r').trim_matches('#');
            let text = raw.strip_prefix('"').and_then(|t| t.strip_suffix('"'));
            text.expect("a doc comment's raw literal").trim().to_owned()
        })
        .collect();
    match lines.as_slice() {
        [] => String::new(),
        [one] => format!("{indent}/** {one} */\n"),
        many => {
            let body: String = many.iter().map(|l| format!("{indent} * {l}\n")).collect();
            format!("{indent}/**\n{body}{indent} */\n")
        }
    }
}

/// The `export interface` of wire type `name`.
pub(crate) fn interface(name: &str, attributes: &[&str], fields: &[Field]) -> String {
    let mut ts = jsdoc(attributes, "");
    ts += &format!("export interface {name} {{\n");
    for f in fields {
        ts += &jsdoc(f.attributes, "  ");
        let optional = matches!(f.write, "some" | "non_empty");
        let null = if f.nullable && !optional {
            " | null"
        } else {
            ""
        };
        ts += &format!(
            "  {}{}: {}{null};\n",
            f.json,
            if optional { "?" } else { "" },
            f.ts
        );
    }
    ts + "}\n"
}
