//! Exports (CONTRACT §18): the admin lists as CSV files, streamed, and a user's personal
//! data as a JSON attachment. Neither is enveloped; a refusal is.

use futures_util::TryStreamExt;
use http_body_util::{BodyExt, StreamBody};
use hyper::Response;
use hyper::body::Frame;
use hyper::header::{CACHE_CONTROL, CONTENT_DISPOSITION, CONTENT_TYPE, HeaderValue};
use langcamp_core::contacts::{ContactFilter, ContactSearch};
use langcamp_core::exports::{CsvExport, ExportQuery, PersonalData};
use langcamp_core::placement::{ResultFilter, ResultQuery};
use langcamp_core::users::{UserFilter, UserQuery};
use langcamp_core::{Error, Result};
use utoipa::ToSchema;

use crate::limits::RateRule;
use crate::reply::{Body, ErrorEnvelope, Reply, full};
use crate::request::Ctx;
use crate::router::{Access, Routes};

pub fn routes(r: &mut Routes) {
    r.add::<__path_users_csv>(RateRule::Default, Access::Admin, users_csv);
    r.add::<__path_results_csv>(RateRule::Default, Access::Admin, results_csv);
    r.add::<__path_contacts_csv>(RateRule::Default, Access::Admin, contacts_csv);
    r.add::<__path_my_data>(RateRule::Default, Access::SignedIn, my_data);
    r.add::<__path_user_data>(RateRule::Default, Access::Admin, user_data);
}

/// A CSV file: UTF-8 with a byte-order mark, RFC 4180 (CRLF, quotes doubled), a header
/// row of the list's JSON field names, times in RFC 3339; a cell beginning with `=`, `+`,
/// `-`, `@`, a tab or a carriage return has a leading `'`.
#[derive(ToSchema)]
#[schema(value_type = String)]
#[allow(dead_code)]
pub struct CsvFile(String);

/// The users of `GET /users` with the same filters, every page, as CSV.
#[utoipa::path(get, operation_id = "exportUsersCsv", path = "/admin/exports/users.csv", tag = "exports",
    params(UserFilter),
    responses(
        (status = 200, description = "The file, streamed, with `Content-Disposition: attachment; filename=\"users-YYYY-MM-DD.csv\"`", content((CsvFile = "text/csv; charset=utf-8"))),
        (status = 400, description = "A bad filter, as on `GET /users`", body = ErrorEnvelope),
    ))]
pub async fn users_csv(ctx: Ctx) -> Result<Reply> {
    let actor = ctx.actor().await?;
    let query = UserQuery::try_from(&UserFilter {
        q: ctx.query("q").map(str::to_owned),
        is_registration_complete: ctx.query("isRegistrationComplete").map(str::to_owned),
        role: ctx.query("role").map(str::to_owned),
    })?;
    let export = ctx
        .app
        .export_csv(&actor, ExportQuery::Users(query))
        .await?;
    Ok(csv_reply(export))
}

/// The results of `GET /proficiency-tests/admin/results` with the same filters, every
/// page, as CSV; `answers` is the list's JSON array of a result's answers.
#[utoipa::path(get, operation_id = "exportResultsCsv", path = "/admin/exports/results.csv", tag = "exports",
    params(ResultFilter),
    responses(
        (status = 200, description = "The file, streamed, with `Content-Disposition: attachment; filename=\"results-YYYY-MM-DD.csv\"`", content((CsvFile = "text/csv; charset=utf-8"))),
        (status = 400, description = "A bad filter, as on the result list", body = ErrorEnvelope),
    ))]
pub async fn results_csv(ctx: Ctx) -> Result<Reply> {
    let actor = ctx.actor().await?;
    let query = ResultQuery::try_from(&ResultFilter {
        test_id: ctx.query("testId").map(str::to_owned),
        user_id: ctx.query("userId").map(str::to_owned),
        level: ctx.query("level").map(str::to_owned),
        target_language: ctx.query("targetLanguage").map(str::to_owned),
    })?;
    let export = ctx
        .app
        .export_csv(&actor, ExportQuery::Results(query))
        .await?;
    Ok(csv_reply(export))
}

