//! What the engine asks its executor to do ([`Io`]) and what the executor
//! reports back ([`Done`]): the whole vocabulary between the core, which
//! decides, and the one executor per client, which acts. Each is a value,
//! so the engine is driven natively by a simulation exactly as a browser
//! drives it.

use crate::journal::{Body, IntentRecord, Quarantined, RecordError, StoreError, StoredText};
use crate::machine::{Availability, ConfirmAnswer, LookAnswer, Outcome};
use crate::protocol::{JsonValue, StreamElement};

/// An operation's id: its answer comes back with it, and is routed by it
/// to the task that asked. Numbered from 1, below 2^30: the executor's own
/// wake-ups carry tags above, which no id ever is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OpId(u32);

impl OpId {
    /// No operation: what is told expects no answer.
    pub const NONE: OpId = OpId(0);
    /// The first id.
    pub(crate) const FIRST: OpId = OpId(1);

    /// The id after this one (from the first again past 2^30).
    pub(crate) fn next(self) -> OpId {
        OpId(if self.0 >= 1 << 30 { 1 } else { self.0 + 1 })
    }

    /// The tag an executor's callback carries for it.
    pub fn tag(self) -> u32 {
        self.0
    }

    /// The operation a callback's tag names: one of the executor's own
    /// tags names none the engine has asked for, and finds none.
    pub fn of_tag(tag: u32) -> OpId {
        OpId(tag)
    }
}

/// A public call's id (the promise the executor holds for it).
pub type CallId = u32;

/// One thing to do, and the id its answer ([`Done`]) comes back with.
#[derive(Clone, Debug, PartialEq)]
pub struct Io {
    /// Answer with [`Engine::handle`](super::Engine::handle) and this id
    /// (nothing answers the ones that expect nothing).
    pub op: OpId,
    /// What to do.
    pub what: Do,
}

/// A request the engine built, to be sent as it is.
#[derive(Clone, Debug, PartialEq)]
pub struct Request {
    /// The absolute URL.
    pub url: String,
    /// The method.
    pub method: String,
    /// Headers, checked (`crate::protocol::CommandHeaders`).
    pub headers: Vec<(String, String)>,
    /// The body's text (empty where the host holds it: `held`).
    pub body: String,
    /// A body whose text the host holds ([`Body::held_text`]), sent as that.
    pub held: Option<Body>,
    /// Aborted after this long (its deadline).
    pub timeout_ms: u32,
    /// `Accept: text/event-stream`: the answer's elements are handed on as
    /// they arrive ([`Done::Element`], then [`Done::StreamEnded`]).
    pub stream: bool,
}

/// A caller's function the engine asks.
#[derive(Clone, Debug, PartialEq)]
pub enum Ask {
    /// `headers(context)`: fresh headers for one request; the context says
    /// what the request is for (`{ user, purpose, intentIds }`), so an app
    /// picks the token of the user the intents were made under (JSON text).
    Headers(String),
    /// `confirm(question)`: history's word on one intent (a `ConfirmQuestion`).
    Confirm(JsonValue),
    /// `confirmBatch(questions)`: history's word on several (an array of them).
    ConfirmBatch(JsonValue),
    /// `check(question)` (call `call`'s own) or `checkDownstream(question)`:
    /// has a stage past SNAPSHOT caught up with the append?
    Downstream {
        /// The call whose `check` it is, if it has one.
        call: CallId,
        /// The question.
        question: JsonValue,
    },
}

/// Where a notification goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Sink {
    /// `onEvent`: an intent's lifecycle event.
    Event,
    /// `onHistory`: the probe's.
    History,
    /// `onEscalated`: an intent just escalated.
    Escalated,
}

