//! What a caller's callbacks and other tabs answer, read from the plain
//! value the executor hands over whole ([`JsonValue`], one crossing): what
//! an answer means is decided here, natively tested; the executor carries
//! it. What JSON cannot carry reaches here as a value of no kind that is
//! asked for (the executor's choice), so it answers as a wrong shape does.

use crate::journal::IntentState;
use crate::machine::{Availability, ConfirmAnswer, LookAnswer, Said};
use crate::protocol::JsonValue;

/// `v[key]`, when it is a string.
pub(super) fn text(v: &JsonValue, key: &str) -> Option<String> {
    v.get(key)?.as_str().map(str::to_owned)
}

fn flag(v: &JsonValue, key: &str) -> Option<bool> {
    match v.get(key)? {
        JsonValue::Bool(b) => Some(*b),
        _ => None,
    }
}

fn integer(v: &JsonValue, key: &str) -> Option<i64> {
    v.get(key)?.as_i64()
}

/// Appended, with the `version` and `commandId` a stream or a confirmer names.
pub(super) fn appended(stream: &JsonValue) -> ConfirmAnswer {
    ConfirmAnswer::Appended {
        version: integer(stream, "version"),
        command_id: text(stream, "commandId"),
    }
}

/// What history said of each intent `items` names by its aggregateId and
/// requestId (one that names none is no evidence).
pub(super) fn said(items: &[JsonValue], answer: fn(&JsonValue) -> ConfirmAnswer) -> Vec<Said> {
    items
        .iter()
        .filter_map(|a| {
            Some(Said {
                aggregate_id: text(a, "aggregateId")?,
                request_id: text(a, "requestId")?,
                answer: answer(a),
            })
        })
        .collect()
}

/// A confirmer's `{appended, version?, commandId?}`.
pub fn confirmed(answer: &JsonValue) -> ConfirmAnswer {
    match flag(answer, "appended") {
        Some(true) => appended(answer),
        Some(false) => ConfirmAnswer::NotAppended,
        None => {
            ConfirmAnswer::Unavailable("the confirmer did not say `appended: true|false`".into())
        }
    }
}

/// `confirmBatch`'s answers, each matched to its question by the
/// aggregateId and requestId it names; one that names none is no evidence.
pub fn confirmed_batch(answers: &JsonValue) -> LookAnswer {
    let JsonValue::Array(answers) = answers else {
        return LookAnswer::Unavailable("confirmBatch() did not answer an array".into());
    };
    LookAnswer::Said {
        said: said(answers, confirmed),
        complete: false,
    }
}

/// The caller's `headers()` answer: an object of strings (its other
/// values left out), or nothing.
pub fn headers(value: &JsonValue) -> Result<Vec<(String, String)>, String> {
    match value {
        JsonValue::Null => Ok(Vec::new()),
        JsonValue::Object(entries) => Ok(entries
            .iter()
            .filter_map(|(k, v)| Some((k.clone(), v.as_str()?.to_owned())))
            .collect()),
        _ => Err("headers() must return an object of strings".into()),
    }
}

/// An announcement another tab made: the intent and its state (`None`:
/// one this build does not know, as a newer build's).
pub fn announced(message: &JsonValue) -> Option<(String, Option<IntentState>)> {
    let state = text(message, "state")?;
    Some((text(message, "intentId")?, IntentState::of_name(&state)))
}

/// Another tab's word on history (the probe's channel): whose history
/// (`source`), which tab said it (`from`), and what it found.
pub fn heard(message: &JsonValue) -> Option<(String, u64, Availability)> {
    if flag(message, "history") != Some(true) {
        return None;
    }
    let number = |k| integer(message, k).unwrap_or(0);
    let availability = match flag(message, "available")? {
        true => Availability::Up,
        false => Availability::Down {
            since: number("since"),
            next_look_at: number("nextLookAt"),
            failures: number("failures") as u32,
        },
    };
    let from = integer(message, "from").map_or(0, |f| f.max(0) as u64);
    Some((
        text(message, "source").unwrap_or_default(),
        from,
        availability,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn json(text: &str) -> JsonValue {
        serde_json::from_str(text).unwrap()
    }

    #[test]
    fn a_confirmer_says_appended_with_its_facts_or_not_or_nothing() {
        assert_eq!(
            confirmed(&json(
                r#"{"appended":true,"version":7,"commandId":"c","x":1}"#
            )),
            ConfirmAnswer::Appended {
                version: Some(7),
                command_id: Some("c".into())
            }
        );
        assert_eq!(
            confirmed(&json(r#"{"appended":true,"version":"7"}"#)),
            ConfirmAnswer::Appended {
                version: None,
                command_id: None
            }
        );
        assert_eq!(
            confirmed(&json(r#"{"appended":false}"#)),
            ConfirmAnswer::NotAppended
        );
        for unsure in [r#"{"appended":"yes"}"#, "{}", "null", "[true]", "false"] {
            assert!(
                matches!(confirmed(&json(unsure)), ConfirmAnswer::Unavailable(_)),
                "{unsure}"
            );
        }
    }

    #[test]
    fn a_batch_answer_names_its_intents_or_is_no_evidence() {
        let said = confirmed_batch(&json(
            r#"[{"aggregateId":"a","requestId":"r","appended":false},{"requestId":"s","appended":true},7]"#,
        ));
        assert_eq!(
            said,
            LookAnswer::Said {
                said: vec![Said {
                    aggregate_id: "a".into(),
                    request_id: "r".into(),
                    answer: ConfirmAnswer::NotAppended
                }],
                complete: false
            }
        );
        assert!(matches!(
            confirmed_batch(&json(r#"{"aggregateId":"a"}"#)),
            LookAnswer::Unavailable(_)
        ));
    }

    #[test]
    fn headers_are_an_object_of_strings_or_nothing() {
        assert_eq!(
            headers(&json(r#"{"a":"1","n":2,"b":"x"}"#)),
            Ok(vec![("a".into(), "1".into()), ("b".into(), "x".into())])
        );
        assert_eq!(headers(&JsonValue::Null), Ok(Vec::new()));
        for wrong in [r#"["a"]"#, r#""a""#, "true"] {
            assert!(headers(&json(wrong)).is_err(), "{wrong}");
        }
    }

    #[test]
    fn another_tab_is_heard_on_intents_and_on_history() {
        // A state this build does not know (a newer build's) is heard as unsettled.
        assert_eq!(
            announced(&json(r#"{"version":1,"intentId":"i","state":"sent"}"#)),
            Some(("i".into(), None))
        );
        assert_eq!(
            announced(&json(r#"{"version":1,"intentId":"i","state":"withdrawn"}"#)),
            Some(("i".into(), Some(IntentState::Withdrawn)))
        );
        assert_eq!(announced(&json(r#"{"intentId":"i"}"#)), None);
        assert_eq!(
            heard(&json(
                r#"{"history":true,"available":false,"since":5,"nextLookAt":9,"failures":2,"source":"s","from":3}"#
            )),
            Some((
                "s".into(),
                3,
                Availability::Down {
                    since: 5,
                    next_look_at: 9,
                    failures: 2
                }
            ))
        );
        assert_eq!(
            heard(&json(r#"{"history":true,"available":true}"#)),
            Some((String::new(), 0, Availability::Up))
        );
        assert_eq!(heard(&json(r#"{"available":true}"#)), None);
        assert_eq!(heard(&json(r#"{"history":true}"#)), None);
    }
}
