//! The journal's storage procedures over the executor's key-value
//! primitives ([`Do::Get`], [`Do::List`], [`Do::Put`], [`Do::Remove`],
//! [`Do::Aside`]): one record read (an unreadable one moved aside, never
//! dropped), found by id or business key, written by compare-and-swap (and,
//! when the store is full, after evicting settled history the journal no
//! longer needs), listed with what had to be quarantined. Each is a task a
//! caller waits on: its result comes back as a `Child`.
//!
//! Records live under `wow-intents/<namespace>/<id>`; unreadable entries
//! are moved under `wow-intents-quarantine/<namespace>/<id>`. An id holds
//! no `/`, so a key under a longer namespace that shares this one's prefix
//! (`acme/alice` under `acme`) is never read as this namespace's. Every
//! record read back is checked before it can act (`Reader`): one that
//! disagrees with where it was read, or whose command could go anywhere but
//! the gateway, is moved aside with the reason; another user's is left
//! alone, unseen; a credential an older build stored is taken out of it
//! and the record written back without it.

use super::io::{Do, Done, Entry, Swap};
use super::{Child, Engine, Next, Step, TaskId, Wake};
use crate::journal::{
    derived_request_id, IntentRecord, JournalError, Listing, Quarantined, ReadBack, Reader,
    RecordError, RecordKind, StoreError, StoredRecord, Unavailable,
};
use crate::text::text;

/// The key of an intent's record ([`RecordKind::key`]).
pub fn key(namespace: &str, id: &str) -> String {
    RecordKind::Intent.key(namespace, id)
}

/// The key prefix of a namespace's records.
pub fn prefix(namespace: &str) -> String {
    RecordKind::Intent.prefix(namespace)
}

/// The key prefix of a namespace's quarantined entries.
pub(crate) fn aside_prefix(namespace: &str) -> String {
    RecordKind::Intent.aside_prefix(namespace)
}

/// A storage procedure in progress.
#[derive(Debug)]
pub(super) enum StoreTask {
    /// One record by id; then, when `or_key`, by the id derived from it as
    /// a business key.
    Find {
        id: String,
        or_key: bool,
        /// The entry found unreadable, being moved aside: the error after it.
        failed: Option<StoreError>,
    },
    /// A compare-and-swap write; `evicting`: the store was full, and
    /// settled records are being evicted `batch` at a time.
    Write {
        record: Box<IntentRecord>,
        evicting: Option<Evicting>,
    },
    /// A namespace's records (`scope`: those of one scope), with what was
    /// quarantined (`aside`), entries moved aside one by one.
    List(ListTask),
    /// Keys removed in one batch.
    Remove,
}

impl Step for StoreTask {
    fn step(self: Box<Self>, engine: &mut Engine, me: TaskId, wake: Wake) -> Next {
        engine.step_store(me, *self, wake)
    }
}

/// A listing in progress.
#[derive(Debug)]
pub(super) struct ListTask {
    scope: Option<String>,
    /// Records made with no user are this listing's (`adopt()`), not this user's.
    unowned: bool,
    stage: ListStage,
    listing: Listing,
    /// Unreadable entries to move aside: their keys and why.
    unreadable: Vec<(String, String)>,
    /// Records to write back without a credential (by their place in the listing).
    scrub: Vec<usize>,
    /// Which records the listing keeps (the others are let go as they are read).
    keep: Keep,
}

/// Which records a listing keeps: a call that reads none of them (or only
/// some) lets the others go in the slice that read them, so a journal of
/// many intents is never held, sorted and let go in one piece. A record to
/// write back without a credential is kept whatever this says.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Keep {
    All,
    /// Those `prune()` removes now.
    Prunable,
    Nothing,
}

#[derive(Debug)]
pub(super) struct Evicting {
    /// The records listed so far (a listing's parts).
    listed: Vec<IntentRecord>,
    /// Settled records that may go, in the order they go.
    ids: Vec<String>,
    /// How many are gone.
    gone: usize,
    batch: usize,
    /// The write's first error (what stands if nothing can go).
    full: StoreError,
    /// Waiting for the listing (false) or for a removal (true).
    removing: bool,
}

