//! Command and query paths built from aggregate metadata (PROTOCOL §1.1, §5.1).
//!
//! `[/{prefix}][/{contextAlias}][/tenant/{tenantId}][/owner/{ownerId}]/{resource}[/{id}][/{action}]`
//! for commands; `[/{contextAlias}][/tenant/{tenantId}]/{resource}/event/{list|count}`
//! for the confirm queries (the route contracts put the context alias first,
//! e.g. `/tck/tenant/{tenantId}/mock_aggregate/event/list`).

/// Why a route could not be built.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RouteError {
    /// Which part (`"resource"`, `"id"`, `"action"`, …).
    pub part: &'static str,
    /// What is wrong with it.
    pub reason: &'static str,
}

impl RouteError {
    /// The message (what `Display` writes), built without `core::fmt`.
    pub fn message(&self) -> String {
        crate::text::text!("route ", self.part, ": ", self.reason)
    }
}

impl ::core::fmt::Display for RouteError {
    fn fmt(&self, f: &mut ::core::fmt::Formatter<'_>) -> ::core::fmt::Result {
        f.write_str(&self.message())
    }
}

impl std::error::Error for RouteError {}

/// Where an aggregate lives on the gateway.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct AggregateRoute {
    /// `@CommandRoute(prefix)`, commands only.
    pub prefix: Option<String>,
    /// Present when the aggregate belongs to another bounded context.
    pub context_alias: Option<String>,
    /// Present when the aggregate has no static tenant.
    pub tenant_id: Option<String>,
    /// Present when the aggregate is owned (`owner != NEVER`).
    pub owner_id: Option<String>,
    /// `@AggregateRoute(resourceName)` or the aggregate name, e.g. `account`.
    pub resource: String,
}

/// The parts of `s` between `/`s, found as bytes (a `/` never occurs
/// inside a UTF-8 sequence, so each part is whole text): `str::split` by a
/// `char` would link a char searcher into the module for this one use, and
/// re-checking each part as UTF-8 its validator.
fn parts(s: &str) -> impl Iterator<Item = &str> {
    let mut rest = Some(s);
    std::iter::from_fn(move || {
        let r = rest?;
        let end = r.bytes().position(|b| b == b'/');
        rest = end.map(|i| &r[i + 1..]);
        Some(&r[..end.unwrap_or(r.len())])
    })
}

/// One path segment, percent-encoded (RFC 3986 `pchar` kept as is).
fn push_segment(path: &mut String, part: &'static str, segment: &str) -> Result<(), RouteError> {
    if segment.is_empty() {
        return Err(RouteError {
            part,
            reason: "is empty",
        });
    }
    if segment == "." || segment == ".." {
        return Err(RouteError {
            part,
            reason: "is a dot segment",
        });
    }
    path.push('/');
    for b in segment.bytes() {
        if b.is_ascii_alphanumeric() || b"-._~!$&'()*+,;=:@".contains(&b) {
            path.push(b as char);
        } else {
            path.push('%');
            crate::text::push_hex(path, u64::from(b), 2, true);
        }
    }
    Ok(())
}

/// Whether `path` (a command's, relative to the gateway's base URL) can
/// only ever name a path under that base: it starts at `/`, holds no dot
/// segment (`.`, `..`, or either percent-encoded: a URL parser folds them
/// away), and nothing that would end the path or be read otherwise by a
/// URL parser (`?`, `#`, `\\`, a space or a control character). A stored
/// record's path is checked again before it is sent (a record changed in
/// storage must not send its command elsewhere).
pub(crate) fn check_path(path: &str) -> Result<(), String> {
    let why = if !path.starts_with('/') {
        "must start with `/`"
    } else if path
        .bytes()
        .any(|b| b <= b' ' || b == 0x7f || b == b'?' || b == b'#' || b == b'\\')
    {
        "holds `?`, `#`, `\\`, a space or a control character"
    } else if parts(&path[1..]).any(is_dot_segment) {
        "holds a dot segment"
    } else {
        return Ok(());
    };
    Err(crate::text::text!("path `", path, "` ", why))
}

/// `.` or `..`, each dot perhaps written `%2e` (as a URL parser reads it).
fn is_dot_segment(segment: &str) -> bool {
    let b = segment.as_bytes();
    let mut dots = 0;
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'.' {
            i += 1;
        } else if b[i] == b'%'
            && b.get(i + 1) == Some(&b'2')
            && b.get(i + 2).map(u8::to_ascii_lowercase) == Some(b'e')
        {
            i += 3;
        } else {
            return false;
        }
        dots += 1;
    }
    dots == 1 || dots == 2
}

