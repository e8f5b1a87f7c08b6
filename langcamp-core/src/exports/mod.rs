//! Exports (CONTRACT §18): the three admin lists as CSV, and a user's personal data as one
//! JSON document.
//!
//! A CSV export is one streaming writer (the `csv` crate, [`csv_out`]) over the list's own
//! filter, read from the database in chunks of [`CHUNK_ROWS`] rows by key (newest first,
//! as the lists): each chunk is one statement on a pooled connection, written into one
//! buffer and handed on before the next is read, so memory does not grow with the row
//! count, no connection is held while a slow client reads, and dropping the stream (a
//! client that disconnects, a console or command interrupted) stops the reading at the
//! next chunk. The chunks are separate reads: a row written while an export runs appears
//! in it or not, and no row is written twice or skipped because of it (the key moves
//! only backwards in time).
//!
//! Every export operation is here, so the audit trail (CONTRACT §17, the lead's module)
//! records one with a single call in [`Langcamp::export_csv`] and
//! [`Langcamp::export_user_data`].

mod csv_out;
mod personal;

use std::borrow::Cow;
use std::pin::Pin;
use std::task::{Context, Poll};

use bytes::Bytes;
use futures_util::Stream;
use futures_util::stream::{self, BoxStream, StreamExt};
use tokio::sync::mpsc;

use crate::Langcamp;
use crate::audit::{Entry, Target};
use crate::contacts::{self, Contact, ContactSearch};
use crate::domain::Id;
use crate::domain::actor::{Actor, Role};
use crate::domain::error::{Error, Result};
use crate::domain::time::Timestamp;
use crate::placement::{self, ResultQuery, TestResult};
use crate::users::{self, User, UserQuery};

pub use self::csv_out::{BOM, guard_formula};
pub use self::personal::{PersonalData, SignIn};

/// Rows read and written per chunk: a few hundred kilobytes of CSV at most.
pub const CHUNK_ROWS: i64 = 1000;

/// Which list to export, with the list's own validated filter.
#[derive(Clone, Debug, PartialEq)]
pub enum ExportQuery {
    /// `GET /users`'s rows and filters.
    Users(UserQuery),
    /// `GET /proficiency-tests/admin/results`'s rows and filters.
    Results(ResultQuery),
    /// `GET /contact/admin`'s rows and filters.
    Contacts(ContactSearch),
}

/// The names of the exports, as in `/admin/exports/<name>.csv` and `langcamp export <name>`.
pub const EXPORT_NAMES: [&str; 3] = ["users", "results", "contacts"];

impl ExportQuery {
    /// `users`, `results` or `contacts`.
    pub fn name(&self) -> &'static str {
        match self {
            ExportQuery::Users(_) => "users",
            ExportQuery::Results(_) => "results",
            ExportQuery::Contacts(_) => "contacts",
        }
    }

    /// The header row: the JSON field names of the list's items (a nested object's as
    /// `user.email`).
    pub fn columns(&self) -> &'static [&'static str] {
        match self {
            ExportQuery::Users(_) => User::COLUMNS,
            ExportQuery::Results(_) => TestResult::COLUMNS,
            ExportQuery::Contacts(_) => Contact::COLUMNS,
        }
    }
}

/// A CSV export on its way: its name, the file name to offer, and the body (byte-order
/// mark, header row, then a chunk of rows per item). Reading starts when the body is polled.
pub struct CsvExport {
    pub name: &'static str,
    /// `<name>-YYYY-MM-DD.csv`, the date of the export (UTC).
    pub file_name: String,
    pub body: CsvStream,
}

/// The bytes of a CSV export. Dropping it stops the export: the reading task ends at its
/// next chunk.
pub type CsvStream = Pin<Box<dyn Stream<Item = Result<Bytes>> + Send + Sync>>;

/// The receiving end of an export's reading task, as a stream.
struct Received(mpsc::Receiver<Result<Bytes>>);

impl Stream for Received {
    type Item = Result<Bytes>;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        self.get_mut().0.poll_recv(cx)
    }
}

/// Runs `chunks` in a task of its own, one chunk ahead of the reader: the stream handed
/// out is `Sync` (as response bodies must be) though a database read is not, and when the
/// reader drops it the task's next send fails and the task stops.
fn spawn_reading(mut chunks: BoxStream<'static, Result<Bytes>>) -> CsvStream {
    let (tx, rx) = mpsc::channel(1);
    tokio::spawn(async move {
        while let Some(chunk) = chunks.next().await {
            if tx.send(chunk).await.is_err() {
                tracing::debug!("an export's reader went away: reading stopped");
                return;
            }
        }
    });
    Box::pin(Received(rx))
}

impl std::fmt::Debug for CsvExport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CsvExport")
            .field("name", &self.name)
            .field("file_name", &self.file_name)
            .finish_non_exhaustive()
    }
}

