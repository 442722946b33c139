//! The history gate: batching, matching, the probe's schedule, and a
//! property simulation of any interleaving of questions, failed and
//! answered looks, wake-ups and other tabs' word.

use super::history::*;
use super::ConfirmAnswer;
use crate::protocol::{AggregateRoute, ConfirmQuery};

fn query(resource: &str, aggregate: &str, request: &str) -> ConfirmQuery {
    ConfirmQuery {
        route: AggregateRoute::new(resource),
        aggregate_id: aggregate.into(),
        request_id: request.into(),
    }
}

fn found(aggregate: &str, request: &str, version: i64) -> Said {
    Said {
        aggregate_id: aggregate.into(),
        request_id: request.into(),
        answer: ConfirmAnswer::Appended {
            version: Some(version),
            command_id: Some(format!("c-{request}")),
        },
    }
}

fn answers(gate: &mut HistoryGate) -> Vec<(Ticket, ConfirmAnswer)> {
    std::iter::from_fn(|| gate.poll_answer()).collect()
}

fn unavailable(why: &str) -> LookAnswer {
    LookAnswer::Unavailable(why.into())
}

#[test]
fn questions_asked_together_go_in_one_look_per_route_and_are_matched_by_both_ids() {
    let mut gate = HistoryGate::new(GateConfig::default(), 1);
    let a = gate.ask(0, query("account", "a1", "r1"), false, 0);
    let b = gate.ask(0, query("account", "a2", "r2"), false, 0);
    let c = gate.ask(0, query("cart", "c1", "r3"), true, 0);
    let first = gate.poll_look(0).unwrap();
    assert_eq!(first.questions.len(), 2, "one look for account's two");
    let second = gate.poll_look(0).unwrap();
    assert_eq!(second.questions, [query("cart", "c1", "r3")]);
    assert!(second.need_facts);
    assert!(gate.poll_look(0).is_none(), "one look per route at a time");
    // Asked while account's look runs: it waits for the next.
    let d = gate.ask(1, query("account", "a3", "r4"), false, 0);
    assert!(gate.poll_look(1).is_none());
    // r2 appended on another aggregate is not r2 on a2: no evidence, and
    // the complete answer says a2 has no r2.
    gate.handle_look(
        2,
        first.id,
        LookAnswer::Said {
            said: vec![found("a1", "r1", 4), found("zz", "r2", 1)],
            complete: true,
        },
    );
    let got = answers(&mut gate);
    assert_eq!(
        got,
        [
            (
                a,
                ConfirmAnswer::Appended {
                    version: Some(4),
                    command_id: Some("c-r1".into())
                }
            ),
            (b, ConfirmAnswer::NotAppended)
        ]
    );
    let next = gate.poll_look(2).unwrap();
    assert_eq!(next.questions, [query("account", "a3", "r4")]);
    gate.handle_look(3, second.id, unavailable("503"));
    gate.handle_look(3, next.id, unavailable("503"));
    let got = answers(&mut gate);
    assert!(got.iter().any(|(t, _)| *t == c) && got.iter().any(|(t, _)| *t == d));
}

#[test]
fn an_answer_cut_at_its_limit_is_evidence_only_for_what_it_holds() {
    let mut gate = HistoryGate::new(GateConfig::default(), 1);
    let a = gate.ask(0, query("account", "a1", "r1"), false, 0);
    let b = gate.ask(0, query("account", "a2", "r2"), false, 0);
    let look = gate.poll_look(0).unwrap();
    gate.handle_look(
        1,
        look.id,
        LookAnswer::Said {
            said: vec![found("a1", "r1", 2)],
            complete: false,
        },
    );
    let got = answers(&mut gate);
    assert_eq!(got[0].0, a);
    assert!(matches!(got[0].1, ConfirmAnswer::Appended { .. }));
    // b was not in what came back: not answered, never "not appended".
    assert_eq!(got[1].0, b);
    assert!(matches!(got[1].1, ConfirmAnswer::Unavailable(_)), "{got:?}");
    assert_eq!(gate.availability(), Availability::Up);
}