/// Whether `base` is a gateway's base URL a request may be built on: an
/// absolute `http(s)` URL with a host, no credentials, no query or
/// fragment, and a path (if any) [`check_path`] accepts. What comes after
/// it is a command's path, so a request always goes to its origin, under
/// its path.
pub(crate) fn check_base_url(base: &str) -> Result<(), String> {
    let rest = base
        .strip_prefix("https://")
        .or_else(|| base.strip_prefix("http://"))
        .unwrap_or("");
    let host = parts(rest).next().unwrap_or("");
    if host.is_empty() || host.contains('@') || check_path(&crate::text::text!("/", rest)).is_err()
    {
        return Err(crate::text::text!(
            "baseUrl `",
            base,
            "` must be an absolute http(s) URL with a host, no credentials, query or fragment"
        ));
    }
    Ok(())
}

/// Whether `method` (upper case) sends a command: `POST`, `PUT`, `PATCH`
/// or `DELETE` (a `GET` is a query).
pub(crate) fn is_command_method(method: &str) -> bool {
    matches!(method, "POST" | "PUT" | "PATCH" | "DELETE")
}

impl AggregateRoute {
    /// A route to `resource` with no optional parts.
    pub fn new(resource: &str) -> AggregateRoute {
        AggregateRoute {
            resource: resource.to_owned(),
            ..AggregateRoute::default()
        }
    }

    /// The command path. `id` is placed in the path when given (commands whose
    /// route has `{id}`); `action` is the snake_case command name, or `None`
    /// for routes whose action is empty (e.g. the built-in delete). An action
    /// may hold `/` to address nested routes; each part is encoded.
    pub(crate) fn command_path(
        &self,
        id: Option<&str>,
        action: Option<&str>,
    ) -> Result<String, RouteError> {
        let mut path = String::with_capacity(64);
        if let Some(prefix) = &self.prefix {
            for part in parts(prefix).filter(|p| !p.is_empty()) {
                push_segment(&mut path, "prefix", part)?;
            }
        }
        self.push_scope(&mut path, true)?;
        push_segment(&mut path, "resource", &self.resource)?;
        if let Some(id) = id {
            push_segment(&mut path, "id", id)?;
        }
        if let Some(action) = action {
            for part in parts(action) {
                push_segment(&mut path, "action", part)?;
            }
        }
        Ok(path)
    }

    /// `…/event/list` for this aggregate type (tenant-scoped when a tenant is set).
    pub(crate) fn event_list_path(&self) -> Result<String, RouteError> {
        self.event_path("list")
    }

    /// `…/event/count` for this aggregate type.
    pub(crate) fn event_count_path(&self) -> Result<String, RouteError> {
        self.event_path("count")
    }

    /// `…/{resource}/{id}/snapshot`, the aggregate's latest snapshot
    /// (PROTOCOL §5.5). An aggregate whose id is its owner's has no `{id}`:
    /// `/owner/{ownerId}/cart/snapshot`.
    pub(crate) fn snapshot_path(&self, id: &str) -> Result<String, RouteError> {
        let mut path = String::with_capacity(64);
        self.push_scope(&mut path, true)?;
        push_segment(&mut path, "resource", &self.resource)?;
        if self.owner_id.as_deref() != Some(id) {
            push_segment(&mut path, "id", id)?;
        }
        path.push_str("/snapshot");
        Ok(path)
    }

    fn event_path(&self, op: &str) -> Result<String, RouteError> {
        let mut path = String::with_capacity(64);
        self.push_scope(&mut path, false)?;
        push_segment(&mut path, "resource", &self.resource)?;
        path.push_str("/event/");
        path.push_str(op);
        Ok(path)
    }

