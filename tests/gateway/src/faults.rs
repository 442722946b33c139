//! Scriptable faults: rules `{match, fault, times}` and a seeded random mode,
//! controlled under `/__gateway/faults`. Each fault acts at the moment a real
//! deployment would fail.

use std::sync::Mutex;

use serde::{Deserialize, Serialize};
use wow_command_client::core::protocol::CommandStage;

/// The kinds of fault.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FaultKind {
    /// A validation error at SENT; nothing stored.
    RejectBeforeSend,
    /// The connection is closed before the command reaches the bus.
    DropRequest,
    /// A proxy's 503 with an HTML body; nothing stored.
    Unavailable,
    /// Stored, then the connection is reset instead of answering.
    DropResponseAfterAppend,
    /// Stored, and PROCESSED reports a failure.
    FailProcessedAfterAppend,
    /// Processing starts `delayMs` late (the append still happens).
    Delay,
    /// The SSE stream is cut after the given stage's event.
    CutStreamAfter,
    /// The given downstream stage (after the append) reports a failure.
    DownstreamFail,
    /// The given downstream stage (default SNAPSHOT) runs `delayMs` late
    /// (default 2000); until then the aggregate's snapshot stays at the
    /// version before the append, as a lagging snapshot store would.
    DownstreamDelay,
    /// The command is delivered twice; the store rejects the second.
    DuplicateDelivery,
    /// The requestId pre-check says "maybe"; the store says no.
    PrecheckFalsePositive,
    /// Event queries fail: confirmation is impossible.
    QueryUnavailable,
    /// Queries (event queries, snapshot reads) are held and never answered,
    /// as over a black-holed connection: only the client's own deadline
    /// ends them.
    QueryHang,
    /// Answers with another request's success (its requestId and
    /// aggregateId); nothing is processed or stored.
    MisrouteAnswer,
    /// A proxy in front of the gateway answers `307` with `Location:
    /// location`: nothing reaches the bus (a client that follows it re-sends
    /// the command, body and headers, to the redirect's host).
    Redirect,
    /// Processed and stored as usual, but the JSON answer's `result` carries
    /// `bytes` bytes of padding: an answer larger than any Wow answer.
    LargeAnswer,
    /// Not a failure: each SSE event after the first is held `delayMs`
    /// (default 50) after the previous one, so stream latency can be measured
    /// against known gaps.
    StageGap,
}

/// What a rule matches; every given field must match.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct Match {
    /// HTTP method.
    pub method: Option<String>,
    /// A path pattern: `*` matches any run of characters.
    pub path: Option<String>,
    /// Aggregate id.
    pub aggregate_id: Option<String>,
    /// Request id.
    pub request_id: Option<String>,
    /// Only the n-th matching request (1-based).
    pub nth: Option<u32>,
}

/// One rule.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Rule {
    /// What it matches.
    #[serde(rename = "match", default)]
    pub matcher: Match,
    /// The fault.
    pub fault: FaultKind,
    /// How many times it may fire (default: unlimited).
    #[serde(default)]
    pub times: Option<u32>,
    /// Stage parameter (`cut_stream_after`, `downstream_fail`).
    #[serde(default)]
    pub stage: Option<CommandStage>,
    /// Delay parameter in ms (`delay`).
    #[serde(default)]
    pub delay_ms: Option<u64>,
    /// How long the rule holds once added, in ms (default: until cleared):
    /// "history down for a while".
    #[serde(default)]
    pub for_ms: Option<u64>,
    /// Where a `redirect` points.
    #[serde(default)]
    pub location: Option<String>,
    /// A `large_answer`'s padding, in bytes (default 1 MiB).
    #[serde(default)]
    pub bytes: Option<usize>,
    /// When it stops holding (from `for_ms`, set when added).
    #[serde(skip)]
    pub until: Option<std::time::Instant>,
    /// Matching requests seen so far.
    #[serde(default)]
    pub seen: u32,
}

/// Seeded random faults.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct RandomMode {
    /// The seed (default: the gateway's `--seed`).
    #[serde(default)]
    pub seed: Option<u64>,
    /// Probability per fault kind.
    pub rates: std::collections::BTreeMap<FaultKind, f64>,
}