/// What to do.
#[derive(Clone, Debug, PartialEq)]
#[allow(clippy::large_enum_variant)] // moved once, from the engine to its executor
pub enum Do {
    /// Read one entry of the journal's store: [`Done::Got`].
    Get {
        /// Its key.
        key: String,
    },
    /// Every entry under `prefix`, values read: [`Done::Listed`]. `only`:
    /// entries held as objects whose field is not this string may be left
    /// out undecoded (the caller filters again).
    List {
        /// The key prefix.
        prefix: String,
        /// A field and the value it must have.
        only: Option<(String, String)>,
    },
    /// Write `text` at `key` if its stored revision is `expected` (0: absent):
    /// [`Done::Put`]. `flush`: durable before it answers.
    Put {
        /// Its key.
        key: String,
        /// The record's JSON text, at its next revision (a body the host
        /// holds left out: the host writes its own text of it in).
        text: StoredText,
        /// The revision the store must hold now.
        expected: u64,
        /// Whether it must reach the disk first.
        flush: bool,
    },
    /// Remove these keys, in one batch where the store has one: [`Done::Removed`].
    Remove {
        /// The keys.
        keys: Vec<String>,
    },
    /// Move an unreadable entry aside (quarantine), with why: [`Done::Removed`].
    Aside {
        /// Where it is.
        from: String,
        /// Where it goes.
        to: String,
        /// Why it cannot be read (kept with it, for `quarantined()`).
        reason: String,
    },
    /// Take a lock across tabs and workers: [`Done::Locked`]. Held until
    /// [`Do::Unlock`] with this op's id. `wait_ms` 0: only if free now.
    Lock {
        /// Its name.
        name: String,
        /// How long to wait for it (0: not at all).
        wait_ms: u64,
        /// What it guards.
        kind: LockKind,
    },
    /// Let the lock taken by op `lock` go (or its request, not granted yet).
    Unlock {
        /// The op that took it.
        lock: OpId,
    },
    /// Send a request: [`Done::Answered`], or its elements then
    /// [`Done::StreamEnded`], or [`Done::Failed`].
    Fetch(Request),
    /// Ask a caller's function: [`Done::Headers`], [`Done::Confirmed`],
    /// [`Done::Looked`] or [`Done::Checked`].
    Ask(Ask),
    /// Tell the namespace's tabs and workers (and this runtime's
    /// subscribers) that an intent changed: JSON text.
    Announce(String),
    /// Tell them what the probe's look found: JSON text.
    Post(String),
    /// Hear the namespace's announcements ([`Engine::handle_announced`](super::Engine::handle_announced)),
    /// or stop: a queued caller waits on them.
    Listen(bool),
    /// Notify a caller's listener: JSON text (an outcome for `onEscalated`).
    Notify(Sink, String),
    /// Call `call` settles with `reply`.
    Settle(CallId, Reply),
    /// A stage stream element, for call `call` (`sendAndWaitStream`).
    Emit(CallId, StreamElement),
    /// Call `call`'s intent was written first: `onIntent(intentId)`.
    Told(CallId, String),
    /// Answer once the runtime is online again: [`Done::Online`].
    WhenOnline,
    /// Let go of the store itself where it is this namespace's alone (an
    /// IndexedDB database, once nothing is left in it): [`Done::Removed`].
    Destroy,
    /// The client is done (signed out): its other calls end, and it lets go
    /// of everything it holds.
    Close,
}

/// What a lock guards, which says where there are no Web Locks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LockKind {
    /// One driver per intent: without Web Locks, unsupported (automatic
    /// resume stays off rather than racing).
    Intent,
    /// A scope's places: without Web Locks, this process's own lock.
    Scope,
    /// The history probe, background work no call waits for: never held
    /// in a server process (it would keep it alive), unsupported there.
    Probe,
}

/// How a store's compare-and-swap came out.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Swap {
    /// Written: the record is one revision on.
    Done,
    /// Not written: the stored revision differs (the one found, if any).
    Lost(Option<u64>),
}

impl Swap {
    /// A store's `put` that did not write, with the revision it found, if
    /// it said one (a negative one is read as past any this client writes,
    /// so the write is never retried over it).
    pub fn lost(found: Option<f64>) -> Swap {
        Swap::Lost(found.map(|n| if n < 0.0 { u64::MAX } else { n as u64 }))
    }
}

/// What a lock request came to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Locked {
    /// Held until unlocked.
    Held,
    /// Another tab or worker holds it (not granted in time).
    Busy,
    /// No locks across tabs here.
    Unsupported,
}

/// An entry read from the store: a record, or why it cannot be read.
pub type Entry = Result<IntentRecord, RecordError>;

/// Why a request produced no answer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Failure {
    /// It never left (it could not be made).
    NeverSent(String),
    /// Its deadline passed: it was aborted.
    Aborted,
    /// The network failed; it may have arrived.
    Lost(String),
}

