//! The history probe: its lock, its timer, what waits on it at rest, and a
//! simulation of several tabs sharing one lock and one channel against a
//! history that is down for a while.

use super::history::{Availability, GateConfig, Look, LookAnswer};
use super::probe::*;
use super::ConfirmAnswer;
use crate::protocol::{AggregateRoute, ConfirmQuery};

fn query(aggregate: &str, request: &str) -> ConfirmQuery {
    ConfirmQuery {
        route: AggregateRoute::new("account"),
        aggregate_id: aggregate.into(),
        request_id: request.into(),
    }
}

fn actions(p: &mut Probe) -> Vec<ProbeAction> {
    std::iter::from_fn(|| p.poll_action()).collect()
}

fn looks(actions: &[ProbeAction]) -> Vec<Look> {
    actions
        .iter()
        .filter_map(|a| match a {
            ProbeAction::Look(l) => Some(l.clone()),
            _ => None,
        })
        .collect()
}

fn down() -> LookAnswer {
    LookAnswer::Unavailable("503".into())
}

#[test]
fn iso8601_writes_what_to_iso_string_writes() {
    assert_eq!(iso8601(0), "1970-01-01T00:00:00.000Z");
    assert_eq!(iso8601(1_796_428_744_270), "2026-12-04T23:59:04.270Z");
    assert_eq!(iso8601(951_782_400_001), "2000-02-29T00:00:00.001Z");
    assert_eq!(iso8601(-1), "1969-12-31T23:59:59.999Z");
}

#[test]
fn the_lock_is_asked_for_only_while_history_is_down_and_something_waits() {
    let mut p = Probe::new(GateConfig::default(), 1, iso8601);
    let t = p.ask(0, query("a1", "r1"), false, 0, false);
    let first = actions(&mut p);
    assert_eq!(looks(&first).len(), 1, "up: a look at once, no lock");
    assert!(!first.contains(&ProbeAction::TakeLock));
    p.handle_look(10, looks(&first)[0].id, down());
    let after = actions(&mut p);
    assert!(matches!(
        after.iter().find(|a| matches!(a, ProbeAction::Post(_))),
        Some(ProbeAction::Post(Availability::Down { .. }))
    ));
    let told = after.iter().find_map(|a| match a {
        ProbeAction::Answer(ticket, ConfirmAnswer::Unavailable(why)) if *ticket == t => {
            Some(why.clone())
        }
        _ => None,
    });
    assert!(told
        .unwrap()
        .contains("; history unavailable since 1970-01-01T00:00:00.010Z, next look at"));
    assert!(matches!(
        after
            .iter()
            .find(|a| matches!(a, ProbeAction::Changed { .. })),
        Some(ProbeAction::Changed {
            was: Availability::Up,
            is: Availability::Down { .. },
            ..
        })
    ));
    assert!(
        !after.contains(&ProbeAction::TakeLock),
        "the drive was told: nothing waits on the probe"
    );
    // An intent escalates and waits at rest: now the probe needs its lock.
    p.park(11);
    assert_eq!(actions(&mut p), [ProbeAction::TakeLock]);
    p.handle_lock(12, Granted::Held);
    assert!(actions(&mut p).is_empty());
    // History answers a person's question: nothing waits once the parked intent is driven; the lock goes.
    p.ask(13, query("a1", "r1"), false, 0, true);
    let look = looks(&actions(&mut p)).remove(0);
    p.handle_look(
        14,
        look.id,
        LookAnswer::Said {
            said: vec![],
            complete: true,
        },
    );
    let back = actions(&mut p);
    assert!(back.contains(&ProbeAction::ReleaseLock), "{back:?}");
    assert!(back.contains(&ProbeAction::DriveEscalated));
    // A lock granted after the work was gone is let go at once.
    p.park(15);
    p.handle_heard(
        16,
        Availability::Down {
            since: 0,
            next_look_at: 99_000,
            failures: 2,
        },
    );
    assert_eq!(actions(&mut p), [ProbeAction::TakeLock]);
    p.handle_heard(17, Availability::Up);
    actions(&mut p);
    p.handle_lock(18, Granted::Held);
    assert_eq!(actions(&mut p), [ProbeAction::ReleaseLock]);
}

