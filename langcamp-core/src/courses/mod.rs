//! Courses (CONTRACT §5): the public catalogue and its administration.
//!
//! The public list of published courses is served from [`crate::platform::cache`]; every write here
//! invalidates it after its transaction commits, so a change is visible on the next read.
//!
//! Here: the operations and what they answer; [`input`] holds what clients send and the
//! parse of a course body, `store` the SQL.

mod input;
mod store;

use std::sync::Arc;

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

pub use self::input::{
    CourseChange, CourseFilter, CourseInput, CourseQuery, NewCourse, copy_title,
};
use crate::Langcamp;
use crate::domain::Deleted;
use crate::domain::Id;
use crate::domain::actor::{Actor, Role};
use crate::domain::error::Result;
use crate::domain::money::Price;
use crate::domain::time::Timestamp;
use crate::platform::changes::Change;

/// The longest title; a duplicate's title is shortened to stay within it.
pub const TITLE_MAX: usize = 200;
pub const SUMMARY_MAX: usize = 1000;
pub const DESCRIPTION_MAX: usize = 20_000;
pub const LOCATION_MAX: usize = 200;
const COPY_SUFFIX: &str = " (copy)";

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Course {
    pub id: String,
    #[schema(example = "German for beginners")]
    pub title: String,
    pub summary: Option<String>,
    pub description: Option<String>,
    /// The language taught (a language code).
    #[schema(example = "de")]
    pub target_language: Option<String>,
    /// CEFR level: `A1`, `A2`, `B1`, `B2`, `C1` or `C2`.
    #[schema(example = "A1")]
    pub level: Option<String>,
    /// The language the course is described and held in (a language code).
    #[schema(example = "en")]
    pub locale: Option<String>,
    pub image_url: Option<String>,
    pub location: Option<String>,
    /// `YYYY-MM-DD`.
    #[schema(example = "2026-09-01")]
    pub start_date: Option<String>,
    /// `YYYY-MM-DD`, not before `startDate`.
    #[schema(example = "2026-12-18")]
    pub end_date: Option<String>,
    /// In `currency`, exact: at least 0, with no more decimal places than the currency's
    /// minor unit (EUR 2, JPY 0, KWD 3). Stored as integer minor units, never as a float.
    #[schema(value_type = Option<f64>, example = 490.5)]
    pub price: Option<Price>,
    /// ISO 4217 code, upper-case.
    #[schema(example = "EUR")]
    pub currency: Option<String>,
    /// Seats; at least 0.
    pub capacity: Option<i64>,
    pub is_published: bool,
    /// Lists are ordered by this, then by creation time.
    pub sort_order: i64,
    pub created_at: Timestamp,
    pub updated_at: Timestamp,
}

impl Course {
    /// The course's id, typed.
    pub fn typed_id(&self) -> Id<Course> {
        Id::from(&self.id)
    }
}

impl Langcamp {
    /// `GET /courses`: published courses (every course for admins), by `sortOrder` then
    /// creation time, at most [`crate::domain::page::UNPAGED_CAP`]. The public list comes from the
    /// cache.
    #[tracing::instrument(level = "debug", skip_all)]
    pub async fn list_courses(
        &self,
        actor: &Actor,
        filter: &CourseFilter,
    ) -> Result<Arc<Vec<Course>>> {
        if actor.is_admin() {
            let mut conn = self.db().reader().acquire().await?;
            return Ok(Arc::new(store::list(&mut *conn, false, filter).await?));
        }
        let now = self.clock().now_ms();
        self.caches()
            .courses
            .get_or_load(filter.clone(), now, || async {
                let mut conn = self.db().reader().acquire().await?;
                Ok(Arc::new(store::list(&mut *conn, true, filter).await?))
            })
            .await
    }

    /// `GET /courses/{id}`: an unpublished course is not found unless the caller is an admin.
    #[tracing::instrument(level = "debug", skip_all)]
    pub async fn get_course(&self, actor: &Actor, id: &Id<Course>) -> Result<Course> {
        let mut conn = self.db().reader().acquire().await?;
        match store::find(&mut *conn, id).await? {
            Some(course) if course.is_published || actor.is_admin() => Ok(course),
            _ => Err(store::not_found()),
        }
    }

    /// `POST /courses`.
    #[tracing::instrument(level = "debug", skip_all)]
    pub async fn create_course(&self, actor: &Actor, new: NewCourse) -> Result<Course> {
        actor.require(Role::Admin)?;
        let create = store::Create(new.into_values());
        self.staff_write(actor, create, Some(Change::Courses)).await
    }

    /// `POST /courses/{id}/duplicate`: an unpublished copy titled `<title> (copy)`.
    #[tracing::instrument(level = "debug", skip_all)]
    pub async fn duplicate_course(&self, actor: &Actor, id: &Id<Course>) -> Result<Course> {
        actor.require(Role::Admin)?;
        if !id.is_well_formed() {
            return Err(store::not_found());
        }
        let duplicate = store::Duplicate(id.clone());
        self.staff_write(actor, duplicate, Some(Change::Courses))
            .await
    }

    /// `PATCH /courses/{id}`. The change is checked against the stored course (an unknown
    /// course is 404), so the rules that span fields see the values the course will have.
    #[tracing::instrument(level = "debug", skip_all)]
    pub async fn update_course(
        &self,
        actor: &Actor,
        id: &Id<Course>,
        change: CourseChange,
    ) -> Result<Course> {
        actor.require(Role::Admin)?;
        if !id.is_well_formed() {
            return Err(store::not_found());
        }
        let update = store::Update(id.clone(), change);
        self.staff_write(actor, update, Some(Change::Courses)).await
    }

    /// `DELETE /courses/{id}`.
    #[tracing::instrument(level = "debug", skip_all)]
    pub async fn delete_course(&self, actor: &Actor, id: &Id<Course>) -> Result<Deleted> {
        actor.require(Role::Admin)?;
        let delete = "DELETE FROM courses WHERE id = $1 RETURNING title AS label";
        let audit = ("course.deleted", "course");
        let change = Some(Change::Courses);
        self.delete_by_id(actor, audit, id.as_str(), delete, store::not_found, change)
            .await
    }
}