#[test]
fn while_history_is_down_one_look_at_a_time_decides_for_everyone() {
    // wait_ms 0: every look is "far", so drives are told at once.
    let config = GateConfig {
        base_ms: 1_000,
        cap_ms: 30_000,
        batch: 1_000,
        wait_ms: 0,
        overdue_ms: 31_000,
    };
    let mut gate = HistoryGate::new(config, 7);
    let first = gate.ask(0, query("account", "a0", "r0"), false, 0);
    let look = gate.poll_look(0).unwrap();
    // A hundred more while the first look runs.
    let more: Vec<Ticket> = (1..=100)
        .map(|i| {
            gate.ask(
                1,
                query("account", &format!("a{i}"), &format!("r{i}")),
                false,
                0,
            )
        })
        .collect();
    assert!(gate.poll_look(1).is_none());
    gate.handle_look(2, look.id, unavailable("503"));
    let told = answers(&mut gate);
    assert_eq!(told.len(), 101, "a failed look is everyone's failed try");
    assert!(told.iter().any(|(t, _)| *t == first));
    assert!(told
        .iter()
        .all(|(_, a)| matches!(a, ConfirmAnswer::Unavailable(_))));
    let Availability::Down {
        since,
        next_look_at,
        failures,
    } = gate.availability()
    else {
        panic!("down")
    };
    assert_eq!((since, failures), (2, 1));
    assert!((502..=1_002).contains(&next_look_at), "{next_look_at}");
    // They ask again before the next look is due: told at once, no query.
    for (i, _) in more.iter().enumerate() {
        gate.ask(
            3,
            query("account", &format!("a{i}"), &format!("r{i}")),
            false,
            0,
        );
    }
    let told = answers(&mut gate);
    assert_eq!(told.len(), 100);
    assert!(
        told.iter()
            .all(|(_, a)| *a == ConfirmAnswer::Unavailable("503".into())),
        "told why the last look failed"
    );
    assert!(gate.poll_look(3).is_none(), "no query for them");
    // Escalated, they wait at rest; the probe asks about them together.
    for i in 1..=100 {
        gate.note(
            4,
            query("account", &format!("a{i}"), &format!("r{i}")),
            true,
        );
    }
    assert!(gate.poll_look(next_look_at - 1).is_none());
    let probe = gate.poll_look(next_look_at).unwrap();
    assert_eq!(probe.questions.len(), 100, "one look for all of them");
    assert!(gate.poll_look(next_look_at).is_none());
    assert_eq!(
        gate.poll_timeout(),
        None,
        "no timer while the look runs: its answer sets the next"
    );
    // History is back: one answer for all.
    gate.handle_look(
        next_look_at + 5,
        probe.id,
        LookAnswer::Said {
            said: vec![],
            complete: true,
        },
    );
    assert_eq!(gate.availability(), Availability::Up);
    assert_eq!(answers(&mut gate).len(), 100);
}