#[test]
fn a_parked_intent_keeps_the_probe_looking_and_is_driven_when_history_is_back() {
    let mut p = Probe::new(GateConfig::default(), 7, iso8601);
    p.ask(0, query("a1", "r1"), false, 0, false);
    let look = looks(&actions(&mut p)).remove(0);
    p.handle_look(5, look.id, down());
    actions(&mut p);
    p.park(6);
    assert_eq!(actions(&mut p), [ProbeAction::TakeLock]);
    p.handle_lock(7, Granted::Held);
    assert!(actions(&mut p).is_empty());
    let due = p.poll_timeout().expect("the next look is armed");
    assert!(
        (505..=1_005).contains(&due),
        "backoff from 1 s with jitter: {due}"
    );
    // Due and no drive asks: the journal's escalated intents are asked about.
    p.handle_timeout(due);
    assert_eq!(actions(&mut p), [ProbeAction::LookForEscalated]);
    p.note(due, vec![query("a1", "r1")]);
    p.park(due);
    let again = looks(&actions(&mut p));
    assert_eq!(again.len(), 1, "the leader looks when due");
    p.handle_look(
        due + 5,
        again[0].id,
        LookAnswer::Said {
            said: vec![],
            complete: true,
        },
    );
    let back = actions(&mut p);
    assert!(back.contains(&ProbeAction::DriveEscalated), "{back:?}");
    assert!(back.contains(&ProbeAction::ReleaseLock));
    assert!(back.contains(&ProbeAction::Post(Availability::Up)));
    assert_eq!(p.poll_timeout(), None);
}

#[test]
fn a_tab_that_hears_history_is_back_drives_what_waited_two_seconds_later() {
    let mut p = Probe::new(GateConfig::default(), 3, iso8601);
    p.park(0);
    p.handle_heard(
        0,
        Availability::Down {
            since: 0,
            next_look_at: 30_000,
            failures: 3,
        },
    );
    assert_eq!(actions(&mut p), [ProbeAction::TakeLock]);
    p.handle_heard(1_000, Availability::Up);
    let heard = actions(&mut p);
    assert!(matches!(
        heard[0],
        ProbeAction::Changed {
            is: Availability::Up,
            ..
        }
    ));
    assert!(
        !heard.contains(&ProbeAction::DriveEscalated),
        "not at once: the tab that looked drives first"
    );
    assert_eq!(p.poll_timeout(), Some(1_000 + HEARD_BACK_MS));
    p.handle_timeout(1_000 + HEARD_BACK_MS);
    assert_eq!(actions(&mut p), [ProbeAction::DriveEscalated]);
}

#[test]
fn a_refused_lock_is_asked_for_again_at_the_next_change() {
    let mut p = Probe::new(GateConfig::default(), 3, iso8601);
    p.park(0);
    p.handle_heard(
        0,
        Availability::Down {
            since: 0,
            next_look_at: 30_000,
            failures: 1,
        },
    );
    assert_eq!(actions(&mut p), [ProbeAction::TakeLock]);
    p.handle_lock(10, Granted::Busy);
    assert_eq!(actions(&mut p), [ProbeAction::TakeLock]);
    p.handle_lock(20, Granted::Unsupported);
    assert!(
        actions(&mut p).is_empty(),
        "without locks, this process leads its own probe"
    );
    assert_eq!(p.poll_timeout(), Some(30_000));
}

/// Several tabs of one namespace, each with its probe and some escalated
/// intents, share one lock (granted in request order) and one channel,
/// against a history down for `outage` and up after: one tab leads at a
/// time, the looks of the outage do not grow with the tabs, and every tab
/// drives what waited on it once history is back.
#[cfg(not(target_arch = "wasm32"))]
mod tabs {
    use super::*;
    use crate::machine::history::Said;
    use proptest::prelude::*;

    struct Tab {
        probe: Probe,
        holds: bool,
        waiting_lock: bool,
        driven_at: Option<i64>,
        escalated: usize,
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