/// A fault chosen for one request.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Active {
    /// The kind.
    pub kind: FaultKind,
    /// Stage parameter.
    pub stage: Option<CommandStage>,
    /// Delay parameter.
    pub delay_ms: Option<u64>,
    /// A redirect's target.
    pub location: Option<String>,
    /// A large answer's padding.
    pub bytes: Option<usize>,
}

/// A fault that fired, for `GET /__gateway/faults`.
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Fired {
    /// The kind.
    pub fault: FaultKind,
    /// Request method.
    pub method: String,
    /// Request path.
    pub path: String,
    /// Aggregate id, when known.
    pub aggregate_id: Option<String>,
    /// Request id, when known.
    pub request_id: Option<String>,
}

/// The request facts rules match on.
pub struct Subject<'a> {
    /// Method.
    pub method: &'a str,
    /// Path.
    pub path: &'a str,
    /// Aggregate id.
    pub aggregate_id: Option<&'a str>,
    /// Request id.
    pub request_id: Option<&'a str>,
}

#[derive(Default)]
struct State {
    rules: Vec<Rule>,
    random: Option<(RandomMode, u64)>,
    fired: Vec<Fired>,
}

/// The fault table.
#[derive(Default)]
pub struct Faults {
    state: Mutex<State>,
}

fn glob(pattern: &str, text: &str) -> bool {
    match pattern.split_once('*') {
        None => pattern == text,
        Some((head, rest)) => {
            text.starts_with(head)
                && (0..=text.len() - head.len()).any(|i| {
                    text.is_char_boundary(head.len() + i) && glob(rest, &text[head.len() + i..])
                })
        }
    }
}

impl Match {
    fn matches(&self, s: &Subject) -> bool {
        self.method
            .as_deref()
            .is_none_or(|m| m.eq_ignore_ascii_case(s.method))
            && self.path.as_deref().is_none_or(|p| glob(p, s.path))
            && self
                .aggregate_id
                .as_deref()
                .is_none_or(|a| Some(a) == s.aggregate_id)
            && self
                .request_id
                .as_deref()
                .is_none_or(|r| Some(r) == s.request_id)
    }
}

/// splitmix64: a tiny seeded generator, so a seed replays the same faults.
fn next(state: &mut u64) -> f64 {
    *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    ((z ^ (z >> 31)) >> 11) as f64 / (1u64 << 53) as f64
}

impl Faults {
    /// Adds rules and/or sets the random mode.
    pub fn add(&self, rules: Vec<Rule>, random: Option<RandomMode>) {
        let mut st = self.state.lock().unwrap();
        let now = std::time::Instant::now();
        st.rules.extend(rules.into_iter().map(|mut r| {
            r.until = r
                .for_ms
                .map(|ms| now + std::time::Duration::from_millis(ms));
            r
        }));
        if let Some(r) = random {
            let seed = r.seed.unwrap_or(0);
            st.random = Some((r, seed));
        }
    }

    /// Clears rules, random mode and the fired log.
    pub fn clear(&self) {
        *self.state.lock().unwrap() = State::default();
    }

    /// Rules and what fired, as JSON.
    pub fn report(&self) -> serde_json::Value {
        let st = self.state.lock().unwrap();
        serde_json::json!({
            "rules": st.rules,
            "random": st.random.as_ref().map(|(r, _)| r),
            "fired": st.fired,
        })
    }