#[test]
fn only_the_gate_that_leads_looks_while_history_is_down_and_others_hear_it() {
    let mut leader = HistoryGate::new(GateConfig::default(), 1);
    let mut other = HistoryGate::new(
        GateConfig {
            wait_ms: 0,
            ..GateConfig::default()
        },
        2,
    );
    leader.ask(0, query("account", "a", "r"), false, 0);
    let look = leader.poll_look(0).unwrap();
    leader.handle_look(1, look.id, unavailable("503"));
    answers(&mut leader);
    let down = leader.availability();
    let t = other.ask(1, query("account", "b", "s"), false, 0);
    other.heard(down);
    other.lead(false);
    assert_eq!(
        answers(&mut other),
        [(
            t,
            ConfirmAnswer::Unavailable("history did not answer another tab's look".into())
        )],
        "the leader's failed look counts for the other tab's question"
    );
    other.ask(2, query("account", "b", "s"), false, 0);
    assert_eq!(
        answers(&mut other).len(),
        1,
        "told at once: history does not answer"
    );
    let noted = other.note(2, query("account", "b", "s"), false);
    let Availability::Down { next_look_at, .. } = down else {
        panic!("{down:?}")
    };
    let overdue = next_look_at + GateConfig::default().overdue_ms as i64;
    assert!(
        other.poll_look(overdue - 1).is_none(),
        "a follower does not look while the leader's look may still come"
    );
    assert_eq!(
        other.poll_timeout(),
        Some(overdue),
        "but it looks once the leader's is overdue"
    );
    other.heard(Availability::Up);
    assert!(answers(&mut other).is_empty());
    let again = other.ask(3, query("account", "b", "s"), false, 0);
    let look = other
        .poll_look(3)
        .expect("history is back: the follower asks");
    other.handle_look(
        4,
        look.id,
        LookAnswer::Said {
            said: vec![],
            complete: true,
        },
    );
    assert_eq!(
        answers(&mut other),
        [
            (noted, ConfirmAnswer::NotAppended),
            (again, ConfirmAnswer::NotAppended)
        ],
        "the probe's question waited, and goes with the first look"
    );
}

#[test]
fn a_blip_is_looked_through_and_a_longer_outage_is_told_at_once() {
    let mut gate = HistoryGate::new(GateConfig::default(), 5);
    let mut now = 0;
    let mut told_at_once = Vec::new();
    for round in 0..8 {
        let t = gate.ask(now, query("account", "a", "r"), false, 0);
        let at_once = gate.poll_answer();
        let far = match gate.availability() {
            Availability::Down { next_look_at, .. } => next_look_at - now > 5_000,
            Availability::Up => false,
        };
        assert_eq!(
            at_once.is_some(),
            far,
            "round {round}: told at once only when the next look is far"
        );
        told_at_once.push(at_once.is_some());
        if let Some((tt, _)) = at_once {
            assert_eq!(tt, t);
        } else {
            // It waits: the next look is due (at once when up).
            now = gate.poll_timeout().unwrap_or(now).max(now);
            let look = gate.poll_look(now).expect("its look");
            gate.handle_look(now, look.id, unavailable("503"));
            assert_eq!(
                answers(&mut gate),
                [(t, ConfirmAnswer::Unavailable("503".into()))]
            );
        }
        now += 100;
    }
    assert!(
        !told_at_once[0] && !told_at_once[1],
        "the first looks are waited for: {told_at_once:?}"
    );
    assert!(
        told_at_once.iter().any(|x| *x),
        "later, with the next look far, at once: {told_at_once:?}"
    );
}

#[test]
fn a_person_asking_looks_now_even_while_history_is_down_and_the_gate_does_not_lead() {
    let mut gate = HistoryGate::new(
        GateConfig {
            wait_ms: 0,
            ..GateConfig::default()
        },
        1,
    );
    gate.ask(0, query("account", "a", "r"), false, 0);
    let look = gate.poll_look(0).unwrap();
    gate.handle_look(1, look.id, unavailable("503"));
    answers(&mut gate);
    gate.lead(false);
    gate.ask(2, query("account", "a", "r"), false, 0);
    assert_eq!(answers(&mut gate).len(), 1, "a drive is told at once");
    let t = gate.ask_now(3, query("account", "a", "r"), false, 0);
    let now = gate.poll_look(3).expect("a person's question goes now");
    assert_eq!(now.questions, [query("account", "a", "r")]);
    gate.handle_look(4, now.id, unavailable("still 503"));
    assert_eq!(
        answers(&mut gate),
        [(t, ConfirmAnswer::Unavailable("still 503".into()))]
    );
}

