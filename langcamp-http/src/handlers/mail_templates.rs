//! Mail templates (CONTRACT §16): admins read, replace, reset and preview the template of
//! each kind of mail in each locale.

use langcamp_core::Result;
use langcamp_core::mail_templates::{
    DeletedMailTemplate, MailTemplate, MailTemplateInput, MailTemplatePreviewInput,
    NewMailTemplate, RenderedMail, TemplateAddress, TemplateSource, kind_and_locale,
};

use crate::limits::RateRule;
use crate::reply::{Envelope, ErrorEnvelope, Reply};
use crate::request::Ctx;
use crate::router::{Access, Routes};

pub fn routes(r: &mut Routes) {
    r.add::<__path_list>(RateRule::Default, Access::Admin, list);
    r.add::<__path_put>(RateRule::Default, Access::Admin, put);
    r.add::<__path_delete>(RateRule::Default, Access::Admin, delete);
    r.add::<__path_preview>(RateRule::Default, Access::Admin, preview);
}

/// Every template in effect: each kind in each locale that has a built-in or a stored
/// template, by kind then locale. A built-in one no stored one replaces has `builtIn`
/// true and `updatedAt` null.
#[utoipa::path(get, path = "/admin/mail-templates", tag = "mail-templates", operation_id = "listMailTemplates",
    responses(
        (status = 200, description = "The templates in effect", body = Envelope<Vec<MailTemplate>>),
    ))]
pub async fn list(ctx: Ctx) -> Result<Reply> {
    let actor = ctx.actor().await?;
    Ok(Reply::ok(&ctx.app.list_mail_templates(&actor).await?))
}

/// Replace the template of a kind in a locale; the next mail of that kind and locale uses
/// it, on every instance.
///
/// Checked before it is stored: a syntax error (with its line and column), an unknown
/// variable, a subject that renders to more than one line, an `otp` template whose `text`
/// or `html` does not show `{{ code }}`, an unknown kind or a locale that is not a
/// BCP 47 tag is 400 and nothing is stored.
#[utoipa::path(put, path = "/admin/mail-templates/{kind}/{locale}", tag = "mail-templates", operation_id = "putMailTemplate",
    params(TemplateAddress),
    // One example per kind: each kind has variables of its own, and a template that uses
    // another kind's is refused.
    request_body(content = MailTemplateInput, examples(
        ("otp" = (summary = "A sign-in code mail (kind otp), in German", value = json!({
            "subject": "Ihr Anmeldecode für {{ schoolName }}",
            "text": "Ihr Anmeldecode lautet {{ code }}.\n\nEr ist {{ minutes }} Minuten gültig.",
            "html": "<p>Ihr Anmeldecode lautet <b>{{ code }}</b>.</p>"
        }))),
        ("contact_reply" = (summary = "A reply to a contact request (kind contact_reply), in German", value = json!({
            "subject": "Ihre Anfrage bei {{ schoolName }}",
            "text": "Hallo {{ firstName }},\n\n{{ reply }}\n\nIhre Nachricht:\n{{ originalMessage }}",
            "html": "<p>Hallo {{ firstName }},</p><p>{{ reply }}</p>"
        }))),
        ("material_assigned" = (summary = "An assigned material (kind material_assigned), in German", value = json!({
            "subject": "Neues Material: {{ materialTitle }}",
            "text": "Hallo {{ name }},\n\n{{ materialTitle }} wartet auf Sie: {{ link }}",
            "html": "<p>Hallo {{ name }},</p><p><a href=\"{{ link }}\">{{ materialTitle }}</a></p>"
        }))),
        ("security_notice" = (summary = "A change to a user's second factors (kind security_notice), in German", value = json!({
            "subject": "Sicherheitshinweis von {{ schoolName }}",
            "text": "Guten Tag,\n\n{% if event == \"factor_added\" %}Neuer zweiter Faktor: {{ factorName }}.{% else %}Die Sicherheitseinstellungen Ihres Kontos wurden geändert.{% endif %}\n\nZeitpunkt: {{ at }}",
            "html": "<p>Guten Tag,</p><p>Zeitpunkt: {{ at }}</p>"
        }))),
    )),
    responses(
        (status = 200, description = "The stored template (`builtIn` false)", body = Envelope<MailTemplate>),
        (status = 400, description = "A problem of the template, kind or locale, one message each", body = ErrorEnvelope),
    ))]
