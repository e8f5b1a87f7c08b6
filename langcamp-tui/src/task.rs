//! Core calls. `update` never awaits: it returns [`Task`]s, the runtime runs each on a tokio
//! task with [`execute`] and sends the [`Done`] back through the one event channel.
//! Every call acts as [`Actor::Operator`], the trusted operator at the machine.

use langcamp_core::audit::{AuditEntry, AuditQuery};
use langcamp_core::auth::FactorList;
use langcamp_core::contacts::{Contact, ContactSearch, ContactStatus, ReplyText};
use langcamp_core::courses::{Course, CourseChange, CourseFilter};
use langcamp_core::dashboard::{Dashboard, TrendMonths};
use langcamp_core::domain::validate::{self, Patch};
use langcamp_core::domain::{Email, Id, LanguageFilter, LanguageTag};
use langcamp_core::exports::{CsvExport, ExportQuery};
use langcamp_core::mail_templates::{MailTemplate, NewMailTemplate, RenderedMail, TemplateKind};
use langcamp_core::materials::{Assignment, Material};
use langcamp_core::placement::{ProficiencyTest, ResultQuery, TestPatch, TestResult};
use langcamp_core::settings::{NewSetting, Setting};
use langcamp_core::users::{User, UserQuery};
use langcamp_core::webhooks::{
    Delivery, DeliveryQuery, DeliveryStatus, Endpoint, EndpointStanding,
};
use langcamp_core::{Actor, Error, Langcamp, Page, PageRequest, Role};
use std::path::{Path, PathBuf};

use futures_util::StreamExt;
use tokio::io::AsyncWriteExt;

/// A core call to make, numbered so its answer finds its way back.
#[derive(Debug)]
pub struct Task {
    pub id: u64,
    pub job: Job,
}

/// What to ask core.
#[derive(Clone, Debug, PartialEq)]
pub enum Job {
    Dashboard {
        months: u32,
    },
    Users {
        q: String,
        role: Option<Role>,
        complete: Option<bool>,
        page: u32,
    },
    SetRole {
        id: Id<User>,
        email: String,
        role: Role,
    },
    SetEmail {
        id: Id<User>,
        email: Email,
    },
    DeleteUser {
        id: Id<User>,
        email: String,
    },
    /// A user's second factors and recovery codes left (CONTRACT §20).
    UserFactors {
        id: Id<User>,
    },
    /// Removes every second factor and recovery code of a user and ends their sign-ins,
    /// for a colleague locked out.
    ResetFactors {
        id: Id<User>,
        email: String,
    },
    Contacts {
        q: String,
        status: Option<ContactStatus>,
        page: u32,
    },
    ReplyContact {
        id: Id<Contact>,
        email: String,
        reply: ReplyText,
    },
    SetContactStatus {
        id: Id<Contact>,
        status: ContactStatus,
    },
    DeleteContact {
        id: Id<Contact>,
        who: String,
    },
    Tests {
        page: u32,
    },
    Results {
        scope: ResultScope,
        page: u32,
    },
    SetTestActive {
        id: Id<ProficiencyTest>,
        title: String,
        active: bool,
    },
    DeleteResult {
        id: Id<TestResult>,
        who: String,
    },
    Materials {
        page: u32,
    },
    AssignMaterial {
        id: Id<Material>,
        title: String,
        user_ids: Vec<Id<User>>,
    },
    UnassignMaterial {
        id: Id<Material>,
        title: String,
        user_id: Id<User>,
        email: String,
    },
    Courses,
    PublishCourse {
        id: Id<Course>,
        title: String,
        publish: bool,
    },
    DuplicateCourse {
        id: Id<Course>,
        title: String,
    },
    DeleteCourse {
        id: Id<Course>,
        title: String,
    },
    Settings,
    PutSetting {
        key: String,
        value: serde_json::Value,
    },
    MailTemplates,
    PutMailTemplate {
        template: NewMailTemplate,
    },
    /// Deletes the stored template: the built-in one applies again.
    ResetMailTemplate {
        kind: TemplateKind,
        locale: LanguageTag,
    },
    /// The template in effect, rendered with sample values.
    PreviewMailTemplate {
        kind: TemplateKind,
        locale: LanguageTag,
    },
    /// A page of the audit trail, newest first.
    Audit {
        query: AuditQuery,
        page: u32,
    },
    /// Every webhook endpoint with how its deliveries stand.
    WebhookStandings,
    /// A page of an endpoint's deliveries, newest first.
    WebhookDeliveries {
        id: Id<Endpoint>,
        status: Option<DeliveryStatus>,
        page: u32,
    },
    /// A list with a view's current filter, as a CSV file under `DATA_DIR/exports`.
    Export(ExportList),
}

