//! Courses (CONTRACT §5): the public catalogue and its administration.

use langcamp_core::Result;
use langcamp_core::courses::{
    Course, CourseChange, CourseFilter, CourseInput, CourseQuery, NewCourse,
};
use langcamp_core::domain::Deleted;

use crate::limits::RateRule;
use crate::reply::{Envelope, ErrorEnvelope, Reply};
use crate::request::Ctx;
use crate::router::{Access, Routes};

pub fn routes(r: &mut Routes) {
    r.add::<__path_list>(RateRule::Default, Access::Anyone, list);
    r.add::<__path_create>(RateRule::Default, Access::Admin, create);
    r.add::<__path_get>(RateRule::Default, Access::Anyone, get);
    r.add::<__path_update>(RateRule::Default, Access::Admin, update);
    r.add::<__path_delete>(RateRule::Default, Access::Admin, delete);
    r.add::<__path_duplicate>(RateRule::Default, Access::Admin, duplicate);
}

/// List courses.
///
/// Ordered by `sortOrder`, then creation time; at most 1000. The public sees published
/// courses only, admins see all. The public list is served from a cache that every change
/// clears at once on this server and, on PostgreSQL, within milliseconds on the others
/// sharing the database (a change made by the `langcamp` command on SQLite: within 5
/// seconds).
#[utoipa::path(get, path = "/courses", tag = "courses", operation_id = "listCourses",
    params(CourseQuery),
    security((), ("bearer" = [])),
    responses(
        (status = 200, description = "The courses. The public answer carries a weak `ETag` of its data, `Cache-Control: no-cache`, and is gzipped for `Accept-Encoding: gzip`; its `timestamp` is when the answer was encoded (at most a few seconds before).", body = Envelope<Vec<Course>>),
        (status = 304, description = "`If-None-Match` holds the current `ETag` (public answer only): no body"),
        (status = 400, description = "A filter is not a language code", body = ErrorEnvelope),
        (status = 401, description = "A token was sent but is not valid", body = ErrorEnvelope),
    ))]
pub async fn list(ctx: Ctx) -> Result<Reply> {
    let actor = ctx.actor().await?;
    let query = CourseQuery {
        locale: ctx.query("locale").map(str::to_owned),
        target_language: ctx.query("targetLanguage").map(str::to_owned),
    };
    let filter = CourseFilter::try_from(&query)?;
    let courses = ctx.app.list_courses(&actor, &filter).await?;
    if actor.is_admin() {
        return Ok(Reply::ok(&*courses));
    }
    crate::encoded::reply(&crate::encoded::COURSES, &courses, &ctx.parts.headers)
}

/// One course.
///
/// An unpublished course is not found (404) unless the caller is an admin.
#[utoipa::path(get, path = "/courses/{id}", tag = "courses", operation_id = "getCourse",
    params(("id" = String, Path, description = "Course id")),
    security((), ("bearer" = [])),
    responses(
        (status = 200, description = "The course", body = Envelope<Course>),
        (status = 401, description = "A token was sent but is not valid", body = ErrorEnvelope),
        (status = 404, description = "No such course, or unpublished", body = ErrorEnvelope),
    ))]
pub async fn get(ctx: Ctx) -> Result<Reply> {
    let actor = ctx.actor().await?;
    Ok(Reply::ok(&ctx.app.get_course(&actor, &ctx.id("id")).await?))
}

/// Create a course.
///
/// `title` is required; `isPublished` defaults to false, `sortOrder` to 0, the rest to null.
#[utoipa::path(post, path = "/courses", tag = "courses", operation_id = "createCourse",
    request_body = CourseInput,
    responses(
        (status = 201, description = "Created", body = Envelope<Course>),
        (status = 400, description = "Invalid fields, one message each", body = ErrorEnvelope),
        (status = 413, description = "Body too large", body = ErrorEnvelope),
    ))]
pub async fn create(mut ctx: Ctx) -> Result<Reply> {
    let actor = ctx.actor().await?;
    let new = ctx.command::<CourseInput, NewCourse>().await?;
    Ok(Reply::created(&ctx.app.create_course(&actor, new).await?))
}

/// Duplicate a course.
///
/// The copy is unpublished and titled `<title> (copy)`, the original title shortened if
/// needed so the new one stays within 200 characters.
#[utoipa::path(post, path = "/courses/{id}/duplicate", tag = "courses", operation_id = "duplicateCourse",
    params(("id" = String, Path, description = "Course id")),
    responses(
        (status = 201, description = "The copy", body = Envelope<Course>),
        (status = 404, description = "No such course", body = ErrorEnvelope),
    ))]
pub async fn duplicate(ctx: Ctx) -> Result<Reply> {
    let actor = ctx.actor().await?;
    Ok(Reply::created(
        &ctx.app.duplicate_course(&actor, &ctx.id("id")).await?,
    ))
}

/// Change a course.
///
/// Absent fields stay as they are, `null` clears an optional field; `null` for `title`,
/// `isPublished` or `sortOrder` is 400.
#[utoipa::path(patch, path = "/courses/{id}", tag = "courses", operation_id = "updateCourse",
    params(("id" = String, Path, description = "Course id")), request_body = CourseInput,
    responses(
        (status = 200, description = "The updated course", body = Envelope<Course>),
        (status = 400, description = "Invalid fields, one message each", body = ErrorEnvelope),
        (status = 404, description = "No such course", body = ErrorEnvelope),
        (status = 413, description = "Body too large", body = ErrorEnvelope),
    ))]
pub async fn update(mut ctx: Ctx) -> Result<Reply> {
    let actor = ctx.actor().await?;
    let change = ctx.command::<CourseInput, CourseChange>().await?;
    Ok(Reply::ok(
        &ctx.app.update_course(&actor, &ctx.id("id"), change).await?,
    ))
}

/// Delete a course.
#[utoipa::path(delete, path = "/courses/{id}", tag = "courses", operation_id = "deleteCourse",
    params(("id" = String, Path, description = "Course id")),
    responses(
        (status = 200, description = "Deleted", body = Envelope<Deleted>),
        (status = 404, description = "No such course", body = ErrorEnvelope),
    ))]
pub async fn delete(ctx: Ctx) -> Result<Reply> {
    let actor = ctx.actor().await?;
    Ok(Reply::ok(
        &ctx.app.delete_course(&actor, &ctx.id("id")).await?,
    ))
}