pub async fn put(mut ctx: Ctx) -> Result<Reply> {
    let actor = ctx.actor().await?;
    let (kind, locale) = (ctx.param("kind").to_owned(), ctx.param("locale").to_owned());
    let template = ctx
        .command_with(|input: MailTemplateInput| NewMailTemplate::parse(&kind, &locale, input))
        .await?;
    Ok(Reply::ok(
        &ctx.app.put_mail_template(&actor, template).await?,
    ))
}

/// Delete the stored template of a kind in a locale: the built-in one (or, for a locale
/// without one, the next locale of the resolution) is used again.
#[utoipa::path(delete, path = "/admin/mail-templates/{kind}/{locale}", tag = "mail-templates", operation_id = "deleteMailTemplate",
    params(TemplateAddress),
    responses(
        (status = 200, description = "Deleted", body = Envelope<DeletedMailTemplate>),
        (status = 400, description = "Unknown kind, or a locale that is not a BCP 47 tag", body = ErrorEnvelope),
        (status = 404, description = "No stored template of that kind and locale", body = ErrorEnvelope),
    ))]
pub async fn delete(ctx: Ctx) -> Result<Reply> {
    let actor = ctx.actor().await?;
    let (kind, locale) = kind_and_locale(ctx.param("kind"), ctx.param("locale"))?;
    Ok(Reply::ok(
        &ctx.app.delete_mail_template(&actor, kind, &locale).await?,
    ))
}

/// Render a template with sample values, as its mail would look: the body's template, or
/// without a body (or with `{}`) the template in effect for that kind and locale. The
/// same checks as saving it; nothing is stored.
#[utoipa::path(post, path = "/admin/mail-templates/{kind}/{locale}/preview", tag = "mail-templates", operation_id = "previewMailTemplate",
    params(TemplateAddress),
    // One example per kind, as for PUT.
    request_body(content = Option<MailTemplatePreviewInput>, examples(
        ("otp" = (summary = "A sign-in code mail (kind otp)", value = json!({
            "subject": "Your {{ schoolName }} code",
            "text": "Your code is {{ code }}"
        }))),
        ("contact_reply" = (summary = "A reply to a contact request (kind contact_reply)", value = json!({
            "subject": "Your question to {{ schoolName }}",
            "text": "Hello {{ firstName }},\n\n{{ reply }}\n\nYou wrote:\n{{ originalMessage }}"
        }))),
        ("material_assigned" = (summary = "An assigned material (kind material_assigned)", value = json!({
            "subject": "New material: {{ materialTitle }}",
            "text": "Hello {{ name }},\n\n{{ materialTitle }} is waiting for you: {{ link }}"
        }))),
        ("security_notice" = (summary = "A change to a user's second factors (kind security_notice)", value = json!({
            "subject": "Security notice from {{ schoolName }}",
            "text": "Hello,\n\n{% if event == \"factor_removed\" %}A second factor was removed: {{ factorName }}.{% else %}The security of your account changed.{% endif %}\n\nWhen: {{ at }}"
        }))),
    )),
    responses(
        (status = 200, description = "The rendered mail", body = Envelope<RenderedMail>),
        (status = 400, description = "A problem of the template, kind or locale, one message each", body = ErrorEnvelope),
    ))]
pub async fn preview(mut ctx: Ctx) -> Result<Reply> {
    let actor = ctx.actor().await?;
    let input: Option<MailTemplatePreviewInput> = ctx.optional_json().await?;
    let (kind, locale) = kind_and_locale(ctx.param("kind"), ctx.param("locale"))?;
    let source = match input.and_then(MailTemplatePreviewInput::template) {
        Some(input) => Some(TemplateSource::parse(kind, input)?),
        None => None,
    };
    Ok(Reply::ok(
        &ctx.app
            .preview_mail_template(&actor, kind, &locale, source)
            .await?,
    ))
}