impl Failure {
    /// What a request's rejection by an error named `name` means: its
    /// deadline passed or it was aborted (`TimeoutError`, `AbortError`),
    /// or the connection was lost.
    #[inline]
    pub fn of_rejection(name: &str, text: String) -> Failure {
        if name == "TimeoutError" || name == "AbortError" {
            Failure::Aborted
        } else {
            Failure::Lost(text)
        }
    }
}

/// What the executor reports.
#[derive(Clone, Debug, PartialEq)]
#[allow(clippy::large_enum_variant)] // moved once, from the executor to a task
pub enum Done {
    /// [`Do::Get`]'s entry (`None`: absent).
    Got(Result<Option<Entry>, StoreError>),
    /// [`Do::List`]'s entries, by key (the last of them, after any parts).
    Listed(Result<Vec<(String, Entry)>, StoreError>),
    /// Some of [`Do::List`]'s entries, more to come: a large listing is
    /// read a slice per task, and its op stays open until [`Done::Listed`].
    ListedPart(Vec<(String, Entry)>),
    /// [`Do::Put`].
    Put(Result<Swap, StoreError>),
    /// [`Do::Remove`], [`Do::Aside`].
    Removed(Result<(), StoreError>),
    /// [`Do::Lock`].
    Locked(Locked),
    /// [`Do::Fetch`]: a whole answer (a stream request answered without a
    /// stream too), its body parsed once (or why it could not be: blank,
    /// or not JSON, with the start of the text).
    Answered {
        /// The HTTP status.
        status: u16,
        /// The `Wow-Error-Code` header.
        error_code: Option<String>,
        /// `Retry-After`, in ms.
        retry_after: Option<u64>,
        /// The parsed body, or why there is none.
        body: Result<JsonValue, String>,
    },
    /// [`Do::Fetch`] of a stream: one element, as soon as it arrived.
    Element(StreamElement),
    /// [`Do::Fetch`] of a stream: it ended (`cut`: by an error, or an
    /// element that could not be read).
    StreamEnded {
        /// Whether it was cut.
        cut: bool,
    },
    /// [`Do::Fetch`]: no answer.
    Failed(Failure),
    /// [`Ask::Headers`]: the headers, or why there are none.
    Headers(Result<Vec<(String, String)>, String>),
    /// [`Ask::Confirm`].
    Confirmed(ConfirmAnswer),
    /// [`Ask::ConfirmBatch`].
    Looked(LookAnswer),
    /// [`Ask::Downstream`]: `true` when reached; anything else is "not yet".
    Checked(bool),
    /// [`Do::WhenOnline`]: the runtime is online.
    Online,
}

/// What a call settles with.
#[derive(Clone, Debug, PartialEq)]
pub enum Reply {
    /// `send`, `confirm`, `retry`, `withdraw`: the Outcome.
    Outcome(Box<Outcome>),
    /// `sendAndWait`'s success: the final CommandResult, or what history said.
    Succeeded(Box<Outcome>),
    /// A `CommandError` carrying the outcome.
    Failed(Box<Outcome>),
    /// `sendAndWaitStream`'s end: the outcome, and whether it throws.
    StreamOutcome(Box<Outcome>),
    /// `intent`: one record or none.
    Record(Option<Box<IntentRecord>>),
    /// `intents`: every record, oldest first.
    Records(Vec<IntentRecord>),
    /// `quarantined`.
    Quarantined(Vec<Quarantined>),
    /// A count (`prune`, `adopt`, `withdrawScope`).
    Count(u32),
    /// `signOut`, `clear`: what was removed and what was left.
    SignedOut(Box<SignOutReport>),
    /// `resume`: the outcomes of what it drove, and the intents another
    /// tab or worker was driving.
    Report {
        /// Driven here.
        driven: Vec<Outcome>,
        /// Busy elsewhere.
        busy: Vec<String>,
    },
    /// `awaitDownstream`: the outcome, and the stage reached (or none in time).
    Downstream(Box<Outcome>, Option<crate::protocol::CommandStage>),
    /// `connect`: the journal answers.
    Connected,
    /// A mistake in the call's arguments (a `TypeError` naming the call).
    Mistake(String),
}