#[derive(Debug, PartialEq, Eq)]
pub(super) enum ListStage {
    Aside,
    Own,
    Moving,
    /// Writing back the record at this place in the listing.
    Scrubbing(usize),
}

/// The id a key under `prefix` names: what follows the prefix, holding no
/// `/` (a key of a longer namespace sharing the prefix names none).
fn id_under<'a>(key: &'a str, prefix: &str) -> Option<&'a str> {
    key.strip_prefix(prefix).filter(|id| !id.contains('/'))
}

impl Engine {
    /// Finds a record by its id (`or_key`: or by a business key).
    pub(super) fn find(&mut self, parent: TaskId, id: &str, or_key: bool) {
        let task = StoreTask::Find {
            id: id.to_owned(),
            or_key,
            failed: None,
        };
        let me = self.child(parent, Box::new(task));
        let key = key(&self.config.namespace, id);
        self.op(me, Do::Get { key });
    }

    /// Writes `record` by compare-and-swap on its revision; its new revision.
    pub(super) fn write(&mut self, parent: TaskId, record: &IntentRecord) {
        let me = self.child(
            parent,
            Box::new(StoreTask::Write {
                record: Box::new(record.clone()),
                evicting: None,
            }),
        );
        self.put_next(me, record, record.needs_flush());
    }

    /// Puts `record` at its next revision, if the store holds it at its own
    /// (written afresh for a try after eviction: the task keeps no text;
    /// and for a record written back, a credential taken out of it).
    fn put_next(&mut self, me: TaskId, record: &IntentRecord, flush: bool) {
        let mut next = record.clone();
        next.set_revision(record.revision + 1);
        let put = Do::Put {
            key: key(&self.config.namespace, &record.intent_id),
            text: next.stored_parts(self.float),
            expected: record.revision,
            flush,
        };
        self.op(me, put);
    }

    /// Lists the namespace's records (`scope`: those of one scope).
    pub(super) fn list(&mut self, parent: TaskId, scope: Option<&str>) {
        self.list_of(parent, scope, false, Keep::All);
    }

    /// Lists the namespace's records, keeping only `keep`'s.
    pub(super) fn list_keeping(&mut self, parent: TaskId, keep: Keep) {
        self.list_of(parent, None, false, keep);
    }

    /// Lists the records made with no user (before users, or by a client
    /// with `user: null`), for `adopt()`.
    pub(super) fn list_unowned(&mut self, parent: TaskId) {
        self.list_of(parent, None, true, Keep::All);
    }

    fn list_of(&mut self, parent: TaskId, scope: Option<&str>, unowned: bool, keep: Keep) {
        let ns = &self.config.namespace;
        let (first, stage) = match scope {
            // A scope's listing leaves quarantine to the full listing.
            Some(scope) => (
                Do::List {
                    prefix: prefix(ns),
                    only: Some(("scope".into(), scope.into())),
                },
                ListStage::Own,
            ),
            None => (
                Do::List {
                    prefix: aside_prefix(ns),
                    only: None,
                },
                ListStage::Aside,
            ),
        };
        let task = StoreTask::List(ListTask {
            scope: scope.map(str::to_owned),
            unowned,
            stage,
            listing: Listing::default(),
            unreadable: Vec::new(),
            scrub: Vec::new(),
            keep,
        });
        let me = self.child(parent, Box::new(task));
        self.op(me, first);
    }

    /// Removes the records `ids`.
    pub(super) fn remove(&mut self, parent: TaskId, ids: &[&str]) {
        let keys = ids
            .iter()
            .map(|id| key(&self.config.namespace, id))
            .collect();
        let me = self.child(parent, Box::new(StoreTask::Remove));
        self.op(me, Do::Remove { keys });
    }

