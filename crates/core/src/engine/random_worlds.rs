//! Random worlds: tabs that send, resume, confirm, withdraw and reload
//! while the gateway loses answers, refuses, and history goes down and comes
//! back, in any order and at any time. Whatever happened, once history
//! answers again every call of every open tab settles, and no intent is
//! appended twice, and no request is ever made under another user than
//! the one its intent was made by. (The chaos test meets the same worlds in real browsers,
//! one schedule a run; here thousands of schedules a second.)

use proptest::prelude::*;

use super::calls::SendMode;
use super::io::Reply;
use super::tests::{intent, Fault, World};

#[derive(Clone, Debug)]
enum Step {
    Send {
        tab: usize,
        aggregate: u8,
        scoped: bool,
        key: Option<u8>,
        mode: u8,
    },
    Fault {
        aggregate: u8,
        refused: bool,
    },
    History {
        down: bool,
    },
    Resume {
        tab: usize,
    },
    Confirm {
        tab: usize,
        nth: usize,
    },
    Withdraw {
        tab: usize,
        nth: usize,
    },
    Reload {
        tab: usize,
    },
    /// The tab's user signs out and another signs in (the page reloads as them).
    SwitchUser {
        tab: usize,
        user: u8,
    },
    Wait {
        ms: i64,
    },
}

fn step() -> impl Strategy<Value = Step> {
    prop_oneof![
        4 => (0..3usize, 0..3u8, any::<bool>(), prop::option::of(0..4u8), 0..3u8)
            .prop_map(|(tab, aggregate, scoped, key, mode)| Step::Send { tab, aggregate, scoped, key, mode }),
        2 => (0..3u8, any::<bool>()).prop_map(|(aggregate, refused)| Step::Fault { aggregate, refused }),
        1 => any::<bool>().prop_map(|down| Step::History { down }),
        1 => (0..3usize).prop_map(|tab| Step::Resume { tab }),
        1 => (0..3usize, 0..8usize).prop_map(|(tab, nth)| Step::Confirm { tab, nth }),
        1 => (0..3usize, 0..8usize).prop_map(|(tab, nth)| Step::Withdraw { tab, nth }),
        1 => (0..3usize).prop_map(|tab| Step::Reload { tab }),
        1 => (0..3usize, 0..3u8).prop_map(|(tab, user)| Step::SwitchUser { tab, user }),
        3 => (0..40_000i64).prop_map(|ms| Step::Wait { ms }),
    ]
}

/// Calls made, by tab (a reloaded tab's calls went with it).
struct Calls {
    by_tab: Vec<Vec<u32>>,
    last: u32,
}

impl Calls {
    /// A new call of tab `tab`.
    fn next(&mut self, tab: usize) -> u32 {
        self.last += 1;
        self.by_tab[tab].push(self.last);
        self.last
    }
}

/// Plays step `i` in the world.
fn play(w: &mut World, calls: &mut Calls, i: usize, step: &Step) {
    let now = w.now;
    match *step {
        Step::Send {
            tab,
            aggregate,
            scoped,
            key,
            mode,
        } => {
            let call = calls.next(tab);
            let id = format!("a{aggregate}");
            let scope = scoped.then(|| format!("s{aggregate}"));
            let key = key.map(|k| format!("k{k}-{i}"));
            let mode = [SendMode::Outcome, SendMode::AndWait, SendMode::Stream][mode as usize];
            w.send(
                tab,
                call,
                intent(&id, key.as_deref(), scope.as_deref()),
                mode,
            );
        }
        Step::Fault { aggregate, refused } => {
            let fault = if refused {
                Fault::Refused
            } else {
                Fault::LostAfterAppend
            };
            w.gateway.faults.push((format!("a{aggregate}"), fault));
        }
        Step::History { down } => w.gateway.history_down = down,
        Step::Resume { tab } => {
            let call = calls.next(tab);
            w.tabs[tab].engine.resume(now, call, false);
        }
        Step::Confirm { tab, nth } | Step::Withdraw { tab, nth } => {
            let records = w.records();
            if let Some(r) = records.get(nth % records.len().max(1)) {
                let call = calls.next(tab);
                let id = r.intent_id.clone();
                if matches!(step, Step::Confirm { .. }) {
                    w.tabs[tab].engine.confirm(now, call, &id, false);
                } else {
                    w.tabs[tab].engine.withdraw(now, call, &id, false);
                }
            }
        }
        Step::Reload { tab } => {
            w.reload(tab);
            calls.by_tab[tab].clear();
        }
        Step::SwitchUser { tab, user } => {
            w.users[tab] = [Some("alice"), Some("bob"), None][user as usize].map(str::to_owned);
            w.reload(tab);
            calls.by_tab[tab].clear();
        }
        Step::Wait { ms } => w.run_until(now + ms),
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn every_call_settles_once_history_answers_and_nothing_is_appended_twice(
        steps in prop::collection::vec(step(), 1..40), latency in 1..400i64,
    ) {
        // Tabs of two users and an app's anonymous one, sharing one journal.
        let mut w = World::with_users(&[Some("alice"), Some("bob"), None]);
        w.latency = latency;
        let mut calls = Calls { by_tab: vec![Vec::new(); 3], last: 0 };
        for (i, step) in steps.iter().enumerate() {
            play(&mut w, &mut calls, i, step);
        }
        // History answers from now on, and the gateway loses nothing more.
        w.gateway.history_down = false;
        w.gateway.faults.clear();
        let quiet = w.now + 30 * 60_000;
        w.run_until(quiet);
        for (tab, made) in calls.by_tab.iter().enumerate() {
            for call in made {
                prop_assert!(w.reply(tab, *call).is_some(),
                    "call {} of tab {} never settled (steps: {:?})", call, tab, steps);
            }
        }
        // No request is ever made under another user's credentials.
        let records = w.records();
        for (request_id, credentials) in &w.gateway.credentials {
            if let Some(r) = records.iter().find(|r| r.request_id == *request_id) {
                let made_by = format!("Bearer {}", r.user.as_deref().unwrap_or("anonymous"));
                prop_assert_eq!(credentials.as_deref(), Some(made_by.as_str()),
                    "{} was sent with another user's credentials (steps: {:?})", request_id, steps);
            }
        }
        for (aggregate, requests) in &w.gateway.history {
            let mut seen = requests.clone();
            seen.sort();
            seen.dedup();
            prop_assert_eq!(seen.len(), requests.len(), "{} appended a requestId twice", aggregate);
        }
        prop_assert!(w.held_locks().is_empty(), "locks held once all is quiet: {:?} (steps: {:?})", w.held_locks(), steps);
        // And a resume in every tab then leaves nothing unresolved.
        for tab in 0..3 {
            let call = 1_000_000 + tab as u32;
            let now = w.now;
            w.tabs[tab].engine.resume(now, call, false);
            w.run_until(now + 30 * 60_000);
            prop_assert!(matches!(w.reply(tab, call), Some(Reply::Report { .. })), "the last resume of tab {} settled", tab);
        }
    }
}