/// Which list to export, with the filter its view shows.
#[derive(Clone, Debug, PartialEq)]
pub enum ExportList {
    Users(UserQuery),
    Contacts(ContactSearch),
    Results(ResultScope),
}

/// Whose test results to list.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ResultScope {
    Test {
        id: Id<ProficiencyTest>,
        title: String,
    },
    User {
        email: Email,
    },
}

/// What came back: data for a view, or the confirmation of a write.
#[derive(Debug)]
pub enum Data {
    Dashboard(Box<Dashboard>),
    Users(Page<User>),
    Factors(UserFactors),
    Contacts(Page<Contact>),
    Tests(Page<ProficiencyTest>),
    Results(Page<TestResult>),
    Materials(Page<Material>),
    Courses(Vec<Course>),
    Settings(Vec<Setting>),
    MailTemplates(Vec<MailTemplate>),
    MailPreview(MailPreview),
    Audit(Page<AuditEntry>),
    WebhookStandings(Vec<EndpointStanding>),
    WebhookDeliveries(Page<Delivery>),
    /// A write succeeded; the text says what was done.
    Written(String),
    /// A file was written, nothing in the database changed; the text names the file.
    Exported(String),
}

/// A template rendered with sample values, and which it is.
#[derive(Clone, Debug, PartialEq)]
pub struct MailPreview {
    pub kind: TemplateKind,
    /// As core writes it (`pt-BR`).
    pub locale: String,
    pub mail: RenderedMail,
}

/// A user's second factors, and whose they are.
#[derive(Clone, Debug, PartialEq)]
pub struct UserFactors {
    pub user_id: Id<User>,
    pub list: FactorList,
}

/// The answer to task `id`.
#[derive(Debug)]
pub struct Done {
    pub id: u64,
    pub outcome: Result<Data, String>,
}

/// Rows per page of the console's tables.
pub const PAGE_SIZE: u32 = 15;

/// Runs `job` against core.
pub async fn execute(core: &Langcamp, job: Job) -> Result<Data, String> {
    run(core, job).await.map_err(|e| describe(&e))
}

