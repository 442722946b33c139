//! A record read back from storage is checked before it can act: storage
//! is outside the module (another app of the origin, an extension, a
//! script injected into the page, a shared edge KV), so what it gives back
//! is read as a claim, not a fact. The record must agree with where it was
//! read (its namespace, its id); its command must still be one that can
//! only go to the gateway (its path, its method); it acts only for the
//! user it was made under; and no credential it carries is ever sent or
//! kept.

use super::record::{IntentRecord, RecordError};
use crate::protocol::{check_path, is_command_method};

/// Header names never written into the journal: credentials are asked for
/// per request (`connect({ headers })`), never stored with an intent.
pub(crate) const CREDENTIAL_HEADERS: [&str; 3] = ["authorization", "cookie", "proxy-authorization"];

/// Whether header `name` is a credential: one of [`CREDENTIAL_HEADERS`],
/// or a name the app lists as secret (`secretHeaders`, one per line), in
/// any case.
pub(crate) fn is_secret(name: &str, secrets: &str) -> bool {
    CREDENTIAL_HEADERS
        .into_iter()
        .chain(secrets.split('\n'))
        .any(|c| name.eq_ignore_ascii_case(c))
}

/// Whose a record read back is.
// Unpacked where it is returned: boxing would only add an allocation.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, PartialEq)]
pub(crate) enum ReadBack {
    /// This client's user's; `true` when a credential header was taken out
    /// of it (a record of an older build), to be written back without it.
    Mine(IntentRecord, bool),
    /// Another user's (or, for a client with a user, one made with none):
    /// never sent, listed or driven here.
    Theirs,
}

/// Where a record was read and by whom: the checks a record read back
/// must pass.
pub(crate) struct Reader<'a> {
    /// The client's namespace.
    pub namespace: &'a str,
    /// The client's user.
    pub user: Option<&'a str>,
    /// The app's secret header names, one per line.
    pub secrets: &'a str,
}

impl Reader<'_> {
    /// Checks `record`, read at the key of intent `id`: one that does not
    /// agree with where it was read, or whose command could go anywhere
    /// but the gateway, is corrupt (quarantined, nothing it carries sent),
    /// with the reason naming what failed.
    pub fn check(&self, id: &str, mut record: IntentRecord) -> Result<ReadBack, RecordError> {
        let why = if record.namespace != self.namespace {
            "its namespace is not the one it was read in"
        } else if record.intent_id != id || record.request_id != id {
            "its intentId or requestId is not the key it was read at"
        } else if !is_command_method(&record.command.method) {
            "its method is not a command's"
        } else {
            check_path(&record.command.path).map_err(RecordError::Corrupt)?;
            ""
        };
        if !why.is_empty() {
            return Err(RecordError::Corrupt(why.into()));
        }
        if record.user.as_deref() != self.user {
            return Ok(ReadBack::Theirs);
        }
        let headers = &mut record.command.headers;
        let before = headers.len();
        headers.retain(|(name, _)| !is_secret(name, self.secrets));
        let scrubbed = headers.len() != before;
        Ok(ReadBack::Mine(record, scrubbed))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::journal::{
        new_record, AggregateIdentity, CommandSpec, NewIntent, RequestIdPolicy, SeededRandom,
    };

    fn record(user: Option<&str>) -> IntentRecord {
        let intent = NewIntent {
            intent_key: None,
            aggregate: AggregateIdentity {
                resource: "account".into(),
                aggregate_id: "a-1".into(),
                ..AggregateIdentity::default()
            },
            command: CommandSpec {
                method: "PUT".into(),
                path: "/account/a-1/lock_amount".into(),
                ..CommandSpec::default()
            },
            scope: None,
        };
        let (mut r, _) = new_record(
            "ns",
            RequestIdPolicy::RandomV7,
            crate::protocol::float_text,
            1,
            intent,
            &mut SeededRandom::new(1),
        )
        .unwrap();
        r.user = user.map(str::to_owned);
        r
    }

    fn reader(user: Option<&'static str>) -> Reader<'static> {
        Reader {
            namespace: "ns",
            user,
            secrets: "X-Api-Key",
        }
    }

    fn reason(r: Result<ReadBack, RecordError>) -> String {
        match r {
            Err(RecordError::Corrupt(why)) => why,
            other => panic!("not corrupt: {other:?}"),
        }
    }

    #[test]
    fn a_record_acts_only_where_and_for_whom_it_was_made() {
        let r = record(Some("alice"));
        let id = r.intent_id.clone();
        assert_eq!(
            reader(Some("alice")).check(&id, r.clone()),
            Ok(ReadBack::Mine(r.clone(), false))
        );
        assert_eq!(
            reader(Some("bob")).check(&id, r.clone()),
            Ok(ReadBack::Theirs)
        );
        assert_eq!(reader(None).check(&id, r.clone()), Ok(ReadBack::Theirs));
        // A record made with no user (or by a build before users) is no signed-in user's.
        let none = record(None);
        let none_id = none.intent_id.clone();
        assert_eq!(
            reader(Some("alice")).check(&none_id, none.clone()),
            Ok(ReadBack::Theirs)
        );
        assert!(matches!(
            reader(None).check(&none_id, none),
            Ok(ReadBack::Mine(_, false))
        ));
    }

    #[test]
    fn a_record_that_disagrees_with_where_it_was_read_or_could_go_elsewhere_is_corrupt() {
        let r = record(Some("alice"));
        let id = r.intent_id.clone();
        let alice = reader(Some("alice"));
        let mut moved = r.clone();
        moved.namespace = "other".into();
        assert_eq!(
            reason(alice.check(&id, moved)),
            "its namespace is not the one it was read in"
        );
        let not_its_key = "its intentId or requestId is not the key it was read at";
        assert_eq!(reason(alice.check("another-id", r.clone())), not_its_key);
        let mut forged = r.clone();
        forged.request_id = "r-2".into();
        assert_eq!(reason(alice.check(&id, forged)), not_its_key);
        for path in [
            "7/account/a-1/lock_amount",
            "/account/../admin",
            "/a?x",
            "/a#x",
        ] {
            let mut tampered = r.clone();
            tampered.command.path = path.into();
            assert!(
                reason(alice.check(&id, tampered)).starts_with("path `"),
                "{path}"
            );
        }
        let mut get = r.clone();
        get.command.method = "GET".into();
        assert_eq!(
            reason(alice.check(&id, get)),
            "its method is not a command's"
        );
        // Tampering is told before ownership: another user's tampered record is quarantined too.
        let mut theirs = r;
        theirs.command.path = "@evil/x".into();
        assert!(reader(Some("bob")).check(&id, theirs).is_err());
    }

    #[test]
    fn a_stored_credential_is_taken_out() {
        let mut r = record(None);
        let id = r.intent_id.clone();
        r.command.headers = vec![
            ("authorization".into(), "Bearer a".into()),
            ("Cookie".into(), "s=1".into()),
            ("PROXY-AUTHORIZATION".into(), "p".into()),
            ("x-api-key".into(), "k".into()),
            ("Command-Header-Trace".into(), "t".into()),
        ];
        let Ok(ReadBack::Mine(read, true)) = reader(None).check(&id, r) else {
            panic!("not scrubbed");
        };
        assert_eq!(
            read.command.headers,
            vec![("Command-Header-Trace".into(), "t".into())]
        );
        assert!(is_secret("Authorization", "") && !is_secret("X-Api-Key", ""));
    }
}
