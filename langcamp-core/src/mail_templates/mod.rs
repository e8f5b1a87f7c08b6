//! Mail in the reader's language (CONTRACT §16): every mail is rendered from a template of
//! its kind in its reader's locale, when it is queued.
//!
//! The built-in templates are data files ([`builtin`]); staff replace any of them per kind
//! and locale (the `mail_templates` table) and delete theirs to bring the built-in one
//! back. A locale resolves as `pt-BR` → `pt` → the school's default (setting
//! `mail.default_locale`) → `en`, and a stored template wins over a built-in one at each
//! step. What a mail needs (stored templates, school name, default locale) is read once
//! into a [`MailBook`] and cached until a template or a setting changes.

mod builtin;
pub mod file;
mod input;
mod kind;
pub mod render;
mod store;

use std::sync::Arc;

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

pub use self::input::{
    MailTemplateInput, MailTemplatePreviewInput, NewMailTemplate, TemplateAddress, TemplateSource,
    kind_and_locale,
};
pub use self::kind::{MailValues, SecurityEvent, TemplateKind};
use crate::Langcamp;
use crate::audit::Target;
use crate::domain::LanguageTag;
use crate::domain::actor::{Actor, Role};
use crate::domain::error::{Error, Result};
use crate::domain::time::Timestamp;
use crate::platform::changes::Change;
use crate::platform::mail::OutgoingMail;

/// The setting naming the school in every mail (`schoolName`).
pub const SCHOOL_NAME: &str = "school_name";
/// The setting naming the locale of mail whose reader's locale has no template.
pub const DEFAULT_LOCALE: &str = "mail.default_locale";
/// `schoolName` when the setting is not set.
const DEFAULT_SCHOOL_NAME: &str = "Langcamp";

/// A template in effect, built-in or stored.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct MailTemplate {
    pub kind: TemplateKind,
    #[schema(example = "de")]
    pub locale: String,
    #[schema(example = "Ihr Anmeldecode für {{ schoolName }}")]
    pub subject: String,
    pub text: String,
    pub html: Option<String>,
    /// True for a built-in template that no stored one replaces.
    pub built_in: bool,
    /// When staff last saved it; null for a built-in one.
    pub updated_at: Option<Timestamp>,
}

/// A mail as it would be sent.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct RenderedMail {
    pub subject: String,
    pub text: String,
    /// The whole HTML part.
    pub html: String,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct DeletedMailTemplate {
    pub kind: TemplateKind,
    pub locale: String,
    pub deleted: bool,
}

/// What [`Langcamp::import_mail_templates`] did, each template as `<kind>.<locale>`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ImportedMailTemplates {
    /// Stored: new, or different from the template in effect.
    pub stored: Vec<String>,
    /// The same as the template already in effect for that kind and locale.
    pub unchanged: Vec<String>,
}

/// Everything a mail is written from, read at once: the stored templates, the school's
/// name and its default locale.
#[derive(Debug)]
pub struct MailBook {
    stored: Vec<store::StoredTemplate>,
    school_name: String,
    default_locale: Option<LanguageTag>,
}

impl MailBook {
    /// The school's name (`{{ schoolName }}`): the setting `school_name`, else `Langcamp`.
    pub fn school_name(&self) -> &str {
        &self.school_name
    }

    /// The locales tried for a reader's `locale`, in order, lower-case: the tag, its
    /// language, the school's default (and its language), then `en`.
    fn chain(&self, locale: Option<&str>) -> Vec<String> {
        let mut chain: Vec<String> = Vec::with_capacity(5);
        let mut push = |tag: &str| {
            let tag = tag.to_ascii_lowercase();
            for candidate in [tag.clone(), tag.split('-').next().unwrap_or("").to_owned()] {
                if !candidate.is_empty() && !chain.contains(&candidate) {
                    chain.push(candidate);
                }
            }
        };
        if let Some(locale) = locale {
            push(locale);
        }
        if let Some(default) = &self.default_locale {
            push(default.as_str());
        }
        push(builtin::LAST_RESORT);
        chain
    }

    /// The template in effect for `kind` in one locale (lower-case), stored or built-in.
    fn in_locale(&self, kind: TemplateKind, locale: &str) -> Option<&TemplateSource> {
        self.stored
            .iter()
            .find(|t| t.kind == kind && t.locale.eq_ignore_ascii_case(locale))
            .map(|t| &t.source)
            .or_else(|| builtin::find(kind, locale).map(|b| &b.source))
    }