#[test]
fn a_look_answers_questions_asked_after_it_only_about_attempts_sent_before_it() {
    let mut gate = HistoryGate::new(GateConfig::default(), 1);
    gate.ask(0, query("account", "a", "r"), true, 0);
    gate.ask(0, query("account", "b", "s"), true, 0);
    let look = gate.poll_look(0).unwrap();
    gate.handle_look(
        10,
        look.id,
        LookAnswer::Said {
            said: vec![found("a", "r", 3)],
            complete: true,
        },
    );
    answers(&mut gate);
    // The intent a look found appended, driven right after: no query.
    let t = gate.ask(20, query("account", "a", "r"), true, 5);
    assert!(matches!(
        answers(&mut gate)[..],
        [(tt, ConfirmAnswer::Appended { version: Some(3), .. })] if tt == t
    ));
    // Once used, gone: asked again, it is asked.
    gate.ask(21, query("account", "a", "r"), true, 5);
    assert!(answers(&mut gate).is_empty());
    assert!(gate.poll_look(21).is_some());
    // "Not appended" as of 10 says nothing of an attempt sent at 15.
    gate.ask(22, query("account", "b", "s"), true, 15);
    assert!(answers(&mut gate).is_empty());
}

#[test]
fn the_probe_backs_off_to_its_cap_and_a_wake_looks_at_once() {
    let config = GateConfig {
        base_ms: 1_000,
        cap_ms: 30_000,
        batch: 1_000,
        ..GateConfig::default()
    };
    let mut gate = HistoryGate::new(config, 3);
    let mut now = 0;
    let mut pauses = Vec::new();
    for _ in 0..10 {
        gate.ask(now, query("account", "a", "r"), false, 0);
        let look = gate.poll_look(now).unwrap();
        gate.handle_look(now, look.id, unavailable("503"));
        answers(&mut gate);
        let next = gate.poll_timeout().unwrap();
        pauses.push(next - now);
        now = next;
    }
    for (n, pause) in pauses.iter().enumerate() {
        let d = (1_000i64 << n).min(30_000);
        assert!((d / 2..=d).contains(pause), "pause {n}: {pause} of {d}");
    }
    gate.ask(now + 1, query("account", "a", "r"), false, 0);
    assert!(gate.poll_look(now - 10).is_none());
    gate.wake(now - 10);
    assert!(gate.poll_look(now - 10).is_some(), "woken: looks now");
}

#[test]
fn a_confirmer_answer_is_matched_per_question_and_one_it_does_not_name_is_unanswered() {
    let mut gate = HistoryGate::new(GateConfig::default(), 1);
    let a = gate.ask(0, query("account", "a", "r"), false, 0);
    let b = gate.ask(0, query("account", "b", "s"), false, 0);
    let look = gate.poll_look(0).unwrap();
    let said = |a: &str, r: &str| Said {
        aggregate_id: a.into(),
        request_id: r.into(),
        answer: ConfirmAnswer::NotAppended,
    };
    gate.handle_look(
        1,
        look.id,
        LookAnswer::Said {
            said: vec![said("a", "r"), said("b", "zz")],
            complete: false,
        },
    );
    let got = answers(&mut gate);
    assert_eq!(got[0], (a, ConfirmAnswer::NotAppended));
    assert_eq!(got[1].0, b);
    assert!(matches!(got[1].1, ConfirmAnswer::Unavailable(_)), "{got:?}");
}

#[test]
fn a_question_with_no_route_is_told_at_once() {
    let mut gate = HistoryGate::new(GateConfig::default(), 1);
    let t = gate.ask(0, query("", "a", "r"), false, 0);
    assert!(matches!(answers(&mut gate)[..], [(tt, ConfirmAnswer::Unavailable(_))] if tt == t));
    assert!(gate.poll_look(0).is_none());
}

#[cfg(not(target_arch = "wasm32"))]
mod simulation {
    use super::*;
    use proptest::prelude::*;

    #[derive(Clone, Debug)]
    enum Step {
        /// Intent `i` asks, its last attempt sent `ago` ms before now.
        Ask(usize, i64),
        /// Time passes.
        Wait(i64),
        /// Intent `i` is appended now (a delayed attempt lands).
        Append(usize),
        /// The running look (if any) ends: history down, or answering,
        /// its answer complete or cut.
        End { up: bool, complete: bool },
        /// A wake-up (online, visible, resume).
        Wake,
        /// Another tab's word.
        Heard(bool),
    }

