//! A scope's line in this client: its sends take their places one after
//! another under one hold of the scope's lock, asked for once and passed
//! on with what was read of the scope. A burst into one scope so lists the
//! scope once and writes its places together, rather than taking the lock,
//! listing the scope and waiting for a commit once per send. The lock is
//! let go once the line is empty and every place it wrote is stored, so
//! another tab's send reads them all.

use super::io::{Do, Done, LockKind, Locked};
use super::{Engine, Line, TaskId, Wake};
use crate::text::text;

impl Engine {
    /// Where `scope`'s line is, if this client has one.
    pub(super) fn line_at(&self, scope: Option<&str>) -> Option<usize> {
        self.lines
            .iter()
            .position(|l| Some(l.scope.as_str()) == scope)
    }

    /// Send task `me` joins `scope`'s line: the first asks for the scope's
    /// lock, the others wait behind it; one joining a line between two
    /// sends takes its place at once.
    pub(super) fn join_line(&mut self, me: TaskId, scope: &str) {
        if let Some(i) = self.line_at(Some(scope)) {
            let line = &mut self.lines[i];
            line.queue.push(me);
            if let (true, Some(locked)) = (line.queue.len() == line.next + 1, line.locked) {
                self.wakes.push_back((me, Wake::Op(Done::Locked(locked))));
            }
            return;
        }
        let name = self.for_user(&text!(
            "wow-command-client/",
            self.config.namespace,
            "/scope/",
            scope
        ));
        let wait_ms = self.config.machine.caller_timeout_ms.max(1);
        let lock = self.op(
            me,
            Do::Lock {
                name,
                wait_ms,
                kind: LockKind::Scope,
            },
        );
        self.lines.push(Line {
            scope: scope.to_owned(),
            lock,
            locked: None,
            queue: vec![me],
            next: 0,
            writes: 0,
            view: None,
        });
    }

    /// Send task `me`, first in line, took its place (`wrote`: its write is
    /// on its way, and the lock stays held until it is stored) or needs
    /// none: the next one takes theirs. A place stored (`me` 0) counts down.
    pub(super) fn hand_on(&mut self, me: TaskId, scope: Option<&str>, wrote: bool) {
        let Some(i) = self.line_at(scope) else {
            return;
        };
        let line = &mut self.lines[i];
        if me == 0 {
            line.writes = line.writes.saturating_sub(1);
        } else if line.queue.get(line.next) == Some(&me) {
            line.writes += u32::from(wrote);
            line.next += 1;
            if let (Some(next), Some(locked)) = (line.queue.get(line.next), line.locked) {
                self.wakes
                    .push_back((*next, Wake::Op(Done::Locked(locked))));
            }
        }
        // An empty line with nothing left to store lets the lock go.
        let line = &self.lines[i];
        if line.next == line.queue.len() && line.writes == 0 {
            let line = self.lines.swap_remove(i);
            if line.locked == Some(Locked::Held) {
                self.tell(Do::Unlock { lock: line.lock });
            }
        }
    }
}