    /// The template for `kind` and a reader's `locale`, by the resolution of §16.
    fn resolve(&self, kind: TemplateKind, locale: Option<&str>) -> &TemplateSource {
        self.chain(locale)
            .iter()
            .find_map(|l| self.in_locale(kind, l))
            .or_else(|| builtin::find(kind, builtin::LAST_RESORT).map(|b| &b.source))
            .unwrap_or_else(|| &FALLBACK)
    }

    /// The mail to `to` of `values`' kind in the reader's `locale`.
    pub fn compose(
        &self,
        to: &str,
        locale: Option<&str>,
        values: &MailValues,
    ) -> Result<OutgoingMail> {
        let kind = values.kind();
        let source = self.resolve(kind, locale);
        let rendered = render::render(source, values, &self.school_name).or_else(|problem| {
            // Checked at save, so this is a bug; the reader still gets a mail.
            tracing::error!(%kind, problem, "a mail template failed to render; the built-in one is used");
            let built_in = builtin::find(kind, builtin::LAST_RESORT)
                .map_or(&*FALLBACK, |b| &b.source);
            render::render(built_in, values, &self.school_name)
        });
        let rendered = rendered.map_err(Error::internal)?;
        Ok(OutgoingMail {
            to: to.to_owned(),
            subject: rendered.subject,
            text: rendered.text,
            html: rendered.html,
        })
    }
}

/// Used only if the built-in files were all unreadable, which their tests rule out.
static FALLBACK: std::sync::LazyLock<TemplateSource> =
    std::sync::LazyLock::new(|| TemplateSource {
        subject: "{{ schoolName }}".into(),
        text: "{{ schoolName }}".into(),
        html: None,
    });

impl Langcamp {
    /// What mail is written from now; cached until a template or a setting changes.
    pub(crate) async fn mail_book(&self) -> Result<Arc<MailBook>> {
        let now = self.clock().now_ms();
        self.caches()
            .mail
            .get_or_load((), now, || async {
                let mut conn = self.db().reader().acquire().await?;
                let stored = store::all(&mut conn).await?;
                let school_name = crate::settings::text_setting(&mut conn, SCHOOL_NAME)
                    .await?
                    .unwrap_or_else(|| DEFAULT_SCHOOL_NAME.to_owned());
                let default_locale = crate::settings::text_setting(&mut conn, DEFAULT_LOCALE)
                    .await?
                    .and_then(|tag| LanguageTag::parse(DEFAULT_LOCALE, &tag).ok());
                Ok(Arc::new(MailBook {
                    stored,
                    school_name,
                    default_locale,
                }))
            })
            .await
    }

    /// `GET /admin/mail-templates`: every template in effect, by kind then locale (admin).
    #[tracing::instrument(level = "debug", skip_all)]
    pub async fn list_mail_templates(&self, actor: &Actor) -> Result<Vec<MailTemplate>> {
        actor.require(Role::Admin)?;
        let mut conn = self.db().reader().acquire().await?;
        let stored = store::all(&mut conn).await?;
        let mut list: Vec<MailTemplate> = stored.into_iter().map(stored_template).collect();
        for built_in in builtin::all() {
            let replaced = list
                .iter()
                .any(|t| t.kind == built_in.kind && t.locale.eq_ignore_ascii_case(built_in.locale));
            if !replaced {
                list.push(MailTemplate {
                    kind: built_in.kind,
                    locale: built_in.locale.to_owned(),
                    subject: built_in.source.subject.clone(),
                    text: built_in.source.text.clone(),
                    html: built_in.source.html.clone(),
                    built_in: true,
                    updated_at: None,
                });
            }
        }
        list.sort_by(|a, b| (a.kind.as_str(), &a.locale).cmp(&(b.kind.as_str(), &b.locale)));
        Ok(list)
    }

    /// `PUT /admin/mail-templates/{kind}/{locale}`: stores a checked template (admin); the
    /// next mail of that kind and locale uses it.
    #[tracing::instrument(level = "debug", skip_all)]
    pub async fn put_mail_template(
        &self,
        actor: &Actor,
        template: NewMailTemplate,
    ) -> Result<MailTemplate> {
        actor.require(Role::Admin)?;
        let NewMailTemplate {
            kind,
            locale,
            source,
        } = template;
        let put = store::Put {
            kind,
            locale,
            source,
        };
        let stored = self
            .staff_write(actor, put, Some(Change::MailTemplates))
            .await?;
        Ok(stored_template(stored))
    }