/// What `signOut` and `clear` did with the user's intents on this device.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SignOutReport {
    /// How many records were removed.
    pub removed: u32,
    /// The unresolved intents removed (`purge`): each may have been
    /// appended, or may still be; the app tells the person.
    pub unresolved: Vec<IntentRecord>,
    /// How many unresolved intents were kept (parked: driven by nobody
    /// until the user connects again).
    pub parked: u32,
    /// Intents another tab or worker was driving, left as they are.
    pub busy: Vec<String>,
}

impl crate::protocol::json_codec::ToJson for SignOutReport {
    fn write_json(&self, out: &mut crate::protocol::json_codec::JsonOut) {
        crate::protocol::json_codec::ObjectWriter::new(out)
            .put("removed", &self.removed)
            .put("unresolved", &self.unresolved)
            .put("parked", &self.parked)
            .put("busy", &self.busy)
            .done()
    }
}

/// `resume`'s report as the caller reads it (`{ driven, busy }`).
pub struct ReportValue<'a>(pub &'a [Outcome], pub &'a [String]);

impl crate::protocol::json_codec::ToJson for ReportValue<'_> {
    fn write_json(&self, out: &mut crate::protocol::json_codec::JsonOut) {
        crate::protocol::json_codec::ObjectWriter::new(out)
            .put("driven", self.0)
            .put("busy", self.1)
            .done()
    }
}

/// What `client.history` reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HistoryStatus {
    /// Whether history answers, as this client last learned it.
    pub availability: Availability,
    /// Questions waiting for it.
    pub waiting: u32,
    /// Messages from other tabs dropped as unreadable or implausible.
    pub dropped: u32,
}

/// `client.history` as the caller reads it: `waiting`, and the
/// availability's fields.
impl crate::protocol::json_codec::ToJson for HistoryStatus {
    fn write_json(&self, out: &mut crate::protocol::json_codec::JsonOut) {
        let mut w = crate::protocol::json_codec::ObjectWriter::new(out);
        w.put("waiting", &self.waiting)
            .put("droppedMessages", &self.dropped);
        super::events::availability(&mut w, self.availability).done()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::machine::{Availability, Status, SuccessValue};
    use crate::protocol::json_codec::{JsonOut, ToJson};
    use crate::protocol::{ErrorCode, ResponseBody, StreamElement};

    fn text(value: &impl ToJson) -> String {
        JsonOut::of(value, |_, _| {})
    }

    #[test]
    fn what_a_store_and_a_request_answered_means() {
        assert_eq!(Swap::lost(Some(3.0)), Swap::Lost(Some(3)));
        assert_eq!(Swap::lost(Some(-1.0)), Swap::Lost(Some(u64::MAX)));
        assert_eq!(Swap::lost(None), Swap::Lost(None));
        assert_eq!(
            Failure::of_rejection("TimeoutError", "t".into()),
            Failure::Aborted
        );
        assert_eq!(
            Failure::of_rejection("AbortError", "a".into()),
            Failure::Aborted
        );
        assert_eq!(
            Failure::of_rejection("TypeError", "Failed to fetch".into()),
            Failure::Lost("Failed to fetch".into())
        );
    }

    #[test]
    fn what_the_caller_reads() {
        let down = HistoryStatus {
            availability: Availability::Down {
                since: 5,
                next_look_at: 9,
                failures: 2,
            },
            waiting: 3,
            dropped: 1,
        };
        assert_eq!(
            text(&down),
            r#"{"waiting":3,"droppedMessages":1,"available":false,"since":5,"nextLookAt":9,"failures":2}"#
        );
        let mut confirmed = Outcome::failed("Ok", "", Status::Succeeded, Some(true));
        confirmed.error = None;
        confirmed.request_id = "r".into();
        confirmed.appended_version = Some(4);
        confirmed.appended_command_id = Some("c".into());
        assert_eq!(
            text(&SuccessValue(&confirmed)),
            r#"{"requestId":"r","commandId":"c","aggregateVersion":4,"errorCode":"Ok","succeeded":true,"confirmedByHistory":true}"#
        );
        assert_eq!(
            text(&ReportValue(&[], &["i".into()])),
            r#"{"driven":[],"busy":["i"]}"#
        );
        let bare = StreamElement::Error {
            code: ErrorCode::parse("RequestTimeout"),
            body: ResponseBody::Other {
                reason: "blank".into(),
            },
        };
        assert_eq!(
            text(&bare),
            r#"{"errorCode":"RequestTimeout","errorMsg":"","succeeded":false}"#
        );
    }
}