/// The contact requests of `GET /contact/admin` with the same filters, every page, as CSV.
#[utoipa::path(get, operation_id = "exportContactsCsv", path = "/admin/exports/contacts.csv", tag = "exports",
    params(ContactFilter),
    responses(
        (status = 200, description = "The file, streamed, with `Content-Disposition: attachment; filename=\"contacts-YYYY-MM-DD.csv\"`", content((CsvFile = "text/csv; charset=utf-8"))),
        (status = 400, description = "An unknown status, as on the contact list", body = ErrorEnvelope),
    ))]
pub async fn contacts_csv(ctx: Ctx) -> Result<Reply> {
    let actor = ctx.actor().await?;
    let search = ContactSearch::try_from(&ContactFilter {
        status: ctx.query("status").map(str::to_owned),
        q: ctx.query("q").map(str::to_owned),
    })?;
    let export = ctx
        .app
        .export_csv(&actor, ExportQuery::Contacts(search))
        .await?;
    Ok(csv_reply(export))
}

/// The caller's own personal data (GDPR access and portability), one JSON document as an
/// attachment (not enveloped): profile, detailed results, materials, contact requests sent
/// from the caller's address, sign-ins (times only) and audit entries.
#[utoipa::path(get, operation_id = "exportMyData", path = "/me/export", tag = "exports",
    responses(
        (status = 200, description = "The document, with `Content-Disposition: attachment; filename=\"langcamp-data-YYYY-MM-DD.json\"`", body = PersonalData),
    ))]
pub async fn my_data(ctx: Ctx) -> Result<Reply> {
    let actor = ctx.actor().await?;
    let data = ctx.app.export_my_data(&actor).await?;
    json_attachment(&data)
}

/// A user's personal data, as `GET /me/export` answers it to them.
#[utoipa::path(get, operation_id = "exportUserData", path = "/admin/users/{id}/export", tag = "exports",
    params(("id" = String, Path, description = "User id")),
    responses(
        (status = 200, description = "The document, with `Content-Disposition: attachment; filename=\"langcamp-data-YYYY-MM-DD.json\"`", body = PersonalData),
        (status = 404, description = "No such user", body = ErrorEnvelope),
    ))]
pub async fn user_data(ctx: Ctx) -> Result<Reply> {
    let actor = ctx.actor().await?;
    let data = ctx.app.export_user_data(&actor, &ctx.id("id")).await?;
    json_attachment(&data)
}

/// The streamed CSV response. The rows are read as the client takes them; a client that
/// goes away drops the body, which stops the reading.
fn csv_reply(export: CsvExport) -> Reply {
    let body: Body = StreamBody::new(
        export
            .body
            .map_ok(Frame::data)
            .map_err(std::io::Error::other),
    )
    .boxed();
    let mut response = Response::new(body);
    let h = response.headers_mut();
    h.insert(
        CONTENT_TYPE,
        HeaderValue::from_static("text/csv; charset=utf-8"),
    );
    h.insert(CACHE_CONTROL, HeaderValue::from_static("no-store"));
    if let Ok(value) = attachment(&export.file_name) {
        h.insert(CONTENT_DISPOSITION, value);
    }
    Reply::Raw(response)
}

fn attachment(
    file_name: &str,
) -> std::result::Result<HeaderValue, hyper::header::InvalidHeaderValue> {
    HeaderValue::from_str(&format!("attachment; filename=\"{file_name}\""))
}

fn json_attachment(data: &PersonalData) -> Result<Reply> {
    let bytes = serde_json::to_vec(data).map_err(Error::internal)?;
    let file_name = format!(
        "langcamp-data-{}.json",
        data.exported_at.0.format("%Y-%m-%d")
    );
    let mut response = Response::new(full(bytes));
    let h = response.headers_mut();
    h.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
    h.insert(CACHE_CONTROL, HeaderValue::from_static("no-store"));
    h.insert(
        CONTENT_DISPOSITION,
        attachment(&file_name).map_err(Error::internal)?,
    );
    Ok(Reply::Raw(response))
}