/// A row of a CSV export: its cells in the order of `COLUMNS`, and its key in the list's
/// order (newest first), from which the next chunk is read.
pub(crate) trait CsvRow: Send + 'static {
    const COLUMNS: &'static [&'static str];
    fn cells(&self) -> Vec<Cow<'_, str>>;
    fn key(&self) -> (i64, String);
}

fn text(value: &Option<String>) -> Cow<'_, str> {
    Cow::Borrowed(value.as_deref().unwrap_or(""))
}

/// A number with its decimals as JSON writes it; an absent one is an empty cell.
fn number(value: Option<f64>) -> Cow<'static, str> {
    Cow::Owned(value.map(|v| v.to_string()).unwrap_or_default())
}

fn time(value: &Timestamp) -> Cow<'static, str> {
    Cow::Owned(value.to_string())
}

impl CsvRow for User {
    const COLUMNS: &'static [&'static str] = &[
        "id",
        "email",
        "name",
        "role",
        "isRegistrationComplete",
        "age",
        "gender",
        "city",
        "country",
        "countryCode",
        "phoneNumber",
        "locale",
        "createdAt",
        "updatedAt",
    ];

    fn cells(&self) -> Vec<Cow<'_, str>> {
        vec![
            Cow::Borrowed(&self.id),
            Cow::Borrowed(&self.email),
            text(&self.name),
            Cow::Borrowed(self.role.as_str()),
            Cow::Borrowed(if self.is_registration_complete {
                "true"
            } else {
                "false"
            }),
            self.age
                .map_or(Cow::Borrowed(""), |age| Cow::Owned(age.to_string())),
            text(&self.gender),
            text(&self.city),
            text(&self.country),
            text(&self.country_code),
            text(&self.phone_number),
            Cow::Borrowed(&self.locale),
            time(&self.created_at),
            time(&self.updated_at),
        ]
    }

    fn key(&self) -> (i64, String) {
        (self.created_at.millis(), self.id.clone())
    }
}

impl CsvRow for TestResult {
    // `_id` (the same value as `id`, for old clients) is left out.
    const COLUMNS: &'static [&'static str] = &[
        "id",
        "testId",
        "userId",
        "totalScore",
        "maxScore",
        "level",
        "message",
        "completedAt",
        "ability",
        "standardError",
        "user.id",
        "user.name",
        "user.email",
        "test.id",
        "test.title",
        "test.targetLanguage",
        "answers",
    ];

    fn cells(&self) -> Vec<Cow<'_, str>> {
        // The answers as the list's JSON array: one cell per result, whatever the test's length.
        let answers = serde_json::to_string(&self.answers).unwrap_or_default();
        vec![
            Cow::Borrowed(&self.id),
            Cow::Borrowed(&self.test_id),
            Cow::Borrowed(&self.user_id),
            Cow::Owned(self.total_score.to_string()),
            Cow::Owned(self.max_score.to_string()),
            Cow::Borrowed(&self.level),
            Cow::Borrowed(&self.message),
            time(&self.completed_at),
            number(self.ability),
            number(self.standard_error),
            Cow::Borrowed(&self.user.id),
            text(&self.user.name),
            Cow::Borrowed(&self.user.email),
            Cow::Borrowed(&self.test.id),
            Cow::Borrowed(&self.test.title),
            text(&self.test.target_language),
            Cow::Owned(answers),
        ]
    }

    fn key(&self) -> (i64, String) {
        (self.completed_at.millis(), self.id.clone())
    }
}

impl CsvRow for Contact {
    const COLUMNS: &'static [&'static str] = &[
        "id",
        "firstName",
        "lastName",
        "email",
        "phone",
        "message",
        "status",
        "replyMessage",
        "source",
        "locale",
        "repliedAt",
        "createdAt",
        "updatedAt",
    ];

    fn cells(&self) -> Vec<Cow<'_, str>> {
        vec![
            Cow::Borrowed(&self.id),
            Cow::Borrowed(&self.first_name),
            Cow::Borrowed(&self.last_name),
            Cow::Borrowed(&self.email),
            text(&self.phone),
            Cow::Borrowed(&self.message),
            Cow::Borrowed(self.status.as_str()),
            text(&self.reply_message),
            text(&self.source),
            text(&self.locale),
            self.replied_at.as_ref().map_or(Cow::Borrowed(""), time),
            time(&self.created_at),
            time(&self.updated_at),
        ]
    }

    fn key(&self) -> (i64, String) {
        (self.created_at.millis(), self.id.clone())
    }
}

/// Where the reading of an export stands.
enum Cursor {
    /// The byte-order mark and the header row are still to be written.
    Start,
    /// Rows older than this key (newest first) are still to be read.
    After(i64, String),
    Done,
}