    /// Picks the fault for a request among `allowed` kinds, and logs it.
    pub fn pick(&self, s: &Subject, allowed: &[FaultKind]) -> Option<Active> {
        let mut st = self.state.lock().unwrap();
        let mut chosen = None;
        let now = std::time::Instant::now();
        for rule in st.rules.iter_mut() {
            let over = rule.times == Some(0) || rule.until.is_some_and(|t| now >= t);
            if !allowed.contains(&rule.fault) || over || !rule.matcher.matches(s) {
                continue;
            }
            rule.seen += 1;
            if rule.matcher.nth.is_some_and(|n| n != rule.seen) {
                continue;
            }
            if let Some(t) = rule.times.as_mut() {
                *t -= 1;
            }
            chosen = Some(Active {
                kind: rule.fault,
                stage: rule.stage,
                delay_ms: rule.delay_ms,
                location: rule.location.clone(),
                bytes: rule.bytes,
            });
            break;
        }
        if chosen.is_none() {
            if let Some((mode, rng)) = st.random.as_mut() {
                for (&kind, &rate) in mode.rates.iter() {
                    let roll = next(rng);
                    if chosen.is_none() && allowed.contains(&kind) && roll < rate {
                        let stage_roll = next(rng);
                        let stage = match kind {
                            FaultKind::CutStreamAfter => Some(if stage_roll < 0.5 {
                                CommandStage::Sent
                            } else {
                                CommandStage::Processed
                            }),
                            FaultKind::DownstreamFail => Some(CommandStage::Snapshot),
                            _ => None,
                        };
                        chosen = Some(Active {
                            kind,
                            stage,
                            delay_ms: None,
                            location: None,
                            bytes: None,
                        });
                    }
                }
            }
        }
        if let Some(a) = &chosen {
            st.fired.push(Fired {
                fault: a.kind,
                method: s.method.to_owned(),
                path: s.path.to_owned(),
                aggregate_id: s.aggregate_id.map(str::to_owned),
                request_id: s.request_id.map(str::to_owned),
            });
        }
        chosen
    }

    /// Logs a fault that fired inside processing (e.g. the second delivery's rejection).
    pub fn log(&self, fired: Fired) {
        self.state.lock().unwrap().fired.push(fired);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn glob_patterns() {
        assert!(glob("/account/*/prepare", "/account/a1/prepare"));
        assert!(glob("*", "/x"));
        assert!(!glob("/account/*/prepare", "/account/a1/entry"));
        assert!(glob("/cart*", "/cart/x"));
    }

    #[test]
    fn rules_fire_times_and_nth() {
        let f = Faults::default();
        let rule = |fault, times, nth| Rule {
            matcher: Match {
                nth,
                ..Match::default()
            },
            fault,
            times,
            stage: None,
            delay_ms: None,
            for_ms: None,
            location: None,
            bytes: None,
            until: None,
            seen: 0,
        };
        f.add(vec![rule(FaultKind::Unavailable, Some(1), Some(2))], None);
        let s = Subject {
            method: "POST",
            path: "/a",
            aggregate_id: None,
            request_id: None,
        };
        let all = [FaultKind::Unavailable];
        assert_eq!(f.pick(&s, &all), None);
        assert_eq!(f.pick(&s, &all).unwrap().kind, FaultKind::Unavailable);
        assert_eq!(f.pick(&s, &all), None);
        assert_eq!(f.report()["fired"].as_array().unwrap().len(), 1);
    }

    #[test]
    fn a_rule_for_a_while_stops_holding_after_it() {
        let f = Faults::default();
        let rule: Rule =
            serde_json::from_value(serde_json::json!({"fault": "query_unavailable", "forMs": 50}))
                .unwrap();
        f.add(vec![rule], None);
        let s = Subject {
            method: "POST",
            path: "/account/event/count",
            aggregate_id: None,
            request_id: None,
        };
        let kinds = [FaultKind::QueryUnavailable];
        assert!(f.pick(&s, &kinds).is_some() && f.pick(&s, &kinds).is_some());
        std::thread::sleep(std::time::Duration::from_millis(60));
        assert_eq!(f.pick(&s, &kinds), None);
    }

    #[test]
    fn random_mode_replays_with_the_same_seed() {
        let run = || {
            let f = Faults::default();
            let rates = [(FaultKind::Unavailable, 0.3)].into_iter().collect();
            f.add(
                vec![],
                Some(RandomMode {
                    seed: Some(7),
                    rates,
                }),
            );
            let s = Subject {
                method: "POST",
                path: "/a",
                aggregate_id: None,
                request_id: None,
            };
            (0..50)
                .map(|_| f.pick(&s, &[FaultKind::Unavailable]).is_some())
                .collect::<Vec<_>>()
        };
        let a = run();
        assert_eq!(a, run());
        assert!(a.iter().any(|x| *x) && a.iter().any(|x| !*x));
    }
}