    fn step() -> impl Strategy<Value = Step> {
        prop_oneof![
            4 => (0..40usize, 0..5_000i64).prop_map(|(i, ago)| Step::Ask(i, ago)),
            3 => (1..20_000i64).prop_map(Step::Wait),
            1 => (0..40usize).prop_map(Step::Append),
            4 => (any::<bool>(), any::<bool>()).prop_map(|(up, complete)| Step::End { up, complete }),
            1 => Just(Step::Wake),
            1 => any::<bool>().prop_map(Step::Heard),
        ]
    }

    fn appended_said(hits: &[(String, String)]) -> Vec<Said> {
        hits.iter()
            .map(|(a, r)| Said {
                aggregate_id: a.clone(),
                request_id: r.clone(),
                answer: ConfirmAnswer::Appended {
                    version: Some(1),
                    command_id: None,
                },
            })
            .collect()
    }

    fn ids(i: usize) -> (String, String) {
        (format!("agg-{}", i % 7), format!("req-{i}"))
    }

    /// A look that ran: when it was answered, what it asked, and what it
    /// said (absent pairs are "not appended" only when complete).
    struct Ran {
        at: i64,
        asked: Vec<(String, String)>,
        found: Vec<(String, String)>,
        complete: bool,
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]

        /// For any interleaving: each question is answered once; "not
        /// appended" only when a complete answer of a look made after its
        /// last attempt, that asked it, held no stream with both its ids;
        /// and once history answers, everything waiting is answered.
        #[test]
        fn never_not_appended_without_history_saying_so(steps in prop::collection::vec(step(), 1..150), seed in any::<u64>()) {
            let mut gate = HistoryGate::new(GateConfig { base_ms: 500, cap_ms: 8_000, batch: 5, ..GateConfig::default() }, seed);
            let mut now = 1_000_000i64;
            let mut appended: Vec<(String, String)> = Vec::new();
            let mut asked: std::collections::HashMap<Ticket, ((String, String), i64)> = Default::default();
            let mut answered: std::collections::HashSet<Ticket> = Default::default();
            let mut running: Vec<Look> = Vec::new();
            let mut ran: Vec<Ran> = Vec::new();
            let check = |gate: &mut HistoryGate, answered: &mut std::collections::HashSet<Ticket>,
                         asked: &std::collections::HashMap<Ticket, ((String, String), i64)>, ran: &[Ran]| -> Result<(), TestCaseError> {
                while let Some((t, answer)) = gate.poll_answer() {
                    prop_assert!(answered.insert(t), "ticket {} answered twice", t);
                    let (pair, not_before) = &asked[&t];
                    if answer == ConfirmAnswer::NotAppended {
                        let said = ran.iter().any(|r| r.complete && r.at >= *not_before
                            && r.asked.contains(pair) && !r.found.contains(pair));
                        prop_assert!(said, "not appended without history saying so: {:?}", pair);
                    }
                    if let ConfirmAnswer::Appended { .. } = answer {
                        prop_assert!(ran.iter().any(|r| r.found.contains(pair)), "appended without a stream: {:?}", pair);
                    }
                }
                Ok(())
            };
            for s in steps {
                match s {
                    Step::Ask(i, ago) => {
                        let pair = ids(i);
                        let t = gate.ask(now, query("account", &pair.0, &pair.1), i % 2 == 0, now - ago);
                        asked.insert(t, (pair, now - ago));
                    }
                    Step::Wait(ms) => now += ms,
                    Step::Append(i) => appended.push(ids(i)),
                    Step::End { up, complete } => {
                        if let Some(look) = running.pop() {
                            let questions: Vec<(String, String)> = look.questions.iter()
                                .map(|q| (q.aggregate_id.clone(), q.request_id.clone())).collect();
                            let answer = if up {
                                // A cut answer holds some of what matched: here, the first half.
                                let mut hits: Vec<(String, String)> = questions.iter().filter(|p| appended.contains(p)).cloned().collect();
                                if !complete { hits.truncate(hits.len() / 2); }
                                ran.push(Ran { at: now, asked: questions, found: hits.clone(), complete });
                                LookAnswer::Said { said: appended_said(&hits), complete }
                            } else {
                                LookAnswer::Unavailable("down".into())
                            };
                            gate.handle_look(now, look.id, answer);
                        }
                    }
                    Step::Wake => gate.wake(now),
                    Step::Heard(up) => gate.heard(if up { Availability::Up } else {
                        Availability::Down { since: now, next_look_at: now + 1_000, failures: 1 }
                    }),
                }
                while let Some(look) = gate.poll_look(now) {
                    prop_assert!(!look.questions.is_empty() && look.questions.len() <= 5);
                    running.insert(0, look);
                }
                check(&mut gate, &mut answered, &asked, &ran)?;
            }
            // History comes back and stays: everything waiting is answered.
            gate.heard(Availability::Up);
            for _ in 0..200 {
                while let Some(look) = gate.poll_look(now) { running.push(look); }
                let Some(look) = running.pop() else { break };
                let questions: Vec<(String, String)> = look.questions.iter()
                    .map(|q| (q.aggregate_id.clone(), q.request_id.clone())).collect();
                let hits: Vec<(String, String)> = questions.iter().filter(|p| appended.contains(p)).cloned().collect();
                ran.push(Ran { at: now, asked: questions, found: hits.clone(), complete: true });
                gate.handle_look(now, look.id, LookAnswer::Said { said: appended_said(&hits), complete: true });
                check(&mut gate, &mut answered, &asked, &ran)?;
                now += 10;
            }
            prop_assert_eq!(gate.waiting(), 0);
            prop_assert_eq!(answered.len(), asked.len(), "every question answered");
        }

    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