/// The stream of a CSV export of `T`: the header, then one item per chunk that `read`
/// returns (`read(app, key, limit)`: the rows after `key`, newest first).
fn csv_stream<T, F, Fut>(app: Langcamp, read: F) -> BoxStream<'static, Result<Bytes>>
where
    T: CsvRow,
    F: Fn(Langcamp, (i64, String), i64) -> Fut + Send + 'static,
    Fut: std::future::Future<Output = Result<Vec<T>>> + Send + 'static,
{
    stream::unfold(
        (Cursor::Start, app, read),
        |(cursor, app, read)| async move {
            match cursor {
                Cursor::Done => None,
                Cursor::Start => {
                    let head = csv_out::header(T::COLUMNS);
                    // The first key is after every row: no time is later than i64::MAX.
                    let next = Cursor::After(i64::MAX, String::new());
                    Some((head, (next, app, read)))
                }
                Cursor::After(at, id) => {
                    let rows = match read(app.clone(), (at, id), CHUNK_ROWS).await {
                        Ok(rows) => rows,
                        Err(e) => {
                            let cause = std::error::Error::source(&e)
                                .map(ToString::to_string)
                                .unwrap_or_default();
                            tracing::error!(error = %e, %cause, "an export stopped: reading a chunk failed");
                            return Some((Err(e), (Cursor::Done, app, read)));
                        }
                    };
                    if rows.is_empty() {
                        return None;
                    }
                    let next = match rows.last() {
                        Some(last) if rows.len() as i64 == CHUNK_ROWS => {
                            let (at, id) = last.key();
                            Cursor::After(at, id)
                        }
                        _ => Cursor::Done,
                    };
                    Some((csv_out::rows(&rows), (next, app, read)))
                }
            }
        },
    )
    .boxed()
}

impl Langcamp {
    /// `GET /admin/exports/<name>.csv`, `langcamp export <name>`, the console's `x`: the
    /// rows of an admin list with its filter, as a CSV stream (admins only).
    #[tracing::instrument(level = "debug", skip_all)]
    pub async fn export_csv(&self, actor: &Actor, query: ExportQuery) -> Result<CsvExport> {
        actor.require(Role::Admin)?;
        // Step-up (CONTRACT §20): a whole list leaves the school; a recent check first.
        self.require_step_up(actor)?;
        let name = query.name();
        // The export writes nothing else: its entry is a transaction of its own, before
        // the first row is read.
        let entry = Entry::new(
            "export.downloaded",
            Target::named("export", format!("{name}.csv")),
        )
        .with_change_map(
            serde_json::json!({ "filters": { "from": null, "to": format!("{query:?}") } }),
        );
        self.record_alone(actor, entry).await?;
        let file_name = format!("{name}-{}.csv", self.clock().now().format("%Y-%m-%d"));
        let app = self.clone();
        let body = match query {
            ExportQuery::Users(query) => csv_stream(app, move |app, after, limit| {
                let query = query.clone();
                async move {
                    let mut conn = app.db().reader().acquire().await?;
                    users::export_chunk(&mut conn, &query, (after.0, &after.1), limit).await
                }
            }),
            ExportQuery::Results(query) => csv_stream(app, move |app, after, limit| {
                let query = query.clone();
                async move {
                    let mut conn = app.db().reader().acquire().await?;
                    placement::results_export_chunk(&mut conn, &query, (after.0, &after.1), limit)
                        .await
                }
            }),
            ExportQuery::Contacts(search) => csv_stream(app, move |app, after, limit| {
                let search = search.clone();
                async move {
                    let mut conn = app.db().reader().acquire().await?;
                    contacts::export_chunk(&mut conn, &search, (after.0, &after.1), limit).await
                }
            }),
        };
        Ok(CsvExport {
            name,
            file_name,
            body: spawn_reading(body),
        })
    }

    /// `GET /me/export`: the caller's own personal data (CONTRACT §18).
    #[tracing::instrument(level = "debug", skip_all)]
    pub async fn export_my_data(&self, actor: &Actor) -> Result<PersonalData> {
        let caller = actor.caller()?;
        personal::collect(self, &Id::from(&caller.user_id))
            .await?
            .ok_or(Error::TokenInvalid)
    }

    /// `GET /admin/users/{id}/export` (admin): a user's personal data (CONTRACT §18).
    #[tracing::instrument(level = "debug", skip_all)]
    pub async fn export_user_data(&self, actor: &Actor, id: &Id<User>) -> Result<PersonalData> {
        actor.require(Role::Admin)?;
        // Step-up (CONTRACT §20), as for the CSV exports.
        self.require_step_up(actor)?;
        let data = personal::collect(self, id)
            .await?
            .ok_or_else(|| Error::not_found("user"))?;
        let entry = Entry::new("export.personal_data", Target::user(id.as_str()));
        self.record_alone(actor, entry).await?;
        Ok(data)
    }
}