async fn run(core: &Langcamp, job: Job) -> Result<Data, Error> {
    let op = &Actor::Operator;
    Ok(match job {
        Job::Dashboard { months } => Data::Dashboard(Box::new(
            core.dashboard(op, TrendMonths::new(months)?).await?,
        )),
        Job::Users {
            q,
            role,
            complete,
            page,
        } => {
            let query = UserQuery {
                text: validate::search_text(Some(&q)),
                is_registration_complete: complete,
                role,
            };
            Data::Users(core.list_users(op, &query, page_request(page)).await?)
        }
        Job::SetRole { id, email, role } => {
            core.set_role(op, &id, role).await?;
            Data::Written(format!("{email} is now {role}"))
        }
        Job::SetEmail { id, email } => {
            let user = core.set_user_email(op, &id, email).await?;
            Data::Written(format!("e-mail changed to {}", user.email))
        }
        Job::DeleteUser { id, email } => {
            core.delete_user(op, &id).await?;
            Data::Written(format!("deleted {email}"))
        }
        Job::UserFactors { id } => {
            let list = core.user_factors(op, &id).await?;
            Data::Factors(UserFactors { user_id: id, list })
        }
        Job::ResetFactors { id, email } => {
            core.reset_factors(op, &id).await?;
            Data::Written(format!(
                "reset the second factors of {email}; their sign-ins ended"
            ))
        }
        Job::Contacts { q, status, page } => {
            let q = q.trim();
            let search = ContactSearch {
                status,
                text: (!q.is_empty()).then(|| q.to_owned()),
            };
            Data::Contacts(core.list_contacts(op, &search, page_request(page)).await?)
        }
        Job::ReplyContact { id, email, reply } => {
            core.reply_to_contact(op, &id, &reply).await?;
            Data::Written(format!("reply saved; the mail to {email} is queued"))
        }
        Job::SetContactStatus { id, status } => {
            core.set_contact_status(op, &id, status).await?;
            Data::Written(format!("status set to {status}"))
        }
        Job::DeleteContact { id, who } => {
            core.delete_contact(op, &id).await?;
            Data::Written(format!("deleted the request from {who}"))
        }
        Job::Tests { page } => {
            let filter = LanguageFilter::default();
            Data::Tests(core.list_tests(op, &filter, page_request(page)).await?)
        }
        Job::Results { scope, page } => {
            let filter = result_query(core, scope).await?;
            Data::Results(
                core.list_test_results(op, &filter, page_request(page))
                    .await?,
            )
        }
        Job::SetTestActive { id, title, active } => {
            let input = TestPatch {
                is_active: Patch::Value(active),
                ..TestPatch::default()
            };
            core.update_test(op, &id, input).await?;
            let done = if active { "activated" } else { "deactivated" };
            Data::Written(format!("{done} \"{title}\""))
        }
        Job::DeleteResult { id, who } => {
            core.delete_test_result(op, &id).await?;
            Data::Written(format!("deleted the result of {who}"))
        }
        Job::Materials { page } => {
            Data::Materials(core.list_materials(op, None, page_request(page)).await?)
        }
        Job::AssignMaterial {
            id,
            title,
            user_ids,
        } => {
            let assignment = Assignment::new(user_ids)?;
            let result = core.assign_material(op, &id, &assignment).await?;
            let mut text = format!(
                "assigned \"{title}\" to {} {}",
                result.assigned,
                if result.assigned == 1 {
                    "user"
                } else {
                    "users"
                }
            );
            if result.already_assigned > 0 {
                text.push_str(&format!(" ({} had it already)", result.already_assigned));
            }
            if result.assigned > 0 {
                text.push_str("; mails queued");
            }
            Data::Written(text)
        }
        Job::UnassignMaterial {
            id,
            title,
            user_id,
            email,
        } => {
            core.unassign_material(op, &id, &user_id).await?;
            Data::Written(format!("unassigned \"{title}\" from {email}"))
        }
        Job::Courses => {
            let courses = core.list_courses(op, &CourseFilter::default()).await?;
            Data::Courses(courses.as_ref().clone())
        }
        Job::PublishCourse { id, title, publish } => {
            let change = CourseChange::publish(publish);
            core.update_course(op, &id, change).await?;
            let done = if publish { "published" } else { "unpublished" };
            Data::Written(format!("{done} \"{title}\""))
        }
        Job::DuplicateCourse { id, title } => {
            let copy = core.duplicate_course(op, &id).await?;
            Data::Written(format!("duplicated \"{title}\" as \"{}\"", copy.title))
        }
        Job::DeleteCourse { id, title } => {
            core.delete_course(op, &id).await?;
            Data::Written(format!("deleted \"{title}\""))
        }
        Job::Settings => Data::Settings(core.list_settings(op).await?),
        Job::PutSetting { key, value } => {
            core.put_setting(op, NewSetting::new(key.clone(), value)?)
                .await?;
            Data::Written(format!("saved {key}"))
        }
        Job::MailTemplates => Data::MailTemplates(core.list_mail_templates(op).await?),
        Job::PutMailTemplate { template } => {
            let saved = core.put_mail_template(op, template).await?;
            Data::Written(format!(
                "saved the {} template in {}; the next mail uses it",
                saved.kind, saved.locale
            ))
        }
        Job::ResetMailTemplate { kind, locale } => {
            core.delete_mail_template(op, kind, &locale).await?;
            Data::Written(format!(
                "reset the {kind} template in {locale} to the built-in one"
            ))
        }
        Job::PreviewMailTemplate { kind, locale } => {
            let mail = core.preview_mail_template(op, kind, &locale, None).await?;
            Data::MailPreview(MailPreview {
                kind,
                locale: locale.as_str().to_owned(),
                mail,
            })
        }
        Job::Audit { query, page } => {
            Data::Audit(core.list_audit(op, &query, page_request(page)).await?)
        }
        Job::WebhookStandings => Data::WebhookStandings(core.webhook_standings(op).await?),
        Job::WebhookDeliveries { id, status, page } => {
            let query = DeliveryQuery { status };
            Data::WebhookDeliveries(
                core.webhook_deliveries(op, &id, query, page_request(page))
                    .await?,
            )
        }
        Job::Export(list) => {
            let query = match list {
                ExportList::Users(query) => ExportQuery::Users(query),
                ExportList::Contacts(search) => ExportQuery::Contacts(search),
                ExportList::Results(scope) => {
                    ExportQuery::Results(result_query(core, scope).await?)
                }
            };
            let export = core.export_csv(op, query).await?;
            let folder = core.config().data_dir.join("exports");
            let (path, bytes) = write_export(export, &folder).await?;
            Data::Exported(format!("exported to {} ({bytes} bytes)", path.display()))
        }
    })
}

