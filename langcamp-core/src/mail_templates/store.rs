//! The SQL of stored templates: one row per kind and locale (the locale in its normalized
//! form, so `pt-br` and `pt-BR` are one row).

use sqlx::any::AnyRow;
use sqlx::{AnyConnection, Row};

use super::{TemplateKind, TemplateSource};
use crate::domain::LanguageTag;
use crate::error::Result;
use crate::page::UNPAGED_CAP;

/// A stored template as read.
#[derive(Clone, Debug)]
pub(super) struct StoredTemplate {
    pub kind: TemplateKind,
    pub locale: String,
    pub source: TemplateSource,
    pub updated_at: i64,
}

const COLUMNS: &str = "kind, locale, subject, text_body, html_body, updated_at";

/// The row, or `None` for a kind this build does not know (a newer release's).
fn from_row(row: &AnyRow) -> Result<Option<StoredTemplate>> {
    let kind: String = row.try_get("kind")?;
    let Ok(kind) = TemplateKind::parse(&kind) else {
        tracing::warn!(
            kind,
            "a stored mail template of an unknown kind is left out"
        );
        return Ok(None);
    };
    Ok(Some(StoredTemplate {
        kind,
        locale: row.try_get("locale")?,
        source: TemplateSource {
            subject: row.try_get("subject")?,
            text: row.try_get("text_body")?,
            html: row.try_get("html_body")?,
        },
        updated_at: row.try_get("updated_at")?,
    }))
}

/// Every stored template, by kind and locale.
pub(super) async fn all(conn: &mut AnyConnection) -> Result<Vec<StoredTemplate>> {
    let rows = sqlx::query(sqlx::AssertSqlSafe(format!(
        "SELECT {COLUMNS} FROM mail_templates ORDER BY kind, locale LIMIT $1"
    )))
    .bind(UNPAGED_CAP)
    .fetch_all(conn)
    .await?;
    Ok(rows
        .iter()
        .map(from_row)
        .collect::<Result<Vec<_>>>()?
        .into_iter()
        .flatten()
        .collect())
}

/// Creates or replaces the template of `kind` in `locale`; the row as stored.
pub(super) async fn upsert(
    conn: &mut AnyConnection,
    kind: TemplateKind,
    locale: &LanguageTag,
    source: &TemplateSource,
    now: i64,
) -> Result<StoredTemplate> {
    // Read with fetch_all: RETURNING read with fetch_one would leave the statement open and
    // hold SQLite's write lock (ARCHITECTURE, SQLite write rule b).
    let rows = sqlx::query(sqlx::AssertSqlSafe(format!(
        "INSERT INTO mail_templates ({COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6)
         ON CONFLICT (kind, locale) DO UPDATE SET subject = excluded.subject,
             text_body = excluded.text_body, html_body = excluded.html_body,
             updated_at = excluded.updated_at
         RETURNING {COLUMNS}"
    )))
    .bind(kind.as_str())
    .bind(locale.as_str())
    .bind(&source.subject)
    .bind(&source.text)
    .bind(source.html.as_deref())
    .bind(now)
    .fetch_all(conn)
    .await?;
    rows.first()
        .map(from_row)
        .transpose()?
        .flatten()
        .ok_or_else(|| crate::Error::internal("the stored mail template was not returned"))
}

/// Deletes the stored template of `kind` in `locale`; false when there was none.
pub(super) async fn delete(
    conn: &mut AnyConnection,
    kind: TemplateKind,
    locale: &LanguageTag,
) -> Result<bool> {
    let done = sqlx::query("DELETE FROM mail_templates WHERE kind = $1 AND locale = $2")
        .bind(kind.as_str())
        .bind(locale.as_str())
        .execute(conn)
        .await?;
    Ok(done.rows_affected() > 0)
}