        #[test]
        fn one_tab_leads_looks_do_not_grow_with_tabs_and_all_drive_when_back(
            tabs in 1..6usize, outage_s in 1..200i64, seed in any::<u64>(), closes in prop::collection::vec(any::<bool>(), 6),
        ) {
            let config = GateConfig::default();
            let outage = outage_s * 1_000;
            let mut all: Vec<Tab> = (0..tabs).map(|i| Tab {
                probe: Probe::new(config.clone(), seed.wrapping_add(i as u64), iso8601),
                holds: false, waiting_lock: false, driven_at: None, escalated: 1 + i,
            }).collect();
            let mut queue: Vec<usize> = Vec::new(); // lock requests, in order
            let mut looks_while_down = 0u64;
            let mut closed = vec![false; tabs];
            // Each tab escalated its intents while history was down.
            for (i, tab) in all.iter_mut().enumerate() {
                tab.probe.handle_heard(0, Availability::Down { since: 0, next_look_at: 1_000 + i as i64, failures: 1 });
                tab.probe.park(0);
            }
            let mut now = 0;
            while now < outage + 60_000 {
                // One tab closes half way through the outage (its lock goes with it).
                if now == outage / 2 {
                    for i in 0..tabs {
                        if closes[i] && i + 1 < tabs && !closed[i] {
                            closed[i] = true;
                            all[i].holds = false;
                            queue.retain(|q| *q != i);
                            break;
                        }
                    }
                }
                for i in 0..tabs {
                    if closed[i] { continue; }
                    if all[i].probe.poll_timeout().is_some_and(|at| at <= now) {
                        all[i].probe.handle_timeout(now);
                    }
                    while let Some(action) = all[i].probe.poll_action() {
                        match action {
                            ProbeAction::Look(look) => {
                                let answer = if now < outage {
                                    looks_while_down += 1;
                                    LookAnswer::Unavailable("down".into())
                                } else {
                                    LookAnswer::Said { said: Vec::<Said>::new(), complete: true }
                                };
                                all[i].probe.handle_look(now, look.id, answer);
                            }
                            ProbeAction::TakeLock => { all[i].waiting_lock = true; queue.push(i); }
                            ProbeAction::ReleaseLock => all[i].holds = false,
                            ProbeAction::Post(availability) => {
                                for j in 0..tabs {
                                    if j != i && !closed[j] { all[j].probe.handle_heard(now, availability); }
                                }
                            }
                            ProbeAction::LookForEscalated => {
                                let n = all[i].escalated;
                                all[i].probe.note(now, (0..n).map(|k| query(&format!("t{i}-{k}"), &format!("r{i}-{k}"))).collect());
                                all[i].probe.park(now);
                            }
                            ProbeAction::DriveEscalated => { all[i].driven_at.get_or_insert(now); }
                            ProbeAction::Changed { .. } | ProbeAction::Answer(..) => {}
                        }
                    }
                }
                // The lock: the first in line gets it when nobody holds it.
                if !all.iter().enumerate().any(|(j, t)| t.holds && !closed[j]) {
                    if let Some(next) = (!queue.is_empty()).then(|| queue.remove(0)) {
                        all[next].holds = true;
                        all[next].waiting_lock = false;
                        all[next].probe.handle_lock(now, Granted::Held);
                        continue;
                    }
                }
                let holders = all.iter().enumerate().filter(|(j, t)| t.holds && !closed[*j]).count();
                prop_assert!(holders <= 1, "{} tabs hold the probe's lock", holders);
                now += 100;
            }
            let doubling = (config.cap_ms / config.base_ms).ilog2() as u64 + 1;
            // A closed leader's successor starts its backoff over.
            let bound = 2 * doubling + (outage_s as u64 * 1_000) / (config.cap_ms / 2) + 3;
            prop_assert!(looks_while_down <= bound, "{} looks by {} tabs in {} s (bound {})", looks_while_down, tabs, outage_s, bound);
            for (i, tab) in all.iter().enumerate() {
                if closed[i] { continue; }
                let driven = tab.driven_at;
                prop_assert!(driven.is_some(), "tab {} never drove what waited", i);
                prop_assert!(driven.unwrap() <= outage + config.cap_ms as i64 + HEARD_BACK_MS + 200,
                    "tab {} drove at {} (history back at {})", i, driven.unwrap(), outage);
            }
        }
    }
}