        /// While history stays down, the looks an outage costs grow with its
        /// length over the cap (after the backoff's log2(cap/base) first
        /// steps), never with the number of intents waiting, each of which
        /// asks again 300 ms after each answer, as a machine does.
        #[test]
        fn looks_while_down_do_not_grow_with_the_intents(n in 1..400usize, outage_s in 1..180i64, seed in any::<u64>()) {
            let config = GateConfig::default();
            let mut gate = HistoryGate::new(config.clone(), seed);
            let mut looks = 0u64;
            let mut due: Vec<(i64, usize)> = (0..n).map(|i| (0, i)).collect();
            let mut tickets: std::collections::HashMap<Ticket, usize> = Default::default();
            let mut now = 0i64;
            while now < outage_s * 1_000 {
                let (ready, later): (Vec<_>, Vec<_>) = due.into_iter().partition(|(at, _)| *at <= now);
                due = later;
                for (_, i) in ready {
                    let t = gate.ask(now, query("account", &format!("a{i}"), &format!("r{i}")), false, 0);
                    tickets.insert(t, i);
                }
                while let Some(look) = gate.poll_look(now) {
                    looks += 1;
                    gate.handle_look(now, look.id, unavailable("down"));
                }
                while let Some((t, _)) = gate.poll_answer() {
                    due.push((now + 300, tickets[&t]));
                }
                now += 250;
            }
            let doubling = (config.cap_ms / config.base_ms).ilog2() as u64 + 1;
            let bound = doubling + (outage_s as u64 * 1_000) / (config.cap_ms / 2) + 2;
            prop_assert!(looks <= bound, "{} looks for {} intents over {} s (bound {})", looks, n, outage_s, bound);
        }
    }
}

/// Machines and the gate together, against a history that is down for a
/// while: whatever the faults and the outage, no intent is sent again
/// before the gate said "not appended" about its last attempt, nothing is
/// claimed that history does not hold, every drive ends, and the looks the
/// outage costs do not grow with the number of intents.
#[cfg(not(target_arch = "wasm32"))]
mod with_machines {
    use super::*;
    use crate::journal::tests::made_with;
    use crate::journal::{
        AggregateIdentity, CommandSpec, IntentRecord, NewIntent, RequestIdPolicy, WaitSpec,
    };
    use crate::machine::{Action, IntentMachine, MachineConfig, Status, TransportError};