    /// Stores many templates as one piece of write work (`langcamp mail-templates import`):
    /// all or none. A template the same as the one in effect for its kind and locale is left as it
    /// is, so importing an export stores nothing and built-in templates stay built-in.
    #[tracing::instrument(level = "debug", skip_all)]
    pub async fn import_mail_templates(
        &self,
        actor: &Actor,
        templates: Vec<NewMailTemplate>,
    ) -> Result<ImportedMailTemplates> {
        actor.require(Role::Admin)?;
        let name = |t: &NewMailTemplate| format!("{}.{}", t.kind, t.locale);
        for (i, template) in templates.iter().enumerate() {
            if templates[..i]
                .iter()
                .any(|t| t.kind == template.kind && t.locale == template.locale)
            {
                return Err(Error::invalid(format!("{} is given twice", name(template))));
            }
        }
        // Read afresh: what is compared must be what is in the database now.
        self.caches().mail.invalidate_all();
        let book = self.mail_book().await?;
        let mut report = ImportedMailTemplates::default();
        let mut changed = Vec::new();
        for template in templates {
            let locale = template.locale.as_str().to_ascii_lowercase();
            if book.in_locale(template.kind, &locale) == Some(&template.source) {
                report.unchanged.push(name(&template));
            } else {
                report.stored.push(name(&template));
                changed.push(template);
            }
        }
        let mut changed = changed.into_iter();
        if let Some(first) = changed.next() {
            let import = store::Import {
                first,
                rest: changed.collect(),
            };
            self.staff_write(actor, import, Some(Change::MailTemplates))
                .await?;
        }
        Ok(report)
    }

    /// `DELETE /admin/mail-templates/{kind}/{locale}`: the built-in template is used again
    /// (admin); 404 when none is stored.
    #[tracing::instrument(level = "debug", skip_all)]
    pub async fn delete_mail_template(
        &self,
        actor: &Actor,
        kind: TemplateKind,
        locale: &LanguageTag,
    ) -> Result<DeletedMailTemplate> {
        actor.require(Role::Admin)?;
        let delete = store::Delete {
            kind,
            locale: locale.clone(),
        };
        self.staff_write(actor, delete, Some(Change::MailTemplates))
            .await?;
        Ok(DeletedMailTemplate {
            kind,
            locale: locale.as_str().to_owned(),
            deleted: true,
        })
    }

    /// `POST /admin/mail-templates/{kind}/{locale}/preview`: `source`, or the template in
    /// effect for that locale without one, rendered with sample values (admin).
    #[tracing::instrument(level = "debug", skip_all)]
    pub async fn preview_mail_template(
        &self,
        actor: &Actor,
        kind: TemplateKind,
        locale: &LanguageTag,
        source: Option<TemplateSource>,
    ) -> Result<RenderedMail> {
        actor.require(Role::Admin)?;
        let book = self.mail_book().await?;
        let source = match &source {
            Some(source) => source,
            None => book.resolve(kind, Some(locale.as_str())),
        };
        let rendered =
            render::render(source, &kind.sample(), &book.school_name).map_err(Error::invalid)?;
        Ok(RenderedMail {
            subject: rendered.subject,
            text: rendered.text,
            html: rendered.html,
        })
    }
}

/// A template as the audit trail names it (CONTRACT §17): its id is `<kind>/<locale>` (the
/// path's, `otp/de`), so `targetId=otp/de` finds its whole history; its label
/// `<kind>.<locale>`.
fn template_target(kind: TemplateKind, locale: &LanguageTag) -> Target {
    Target::record(
        "mail_template",
        format!("{kind}/{locale}"),
        format!("{kind}.{locale}"),
    )
}

fn stored_template(stored: store::StoredTemplate) -> MailTemplate {
    MailTemplate {
        kind: stored.kind,
        locale: stored.locale,
        subject: stored.source.subject,
        text: stored.source.text,
        html: stored.source.html,
        built_in: false,
        updated_at: Some(Timestamp::from_millis(stored.updated_at)),
    }
}