    /// `[/{contextAlias}][/tenant/{t}][/owner/{o}]`. Event routes have
    /// tenant *or* owner variants, never both; the tenant one is used, and the
    /// aggregate id in the condition already pins the owner.
    fn push_scope(&self, path: &mut String, with_owner: bool) -> Result<(), RouteError> {
        if let Some(alias) = &self.context_alias {
            push_segment(path, "contextAlias", alias)?;
        }
        if let Some(tenant) = &self.tenant_id {
            path.push_str("/tenant");
            push_segment(path, "tenantId", tenant)?;
        }
        if with_owner {
            if let Some(owner) = &self.owner_id {
                path.push_str("/owner");
                push_segment(path, "ownerId", owner)?;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::{check_base_url, check_path};

    #[test]
    fn a_path_and_a_base_url_can_only_name_the_gateway() {
        for ok in [
            "/account/a-1/lock_amount",
            "/a%20b/x",
            "/owner/%2Fx/cart",
            "/...",
            "/a.b/c",
        ] {
            assert_eq!(check_path(ok), Ok(()), "{ok}");
        }
        for bad in [
            "account/x",
            "7/account/x",
            "/a/../b",
            "/a/%2e%2E/b",
            "/a/./b",
            "/a/.",
            "/a?x=1",
            "/a#f",
            "/a\\b",
            "/a b",
            "/a\tb",
            "/a\nb",
        ] {
            assert!(check_path(bad).is_err(), "{bad}");
        }
        for ok in [
            "http://gw",
            "https://gw.example.com:8443/api",
            "http://127.0.0.1:8080/",
            "http://[::1]:9/w/",
        ] {
            assert_eq!(check_base_url(ok), Ok(()), "{ok}");
        }
        for bad in [
            "gw",
            "ftp://gw",
            "http://",
            "http://user:pw@gw",
            "http://gw?x",
            "http://gw#f",
            "http://gw/a/../b",
            "http://gw/a?x",
            "https://gw\\evil",
        ] {
            assert!(check_base_url(bad).is_err(), "{bad}");
        }
    }

    use super::*;
    use crate::protocol::test_support::test;

    #[test]
    fn parts_are_what_split_by_slash_gives() {
        for s in ["", "/", "a", "a/b", "/a//b/", "ctx/é/漢字/🧾", "//"] {
            assert_eq!(
                parts(s).collect::<Vec<_>>(),
                s.split('/').collect::<Vec<_>>(),
                "{s:?}"
            );
        }
    }

    #[test]
    fn builds_the_snapshot_paths() {
        let account = AggregateRoute::new("account");
        assert_eq!(
            account.snapshot_path("a 1").unwrap(),
            "/account/a%201/snapshot"
        );
        let cart = AggregateRoute {
            owner_id: Some("u1".into()),
            tenant_id: Some("t".into()),
            ..AggregateRoute::new("cart")
        };
        assert_eq!(
            cart.snapshot_path("u1").unwrap(),
            "/tenant/t/owner/u1/cart/snapshot"
        );
        assert_eq!(
            cart.snapshot_path("c9").unwrap(),
            "/tenant/t/owner/u1/cart/c9/snapshot"
        );
        assert!(account.snapshot_path("..").is_err());
    }

    #[test]
    fn builds_the_reference_command_paths() {
        let account = AggregateRoute::new("account");
        assert_eq!(
            account.command_path(None, Some("create_account")).unwrap(),
            "/account/create_account"
        );
        assert_eq!(
            account
                .command_path(Some("sourceId"), Some("prepare"))
                .unwrap(),
            "/account/sourceId/prepare"
        );
        assert_eq!(
            account.command_path(Some("a1"), None).unwrap(),
            "/account/a1"
        );
        let order = AggregateRoute {
            tenant_id: Some("t1".into()),
            owner_id: Some("o1".into()),
            ..AggregateRoute::new("sales-order")
        };
        assert_eq!(
            order.command_path(Some("x"), Some("address")).unwrap(),
            "/tenant/t1/owner/o1/sales-order/x/address"
        );
        let tck = AggregateRoute {
            context_alias: Some("tck".into()),
            tenant_id: Some("(0)".into()),
            prefix: Some("/api/".into()),
            ..AggregateRoute::new("mock_aggregate")
        };
        assert_eq!(
            tck.command_path(None, Some("mock_create_aggregate"))
                .unwrap(),
            "/api/tck/tenant/(0)/mock_aggregate/mock_create_aggregate"
        );
        let cart = AggregateRoute {
            owner_id: Some("u1".into()),
            ..AggregateRoute::new("cart")
        };
        assert_eq!(
            cart.command_path(None, Some("add_cart_item")).unwrap(),
            "/owner/u1/cart/add_cart_item"
        );
    }

    #[test]
    fn builds_the_reference_event_query_paths() {
        let tck = AggregateRoute {
            context_alias: Some("tck".into()),
            tenant_id: Some("t".into()),
            owner_id: Some("o".into()),
            ..AggregateRoute::new("mock_aggregate")
        };
        assert_eq!(
            tck.event_list_path().unwrap(),
            "/tck/tenant/t/mock_aggregate/event/list"
        );
        assert_eq!(
            AggregateRoute::new("account").event_count_path().unwrap(),
            "/account/event/count"
        );
    }

    #[test]
    fn encodes_segments_and_refuses_traversal() {
        let account = AggregateRoute::new("account");
        assert_eq!(
            account.command_path(Some("a b/c?d#e%"), None).unwrap(),
            "/account/a%20b%2Fc%3Fd%23e%25"
        );
        assert_eq!(
            account.command_path(Some("caf\u{e9}"), None).unwrap(),
            "/account/caf%C3%A9"
        );
        let err = account.command_path(Some(".."), None).unwrap_err();
        assert_eq!(err.part, "id");
        assert!(account.command_path(Some(""), None).is_err());
        assert!(AggregateRoute::new("").event_list_path().is_err());
        assert!(account.command_path(None, Some("a//b")).is_err());
    }
}
