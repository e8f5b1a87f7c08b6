//! The SQL of courses: reads by id and the catalogue list, inserts, updates and deletes.

use sqlx::any::AnyRow;
use sqlx::{AnyConnection, Row};

use super::input::CourseValues;
use super::{Course, CourseFilter};
use crate::domain::error::{Error, Result};
use crate::domain::money::{self, Price};
use crate::domain::page::UNPAGED_CAP;
use crate::domain::time::Timestamp;
use crate::domain::{Id, LanguageTag};
use crate::platform::db::by_id;
use crate::platform::db::listing::Bound;
use crate::platform::db::{bit, flag};

/// Every query that returns courses selects these columns, in this order.
macro_rules! select_courses {
    ($rest:literal) => {
        concat!(
            "SELECT id, title, summary, description, target_language, level, locale, image_url, \
             location, start_date, end_date, price_minor, currency, capacity, is_published, \
             sort_order, created_at, updated_at FROM courses ",
            $rest
        )
    };
}

fn course_from_row(row: &AnyRow) -> std::result::Result<Course, sqlx::Error> {
    let currency: Option<String> = row.try_get("currency")?;
    Ok(Course {
        id: row.try_get("id")?,
        title: row.try_get("title")?,
        summary: row.try_get("summary")?,
        description: row.try_get("description")?,
        target_language: row.try_get("target_language")?,
        level: row.try_get("level")?,
        locale: row.try_get("locale")?,
        image_url: row.try_get("image_url")?,
        location: row.try_get("location")?,
        start_date: row.try_get("start_date")?,
        end_date: row.try_get("end_date")?,
        price: stored_price(row.try_get("price_minor")?, currency.as_deref())?,
        currency,
        capacity: row.try_get("capacity")?,
        is_published: flag(row.try_get("is_published")?),
        sort_order: row.try_get("sort_order")?,
        created_at: Timestamp::from_millis(row.try_get("created_at")?),
        updated_at: Timestamp::from_millis(row.try_get("updated_at")?),
    })
}

/// The price of a stored row: minor units of its currency (a legacy row without a
/// currency counts in hundredths, as the migration converted it).
fn stored_price(
    minor: Option<i64>,
    currency: Option<&str>,
) -> std::result::Result<Option<Price>, sqlx::Error> {
    minor
        .map(|m| {
            Price::from_minor(m, currency.map_or(2, money::decimals)).ok_or_else(|| {
                sqlx::Error::Decode(format!("course price_minor {m} is negative").into())
            })
        })
        .transpose()
}

/// The price to store: minor units of the currency (checked by [`CourseChange::apply`]).
fn price_minor(v: &CourseValues) -> Result<Option<i64>> {
    v.price
        .map(|p| {
            let decimals = v.currency.as_deref().map_or(2, money::decimals);
            p.to_minor(decimals)
                .ok_or_else(|| Error::internal("a checked price does not fit its currency"))
        })
        .transpose()
}

/// Binds the editable columns, `title` to `sort_order`, in the order INSERT and UPDATE
/// list them.
fn bind_values<'q>(query: Bound<'q>, v: &'q CourseValues) -> Result<Bound<'q>> {
    let price = price_minor(v)?;
    Ok(query
        .bind(&v.title)
        .bind(v.summary.as_deref())
        .bind(v.description.as_deref())
        .bind(v.target_language.as_deref())
        .bind(v.level.as_deref())
        .bind(v.locale.as_deref())
        .bind(v.image_url.as_deref())
        .bind(v.location.as_deref())
        .bind(v.start_date.as_deref())
        .bind(v.end_date.as_deref())
        .bind(price)
        .bind(v.currency.as_deref())
        .bind(v.capacity)
        .bind(bit(v.is_published))
        .bind(v.sort_order))
}

pub(super) fn not_found() -> Error {
    Error::not_found("course")
}

pub(super) async fn find(conn: &mut AnyConnection, id: &Id<Course>) -> Result<Option<Course>> {
    let row = by_id::find(conn, select_courses!("WHERE id = $1"), id.as_str()).await?;
    Ok(row.as_ref().map(course_from_row).transpose()?)
}

/// The course, or 404.
pub(super) async fn require(conn: &mut AnyConnection, id: &Id<Course>) -> Result<Course> {
    find(conn, id).await?.ok_or_else(not_found)
}

/// A new course with these values.
pub(super) async fn insert(conn: &mut AnyConnection, v: &CourseValues, now: i64) -> Result<Course> {
    let id: Id<Course> = Id::new();
    let query = sqlx::query(
        "INSERT INTO courses (id, title, summary, description, target_language, level, locale,
                image_url, location, start_date, end_date, price_minor, currency, capacity,
                is_published, sort_order, created_at, updated_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $17)",
    )
    .bind(id.as_str());
    bind_values(query, v)?.bind(now).execute(&mut *conn).await?;
    require(conn, &id).await
}

/// Writes every editable column of the course.
pub(super) async fn update(
    conn: &mut AnyConnection,
    id: &Id<Course>,
    v: &CourseValues,
    now: i64,
) -> Result<()> {
    let query = sqlx::query(
        "UPDATE courses SET title = $1, summary = $2, description = $3, target_language = $4,
                level = $5, locale = $6, image_url = $7, location = $8, start_date = $9,
                end_date = $10, price_minor = $11, currency = $12, capacity = $13, is_published = $14,
                sort_order = $15, updated_at = $16
         WHERE id = $17",
    );
    bind_values(query, v)?
        .bind(now)
        .bind(id.as_str())
        .execute(conn)
        .await?;
    Ok(())
}

/// The catalogue: by `sortOrder`, then creation time, at most [`UNPAGED_CAP`].
pub(super) async fn list(
    conn: &mut AnyConnection,
    published_only: bool,
    filter: &CourseFilter,
) -> Result<Vec<Course>> {
    let published = published_only.then_some(bit(true));
    let rows = sqlx::query(select_courses!(
        "WHERE ($1 IS NULL OR is_published = $1)
           AND ($2 IS NULL OR locale = $2)
           AND ($3 IS NULL OR target_language = $3)
         ORDER BY sort_order, created_at, id LIMIT $4"
    ))
    .bind(published)
    .bind(filter.locale.as_ref().map(LanguageTag::as_str))
    .bind(filter.target_language.as_ref().map(LanguageTag::as_str))
    .bind(UNPAGED_CAP)
    .fetch_all(conn)
    .await?;
    Ok(rows
        .iter()
        .map(course_from_row)
        .collect::<std::result::Result<_, _>>()?)
}