    /// Moves intent `id`'s record aside (where unreadable ones go), if it is there.
    pub(super) fn set_aside(&mut self, parent: TaskId, id: &str) {
        let ns = &self.config.namespace;
        let (from, to) = (key(ns, id), text!(aside_prefix(ns), id));
        let me = self.child(parent, Box::new(StoreTask::Remove));
        let reason = "its handling stopped the module twice".into();
        self.op(me, Do::Aside { from, to, reason });
    }

    /// The checks a record read back must pass here (`unowned`: as the
    /// records made with no user's, for `adopt()`).
    fn reader(&self, unowned: bool) -> Reader<'_> {
        Reader {
            namespace: &self.config.namespace,
            user: if unowned {
                None
            } else {
                self.config.user.as_deref()
            },
            secrets: &self.config.secret_headers,
        }
    }

    fn step_store(&mut self, me: TaskId, task: StoreTask, wake: Wake) -> Next {
        let Wake::Op(done) = wake else {
            self.unasked(&wake, "storage");
            return Next::Keep(Box::new(task));
        };
        match (task, done) {
            (
                StoreTask::Find {
                    failed: Some(e), ..
                },
                _,
            ) => Next::Done(Child::Record(Err(e.into()))),
            (StoreTask::Find { id, or_key, .. }, Done::Got(got)) => {
                let checked = match got {
                    Ok(Some(Ok(record))) => self.reader(false).check(&id, record),
                    Ok(Some(Err(reason))) => Err(reason),
                    Ok(None) if or_key => {
                        let derived = derived_request_id(&self.config.namespace, &id);
                        let key = key(&self.config.namespace, &derived);
                        self.op(me, Do::Get { key });
                        return Next::Keep(Box::new(StoreTask::Find {
                            id: derived,
                            or_key: false,
                            failed: None,
                        }));
                    }
                    Ok(None) => return Next::Done(Child::Record(Ok(None))),
                    Err(e) => return Next::Done(Child::Record(Err(e.into()))),
                };
                match checked {
                    // A credential taken out is written back by the next
                    // listing (connect lists the journal) or write.
                    Ok(ReadBack::Mine(record, _)) => Next::Done(Child::Record(Ok(Some(record)))),
                    Ok(ReadBack::Theirs) => {
                        Next::Done(Child::Record(Err(JournalError::OfAnotherUser)))
                    }
                    Err(reason) => {
                        let key = key(&self.config.namespace, &id);
                        let failed = StoreError::Unavailable {
                            kind: Unavailable::ReadFailed,
                            detail: text!(key, ": ", reason.message()),
                        };
                        if matches!(reason, RecordError::FutureSchema(_)) {
                            // A newer build's record stays where it is, for it.
                            return Next::Done(Child::Record(Err(failed.into())));
                        }
                        let to = text!(aside_prefix(&self.config.namespace), id);
                        let reason = reason.message();
                        self.op(
                            me,
                            Do::Aside {
                                from: key,
                                to,
                                reason,
                            },
                        );
                        Next::Keep(Box::new(StoreTask::Find {
                            id,
                            or_key,
                            failed: Some(failed),
                        }))
                    }
                }
            }
            (StoreTask::Write { record, evicting }, done) => {
                self.step_write(me, record, evicting, done)
            }
            (StoreTask::List(list), done) => self.step_list(me, list, done),
            (StoreTask::Remove, Done::Removed(r)) => Next::Done(Child::Removed(r)),
            (task, done) => {
                self.unasked(&Wake::Op(done), "storage");
                Next::Keep(Box::new(task))
            }
        }
    }

    /// A listing: the quarantine area (the full listing), then the
    /// namespace's records, each checked; then what could not be read is
    /// moved aside and what carried a credential written back, one by one.
    fn step_list(&mut self, me: TaskId, mut l: ListTask, done: Done) -> Next {
        match (&l.stage, done) {
            (ListStage::Aside, Done::ListedPart(entries)) => self.take_aside(&mut l, entries),
            (ListStage::Own, Done::ListedPart(entries)) => self.take_own(&mut l, entries),
            (ListStage::Aside, Done::Listed(Ok(entries))) => {
                self.take_aside(&mut l, entries);
                self.op(
                    me,
                    Do::List {
                        prefix: prefix(&self.config.namespace),
                        only: None,
                    },
                );
                l.stage = ListStage::Own;
            }
            (ListStage::Own, Done::Listed(Ok(entries))) => {
                self.take_own(&mut l, entries);
                return self.list_tidy(me, l);
            }
            (ListStage::Moving, Done::Removed(Ok(()))) => return self.list_tidy(me, l),
            (ListStage::Scrubbing(at), Done::Put(put)) => {
                if let (Ok(Swap::Done), Some(record)) = (put, l.listing.records.get_mut(*at)) {
                    let revision = record.revision + 1;
                    record.set_revision(revision);
                }
                return self.list_tidy(me, l);
            }
            (_, Done::Listed(Err(e)) | Done::Removed(Err(e))) => {
                return Next::Done(Child::Listing(Err(e)))
            }
            (_, other) => self.unasked(&Wake::Op(other), "a listing"),
        }
        Next::Keep(Box::new(StoreTask::List(l)))
    }

    /// The quarantine area's entries: each already moved aside, with why.
    fn take_aside(&self, l: &mut ListTask, entries: Vec<(String, Entry)>) {
        let aside = aside_prefix(&self.config.namespace);
        for (key, entry) in entries {
            if id_under(&key, &aside).is_none() {
                continue;
            }
            let reason = match entry {
                Err(reason @ RecordError::Corrupt(_)) => reason,
                _ => RecordError::Corrupt("quarantined earlier".into()),
            };
            l.listing.quarantined.push(Quarantined { key, reason });
        }
    }

    /// The namespace's entries, each checked.
    fn take_own(&self, l: &mut ListTask, entries: Vec<(String, Entry)>) {
        let own = prefix(&self.config.namespace);
        for (key, entry) in entries {
            let Some(id) = id_under(&key, &own) else {
                continue;
            };
            let checked = entry.and_then(|record| self.reader(l.unowned).check(id, record));
            match checked {
                Ok(ReadBack::Mine(record, scrubbed)) => {
                    let kept = match l.keep {
                        Keep::All => true,
                        Keep::Prunable => record.is_prunable(self.now, self.config.retention_ms),
                        Keep::Nothing => false,
                    };
                    if (kept || scrubbed) && (l.scope.is_none() || record.scope == l.scope) {
                        if scrubbed {
                            l.scrub.push(l.listing.records.len());
                        }
                        l.listing.records.push(record);
                    }
                }
                Ok(ReadBack::Theirs) => l.listing.others += 1,
                // A scope's listing skips them (the full one quarantines).
                Err(_) if l.scope.is_some() => {}
                Err(reason) => {
                    if !matches!(reason, RecordError::FutureSchema(_)) {
                        l.unreadable.push((key.clone(), reason.message()));
                    }
                    l.listing.quarantined.push(Quarantined { key, reason });
                }
            }
        }
    }

    /// Once read: unreadable entries go aside one by one, then the
    /// scrubbed are written back; then the listing is done.
    fn list_tidy(&mut self, me: TaskId, mut l: ListTask) -> Next {
        let ns = self.config.namespace.clone();
        let own = prefix(&ns);
        l.stage = if let Some((from, reason)) = l.unreadable.pop() {
            let to = text!(aside_prefix(&ns), id_under(&from, &own).unwrap_or(&from));
            self.op(me, Do::Aside { from, to, reason });
            ListStage::Moving
        } else if let Some(at) = l.scrub.pop() {
            let record = l.listing.records[at].clone();
            self.put_next(me, &record, true);
            ListStage::Scrubbing(at)
        } else {
            sort_by_creation(&mut l.listing.records);
            return Next::Done(Child::Listing(Ok(l.listing)));
        };
        Next::Keep(Box::new(StoreTask::List(l)))
    }

    /// Refusing to send because storage is full is right; refusing because
    /// the journal filled it with its own history is not. Only `succeeded`,
    /// `rejected` and `withdrawn` intents are evicted (their outcome was
    /// reported; a conflict still waits for the caller's decision), keyless
    /// ones before keyed ones (a keyed intent's requestId is derived from its
    /// key, so the gateway still recognises a repeat), oldest created first,
    /// in doubling batches until the write fits. Unresolved and escalated
    /// intents are never evicted; if nothing can go, the original error stands.
    fn step_write(
        &mut self,
        me: TaskId,
        record: Box<IntentRecord>,
        evicting: Option<Evicting>,
        done: Done,
    ) -> Next {
        let keep = |record, evicting| Next::Keep(Box::new(StoreTask::Write { record, evicting }));
        match (evicting, done) {
            (_, Done::Put(Ok(Swap::Done))) => Next::Done(Child::Wrote(Ok(record.revision + 1))),
            (_, Done::Put(Ok(Swap::Lost(current)))) => {
                Next::Done(Child::Wrote(Err(StoreError::Conflict { current })))
            }
            (
                evicting,
                Done::Put(Err(
                    full @ StoreError::Unavailable {
                        kind: Unavailable::QuotaExceeded,
                        ..
                    },
                )),
            ) => match evicting {
                None => {
                    let prefix = prefix(&self.config.namespace);
                    self.op(me, Do::List { prefix, only: None });
                    keep(
                        record,
                        Some(Evicting {
                            listed: Vec::new(),
                            ids: Vec::new(),
                            gone: 0,
                            batch: 1,
                            full,
                            removing: false,
                        }),
                    )
                }
                Some(mut ev) => {
                    ev.batch *= 2;
                    self.evict_next(me, record, ev)
                }
            },
            (_, Done::Put(Err(e))) => Next::Done(Child::Wrote(Err(e))),
            (Some(mut ev), Done::ListedPart(entries)) => {
                ev.listed
                    .extend(entries.into_iter().filter_map(|(_, r)| r.ok()));
                keep(record, Some(ev))
            }
            (Some(mut ev), Done::Listed(listed)) => {
                let Ok(entries) = listed else {
                    return Next::Done(Child::Wrote(Err(ev.full)));
                };
                let mut records = std::mem::take(&mut ev.listed);
                records.extend(entries.into_iter().filter_map(|(_, r)| r.ok()));
                sort_by_creation(&mut records);
                ev.ids = crate::journal::evictable(&records, &record.intent_id)
                    .into_iter()
                    .map(str::to_owned)
                    .collect();
                self.evict_next(me, record, ev)
            }
            (Some(mut ev), Done::Removed(removed)) => {
                if removed.is_err() {
                    return Next::Done(Child::Wrote(Err(ev.full)));
                }
                ev.removing = false;
                self.put_next(me, &record, record.needs_flush());
                keep(record, Some(ev))
            }
            (evicting, _) => keep(record, evicting),
        }
    }

    /// Evicts the next batch, or gives up with the write's error.
    fn evict_next(&mut self, me: TaskId, record: Box<IntentRecord>, mut ev: Evicting) -> Next {
        if ev.gone >= ev.ids.len() {
            return Next::Done(Child::Wrote(Err(ev.full)));
        }
        let upto = (ev.gone + ev.batch).min(ev.ids.len());
        let keys = ev.ids[ev.gone..upto]
            .iter()
            .map(|id| key(&self.config.namespace, id))
            .collect();
        ev.gone = upto;
        ev.removing = true;
        self.op(me, Do::Remove { keys });
        Next::Keep(Box::new(StoreTask::Write {
            record,
            evicting: Some(ev),
        }))
    }
}

/// Oldest created first (ties by id): the journal's order.
pub(super) fn sort_by_creation(records: &mut Vec<IntentRecord>) {
    let order = crate::order::ascending(
        records
            .iter()
            // i64 to u64 keeping the order (the sign bit flipped).
            .map(|r| ((r.created_at as u64) ^ (1 << 63), r.intent_id.as_str()))
            .collect(),
    );
    let mut slots: Vec<Option<IntentRecord>> =
        std::mem::take(records).into_iter().map(Some).collect();
    *records = order.into_iter().filter_map(|i| slots[i].take()).collect();
}