    use crate::protocol::{
        CommandResult, CommandStage, ErrorCode, FunctionInfo, FunctionKind, JsonResponse,
        JsonValue, ResponseBody,
    };
    use proptest::prelude::*;

    const T0: i64 = 1_000_000;

    fn record(i: usize) -> IntentRecord {
        let id = format!("acct-{i}");
        let intent = NewIntent {
            scope: None,
            intent_key: None,
            aggregate: AggregateIdentity {
                resource: "account".into(),
                aggregate_id: id.clone(),
                ..AggregateIdentity::default()
            },
            command: CommandSpec {
                method: "PUT".into(),
                path: format!("/account/{id}/lock_amount"),
                body: JsonValue::empty_object().into(),
                expected_version: None,
                create: false,
                wait: WaitSpec {
                    stage: CommandStage::Processed,
                    context: None,
                    processor: None,
                    function: None,
                    tail_stage: None,
                    timeout_ms: 30_000,
                },
                headers: vec![],
            },
        };
        made_with("ns", RequestIdPolicy::default(), T0, intent, i as u64 + 1).0
    }

    fn success(r: &IntentRecord) -> JsonResponse {
        let result = CommandResult {
            id: "sig".into(),
            wait_command_id: "cmd".into(),
            stage: CommandStage::Processed,
            context_name: "transfer-service".into(),
            aggregate_name: "account".into(),
            tenant_id: "(0)".into(),
            aggregate_id: r.aggregate.aggregate_id.clone(),
            aggregate_version: Some(2),
            request_id: r.request_id.clone(),
            command_id: "cmd".into(),
            function: FunctionInfo::new(FunctionKind::Command, "t", "Account", "onCommand"),
            error_code: ErrorCode::Ok,
            error_msg: String::new(),
            binding_errors: vec![],
            result: JsonValue::empty_object(),
            signal_time: 0,
            succeeded: Some(true),
        };
        JsonResponse {
            status: 200,
            error_code_header: None,
            body: ResponseBody::CommandResult(result),
        }
    }

