//! The SQL of stored templates: one row per kind and locale (the locale in its normalized
//! form, so `pt-br` and `pt-BR` are one row).

use sqlx::AnyConnection;

use super::{NewMailTemplate, TemplateKind, TemplateSource, template_target};
use crate::audit::{Entries, Entry, Staff, StaffWrite};
use crate::domain::LanguageTag;
use crate::domain::error::{Error, Result};
use crate::domain::page::UNPAGED_CAP;
use crate::platform::db::{Arg, Row, WriteConn};

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
fn from_row(row: &impl Row) -> Result<Option<StoredTemplate>> {
    let kind = row.text("kind")?;
    let Ok(kind) = TemplateKind::parse(&kind) else {
        tracing::warn!(
            kind,
            "a stored mail template of an unknown kind is left out"
        );
        return Ok(None);
    };
    Ok(Some(StoredTemplate {
        kind,
        locale: row.text("locale")?,
        source: TemplateSource {
            subject: row.text("subject")?,
            text: row.text("text_body")?,
            html: row.opt_text("html_body")?,
        },
        updated_at: row.int("updated_at")?,
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
pub(super) async fn upsert<C: WriteConn>(
    conn: &mut C,
    kind: TemplateKind,
    locale: &LanguageTag,
    source: &TemplateSource,
    now: i64,
) -> Result<StoredTemplate> {
    let row = conn
        .fetch_first(
            "INSERT INTO mail_templates (kind, locale, subject, text_body, html_body, updated_at)
             VALUES ($1, $2, $3, $4, $5, $6)
             ON CONFLICT (kind, locale) DO UPDATE SET subject = excluded.subject,
                 text_body = excluded.text_body, html_body = excluded.html_body,
                 updated_at = excluded.updated_at
             RETURNING kind, locale, subject, text_body, html_body, updated_at",
            &[
                Arg::Text(kind.as_str()),
                Arg::Text(locale.as_str()),
                Arg::Text(&source.subject),
                Arg::Text(&source.text),
                Arg::OptText(source.html.as_deref()),
                Arg::Int(now),
            ],
        )
        .await?;
    row.as_ref()
        .map(from_row)
        .transpose()?
        .flatten()
        .ok_or_else(|| crate::Error::internal("the stored mail template was not returned"))
}

/// Deletes the stored template of `kind` in `locale`; false when there was none.
pub(super) async fn delete<C: WriteConn>(
    conn: &mut C,
    kind: TemplateKind,
    locale: &LanguageTag,
) -> Result<bool> {
    let deleted = conn
        .exec(
            "DELETE FROM mail_templates WHERE kind = $1 AND locale = $2",
            &[Arg::Text(kind.as_str()), Arg::Text(locale.as_str())],
        )
        .await?;
    Ok(deleted > 0)
}

/// `PUT /admin/mail-templates/{kind}/{locale}`: the template, its audit entry and its
/// announcement, as one piece of write work ([`Langcamp::write_change`]).
pub(super) struct Put {
    pub kind: TemplateKind,
    pub locale: LanguageTag,
    pub source: TemplateSource,
}

impl StaffWrite for Put {
    type Output = StoredTemplate;

    async fn run<C: WriteConn>(
        self,
        conn: &mut C,
        by: &Staff,
    ) -> Result<(StoredTemplate, Entries)> {
        let stored = upsert(conn, self.kind, &self.locale, &self.source, by.now).await?;
        let entry = Entry::new(
            "mail_template.put",
            template_target(self.kind, &self.locale),
        );
        Ok((stored, entry.into()))
    }
}

/// `DELETE /admin/mail-templates/{kind}/{locale}`: 404 when none is stored (nothing
/// recorded).
pub(super) struct Delete {
    pub kind: TemplateKind,
    pub locale: LanguageTag,
}

impl StaffWrite for Delete {
    type Output = ();

    async fn run<C: WriteConn>(self, conn: &mut C, _by: &Staff) -> Result<((), Entries)> {
        if !delete(conn, self.kind, &self.locale).await? {
            return Err(Error::not_found("stored mail template"));
        }
        let target = template_target(self.kind, &self.locale);
        Ok(((), Entry::new("mail_template.deleted", target).into()))
    }
}

/// `langcamp mail-templates import`: each template with its entry, all or none, as one
/// piece of write work: the first template and the rest (only those that differ from
/// the ones in effect; with none, nothing is written).
pub(super) struct Import {
    pub first: NewMailTemplate,
    pub rest: Vec<NewMailTemplate>,
}

impl StaffWrite for Import {
    type Output = ();

    async fn run<C: WriteConn>(self, conn: &mut C, by: &Staff) -> Result<((), Entries)> {
        let mut entries: Option<Entries> = None;
        for template in std::iter::once(&self.first).chain(&self.rest) {
            upsert(
                conn,
                template.kind,
                &template.locale,
                &template.source,
                by.now,
            )
            .await?;
            let target = template_target(template.kind, &template.locale);
            let entry = Entry::new("mail_template.put", target);
            entries = Some(match entries {
                None => entry.into(),
                Some(entries) => entries.and(entry),
            });
        }
        let entries = entries.unwrap_or_else(|| unreachable!("an import has a first template"));
        Ok(((), entries))
    }
}
