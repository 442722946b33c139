//! The authoritative event store: one SQLite table of event streams.
//!
//! Uniqueness of `(aggregate, version)` and `(aggregate, requestId)` is
//! enforced by the database inside the one INSERT of an append — never by
//! "check, then write" here.

use std::path::Path;
use std::sync::Mutex;

use rusqlite::{params, Connection, ErrorCode as SqliteCode};
use wow_command_client::core::protocol::DomainEventStream;

/// The schema (also documented in this crate's README).
pub const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS event_stream (
  seq            INTEGER PRIMARY KEY AUTOINCREMENT,
  id             TEXT    NOT NULL UNIQUE,
  context_name   TEXT    NOT NULL,
  aggregate_name TEXT    NOT NULL,
  aggregate_id   TEXT    NOT NULL,
  tenant_id      TEXT    NOT NULL,
  owner_id       TEXT    NOT NULL DEFAULT '',
  space_id       TEXT    NOT NULL DEFAULT '',
  command_id     TEXT    NOT NULL,
  request_id     TEXT    NOT NULL,
  version        INTEGER NOT NULL,
  create_time    INTEGER NOT NULL,
  header         TEXT    NOT NULL,
  body           TEXT    NOT NULL,
  UNIQUE (aggregate_name, aggregate_id, version),
  UNIQUE (aggregate_name, aggregate_id, request_id)
);
";

/// Why an append was refused.
#[derive(Debug, PartialEq, Eq)]
pub enum AppendError {
    /// The version is taken (a concurrent append, or a create on an existing id).
    VersionConflict,
    /// This aggregate already holds a stream with that requestId.
    DuplicateRequestId,
    /// Anything else the database said.
    Storage(String),
}

/// The store.
pub struct EventStore {
    conn: Mutex<Connection>,
}

impl EventStore {
    /// Opens (or creates) the store at `path`. WAL with `synchronous=FULL`:
    /// a committed append survives `kill -9`.
    pub fn open(path: &Path) -> rusqlite::Result<EventStore> {
        let conn = Connection::open(path)?;
        conn.pragma_update(None, "journal_mode", "WAL")?;
        conn.pragma_update(None, "synchronous", "FULL")?;
        conn.busy_timeout(std::time::Duration::from_secs(5))?;
        conn.execute_batch(SCHEMA)?;
        Ok(EventStore {
            conn: Mutex::new(conn),
        })
    }

    fn conn(&self) -> std::sync::MutexGuard<'_, Connection> {
        self.conn.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Appends one stream atomically.
    pub fn append(&self, s: &DomainEventStream) -> Result<(), AppendError> {
        let header = serde_json::to_string(&s.header).expect("a map serialises");
        let body = serde_json::to_string(&s.body).expect("events serialise");
        let result = self.conn().execute(
            "INSERT INTO event_stream (id, context_name, aggregate_name, aggregate_id, tenant_id,
               owner_id, space_id, command_id, request_id, version, create_time, header, body)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13)",
            params![
                s.id,
                s.context_name,
                s.aggregate_name,
                s.aggregate_id,
                s.tenant_id,
                s.owner_id,
                s.space_id,
                s.command_id,
                s.request_id,
                s.version,
                s.create_time,
                header,
                body
            ],
        );
        match result {
            Ok(_) => Ok(()),
            Err(rusqlite::Error::SqliteFailure(e, Some(msg)))
                if e.code == SqliteCode::ConstraintViolation =>
            {
                // SQLite names the columns of the index that failed.
                if msg.contains("request_id") {
                    Err(AppendError::DuplicateRequestId)
                } else if msg.contains("version") {
                    Err(AppendError::VersionConflict)
                } else {
                    Err(AppendError::Storage(msg))
                }
            }
            Err(e) => Err(AppendError::Storage(e.to_string())),
        }
    }

    /// Every stream of one aggregate, by version.
    pub fn load(&self, aggregate_name: &str, aggregate_id: &str) -> Vec<DomainEventStream> {
        self.select(
            "WHERE aggregate_name = ?1 AND aggregate_id = ?2 ORDER BY version",
            &[aggregate_name, aggregate_id],
        )
    }

    /// The streams of one aggregate after `version`, by version.
    pub fn load_after(
        &self,
        aggregate_name: &str,
        aggregate_id: &str,
        version: i64,
    ) -> Vec<DomainEventStream> {
        self.select(
            "WHERE aggregate_name = ?1 AND aggregate_id = ?2 AND version > CAST(?3 AS INTEGER) ORDER BY version",
            &[aggregate_name, aggregate_id, &version.to_string()],
        )
    }

    /// Whether the aggregate holds a stream with `request_id` (an indexed lookup).
    pub fn exists_request_id(
        &self,
        aggregate_name: &str,
        aggregate_id: &str,
        request_id: &str,
    ) -> bool {
        self.conn()
            .query_row(
                "SELECT 1 FROM event_stream WHERE aggregate_name = ?1 AND aggregate_id = ?2 AND request_id = ?3",
                params![aggregate_name, aggregate_id, request_id],
                |_| Ok(()),
            )
            .is_ok()
    }

    /// Every stream of one aggregate type (the query layer filters further),
    /// optionally narrowed to some aggregate ids.
    pub fn scan(&self, aggregate_name: &str, ids: Option<&[String]>) -> Vec<DomainEventStream> {
        match ids {
            None => self.select("WHERE aggregate_name = ?1 ORDER BY seq", &[aggregate_name]),
            Some(ids) => ids
                .iter()
                .flat_map(|id| self.load(aggregate_name, id))
                .collect(),
        }
    }

    fn select(&self, clause: &str, args: &[&str]) -> Vec<DomainEventStream> {
        let conn = self.conn();
        let sql = format!(
            "SELECT id, context_name, aggregate_name, aggregate_id, tenant_id, owner_id, space_id,
               command_id, request_id, version, create_time, header, body FROM event_stream {clause}"
        );
        let mut stmt = conn.prepare_cached(&sql).expect("valid SQL");
        let rows = stmt
            .query_map(rusqlite::params_from_iter(args.iter()), |r| {
                let header: String = r.get(11)?;
                let body: String = r.get(12)?;
                Ok(DomainEventStream {
                    id: r.get(0)?,
                    context_name: r.get(1)?,
                    aggregate_name: r.get(2)?,
                    aggregate_id: r.get(3)?,
                    tenant_id: r.get(4)?,
                    owner_id: r.get(5)?,
                    space_id: r.get(6)?,
                    command_id: r.get(7)?,
                    request_id: r.get(8)?,
                    version: r.get(9)?,
                    create_time: r.get(10)?,
                    header: serde_json::from_str(&header).unwrap_or_default(),
                    body: serde_json::from_str(&body).unwrap_or_default(),
                    size: None,
                })
            })
            .expect("query runs");
        rows.filter_map(Result::ok).collect()
    }
}