    /// What one send meets.
    #[derive(Clone, Copy, Debug)]
    enum Fault {
        /// Answered.
        None,
        /// Appended, then the answer is lost.
        LostAfterAppend,
        /// Lost before it arrived: nothing appended.
        LostBefore,
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 200, ..ProptestConfig::default() })]
        #[test]
        fn no_resend_before_not_appended_and_looks_do_not_grow_with_intents(
            n in 1..40usize,
            faults in prop::collection::vec(prop_oneof![
                1 => Just(Fault::None), 2 => Just(Fault::LostAfterAppend), 2 => Just(Fault::LostBefore)], 1..12),
            outage_ms in 0..120_000i64,
            seed in any::<u64>(),
        ) {
            let config = MachineConfig { max_confirms: 3, ..MachineConfig::default() };
            let gate_config = GateConfig::default();
            let mut gate = HistoryGate::new(gate_config.clone(), seed);
            let records: Vec<IntentRecord> = (0..n).map(record).collect();
            let mut machines: Vec<IntentMachine> = records.iter().enumerate()
                .map(|(i, r)| IntentMachine::new(r.clone(), config.clone(), seed ^ i as u64)).collect();
            let mut appended = vec![false; n];
            let mut sends = vec![0u32; n];
            // Whether the gate said "not appended" since the intent's last send.
            let mut cleared = vec![false; n];
            let mut known = vec![false; n];
            let mut asking: std::collections::HashMap<Ticket, usize> = Default::default();
            let mut outcomes = vec![None; n];
            let mut looks_down = 0u32;
            let mut now = T0;
            let mut faults_used = 0usize;
            for m in machines.iter_mut() { m.start(now); }
            for _ in 0..20_000 {
                let mut acted = false;
                for i in 0..n {
                    while let Some(action) = machines[i].poll_action() {
                        acted = true;
                        match action {
                            Action::Persist(r) => machines[i].handle_persisted(now, Ok(r.revision + 1)),
                            Action::Send { attempt } | Action::OpenStream { attempt } => {
                                prop_assert!(!known[i], "intent {} sent after it was known appended", i);
                                if sends[i] > 0 {
                                    prop_assert!(cleared[i], "intent {} sent again before history said not appended", i);
                                }
                                cleared[i] = false;
                                sends[i] += 1;
                                let f = faults[faults_used % faults.len()];
                                faults_used += 1;
                                match f {
                                    Fault::None if !appended[i] => {
                                        appended[i] = true;
                                        known[i] = true;
                                        machines[i].handle_response(now, attempt, success(&records[i]), None);
                                    }
                                    Fault::LostAfterAppend | Fault::None => {
                                        appended[i] = true;
                                        machines[i].handle_transport_error(now, attempt, TransportError::Lost("reset".into()));
                                    }
                                    Fault::LostBefore => {
                                        machines[i].handle_transport_error(now, attempt, TransportError::Lost("reset".into()));
                                    }
                                }
                            }
                            Action::Confirm { query, need_facts } => {
                                let sent = machines[i].record().attempts.last().map_or(0, |a| a.sent_at);
                                let t = gate.ask(now, query, need_facts, sent);
                                asking.insert(t, i);
                            }
                            Action::Done(o) => outcomes[i] = Some(*o),
                            Action::Emit(_) => {}
                        }
                    }
                }
                while let Some(look) = gate.poll_look(now) {
                    acted = true;
                    let down = now < T0 + outage_ms;
                    let answer = if down {
                        looks_down += 1;
                        LookAnswer::Unavailable("down".into())
                    } else {
                        let said = look.questions.iter().filter_map(|q| {
                            let i: usize = q.aggregate_id.trim_start_matches("acct-").parse().unwrap();
                            appended[i].then(|| Said {
                                aggregate_id: q.aggregate_id.clone(),
                                request_id: q.request_id.clone(),
                                answer: ConfirmAnswer::Appended { version: Some(2), command_id: None },
                            })
                        }).collect();
                        LookAnswer::Said { said, complete: true }
                    };
                    gate.handle_look(now, look.id, answer);
                }
                while let Some((t, answer)) = gate.poll_answer() {
                    acted = true;
                    let i = asking.remove(&t).expect("an asker");
                    match &answer {
                        ConfirmAnswer::NotAppended => {
                            prop_assert!(!appended[i], "intent {} told not appended while history holds it", i);
                            cleared[i] = true;
                        }
                        ConfirmAnswer::Appended { .. } => {
                            prop_assert!(appended[i]);
                            known[i] = true;
                        }
                        ConfirmAnswer::Unavailable(_) => {}
                    }
                    machines[i].handle_confirm(now, answer);
                }
                if outcomes.iter().all(Option::is_some) { break; }
                if !acted {
                    // The gate's due look is a timer only while something waits
                    // for it (the driver's timer then finds nothing to do).
                    let next = machines.iter().filter_map(IntentMachine::poll_timeout)
                        .chain(gate.poll_timeout().filter(|_| gate.waiting() > 0)).min();
                    let Some(at) = next else { break };
                    now = now.max(at);
                    for m in machines.iter_mut() { m.handle_timeout(now); }
                }
            }
            for (i, o) in outcomes.iter().enumerate() {
                let o = o.as_ref().expect("every drive ends");
                if o.status == Status::Succeeded { prop_assert!(appended[i], "success claimed without an append"); }
                if o.appended == Some(false) { prop_assert!(!appended[i], "claimed not appended: {:?}", o); }
            }
            let doubling = (gate_config.cap_ms / gate_config.base_ms).ilog2() + 1;
            let bound = doubling + (outage_ms as u64 / (gate_config.cap_ms / 2)) as u32 + 2;
            prop_assert!(looks_down <= bound, "{} looks while down for {} intents (bound {})", looks_down, n, bound);
        }
    }
}