/// The result list's filter for `scope`.
async fn result_query(core: &Langcamp, scope: ResultScope) -> Result<ResultQuery, Error> {
    Ok(match scope {
        ResultScope::Test { id, .. } => ResultQuery {
            test_id: Some(id),
            ..ResultQuery::default()
        },
        ResultScope::User { email } => ResultQuery {
            user_id: Some(
                core.get_user_by_email(&Actor::Operator, &email)
                    .await?
                    .typed_id(),
            ),
            ..ResultQuery::default()
        },
    })
}

/// Writes `export` into a new file in `folder` (created if needed) named after the export
/// (`users-2026-11-26.csv`, then `users-2026-11-26-2.csv`, ...): its path and size.
async fn write_export(export: CsvExport, folder: &Path) -> Result<(PathBuf, u64), Error> {
    tokio::fs::create_dir_all(folder).await?;
    let stem = export.file_name.trim_end_matches(".csv").to_owned();
    let mut n = 1;
    let (path, mut file) = loop {
        let name = if n == 1 {
            format!("{stem}.csv")
        } else {
            format!("{stem}-{n}.csv")
        };
        let path = folder.join(name);
        match tokio::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&path)
            .await
        {
            Ok(file) => break (path, file),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists && n < 1000 => n += 1,
            Err(e) => return Err(e.into()),
        }
    };
    let mut body = export.body;
    let mut bytes = 0;
    while let Some(chunk) = body.next().await {
        let written = match chunk {
            Ok(chunk) => file.write_all(&chunk).await.map(|()| chunk.len() as u64),
            Err(e) => {
                drop(file);
                let _ = tokio::fs::remove_file(&path).await;
                return Err(e);
            }
        };
        match written {
            Ok(n) => bytes += n,
            Err(e) => {
                drop(file);
                let _ = tokio::fs::remove_file(&path).await;
                return Err(e.into());
            }
        }
    }
    file.flush().await?;
    Ok((path, bytes))
}

fn page_request(page: u32) -> PageRequest {
    PageRequest {
        page: page.max(1),
        limit: PAGE_SIZE,
    }
}

/// A core error as one line for the status bar. Internal causes go to the log only.
pub fn describe(error: &Error) -> String {
    match error {
        Error::Unavailable(cause) => {
            tracing::warn!(error = %cause, "database unavailable");
            "the database is not answering; try again (r reloads)".into()
        }
        Error::Internal(cause) => {
            tracing::error!(error = %cause, "internal error");
            "internal error (details in the log)".into()
        }
        other => other.to_string(),
    }
}

/// Runs `tasks` one after the other, applying each answer to `app` and then the tasks the
/// answers ask for, until nothing is left. The terminal runtime runs tasks concurrently;
/// this deterministic order is for tests and scripted use.
pub async fn settle(app: &mut crate::app::App, core: &Langcamp, tasks: Vec<Task>) {
    let mut queue: std::collections::VecDeque<Task> = tasks.into();
    while let Some(Task { id, job }) = queue.pop_front() {
        let outcome = execute(core, job).await;
        queue.extend(app.finish(Done { id, outcome }));
    }
}
