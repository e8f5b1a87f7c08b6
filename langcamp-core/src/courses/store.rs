//! The SQL of courses: reads by id and the catalogue list, and the writes.
//!
//! The writes ([`Create`], [`Duplicate`], [`Update`]) are staff writes
//! ([`StaffWrite`]): each runs with its audit entry and the courses' change notice as one
//! piece of write work, so on SQLite it shares the group commit's transaction with the
//! writes beside it. Every query runs on any [`WriteConn`], so the pieces and the reads
//! share one copy of each.

use super::input::{CourseChange, CourseValues};
use super::{Course, CourseFilter};
use crate::audit::{Entries, Entry, Staff, StaffWrite, Target};
use crate::domain::error::{Error, Result};
use crate::domain::money::{self, Price};
use crate::domain::page::UNPAGED_CAP;
use crate::domain::time::Timestamp;
use crate::domain::validate::Problems;
use crate::domain::{Id, LanguageTag};
use crate::platform::db::{Arg, Row, WriteConn, bit, by_id};

/// The columns every query that returns courses reads, in this order.
macro_rules! course_columns {
    () => {
        "id, title, summary, description, target_language, level, locale, image_url, \
         location, start_date, end_date, price_minor, currency, capacity, is_published, \
         sort_order, created_at, updated_at"
    };
}

macro_rules! select_courses {
    ($rest:literal) => {
        concat!("SELECT ", course_columns!(), " FROM courses ", $rest)
    };
}

fn course_from_row(row: &impl Row) -> Result<Course> {
    let currency = row.opt_text("currency")?;
    Ok(Course {
        id: row.text("id")?,
        title: row.text("title")?,
        summary: row.opt_text("summary")?,
        description: row.opt_text("description")?,
        target_language: row.opt_text("target_language")?,
        level: row.opt_text("level")?,
        locale: row.opt_text("locale")?,
        image_url: row.opt_text("image_url")?,
        location: row.opt_text("location")?,
        start_date: row.opt_text("start_date")?,
        end_date: row.opt_text("end_date")?,
        price: stored_price(row.opt_int("price_minor")?, currency.as_deref())?,
        currency,
        capacity: row.opt_int("capacity")?,
        is_published: row.flag("is_published")?,
        sort_order: row.int("sort_order")?,
        created_at: Timestamp::from_millis(row.int("created_at")?),
        updated_at: Timestamp::from_millis(row.int("updated_at")?),
    })
}

/// The price of a stored row: minor units of its currency (a legacy row without a
/// currency counts in hundredths, as the migration converted it).
fn stored_price(minor: Option<i64>, currency: Option<&str>) -> Result<Option<Price>> {
    minor
        .map(|m| {
            Price::from_minor(m, currency.map_or(2, money::decimals))
                .ok_or_else(|| Error::internal(format!("course price_minor {m} is negative")))
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

/// The editable columns, `title` to `sort_order`, in the order INSERT and UPDATE list
/// them, after `first` and before `last`.
fn value_args<'a>(first: Arg<'a>, v: &'a CourseValues, last: Arg<'a>) -> Result<Vec<Arg<'a>>> {
    Ok(vec![
        first,
        Arg::Text(&v.title),
        Arg::OptText(v.summary.as_deref()),
        Arg::OptText(v.description.as_deref()),
        Arg::OptText(v.target_language.as_deref()),
        Arg::OptText(v.level.as_deref()),
        Arg::OptText(v.locale.as_deref()),
        Arg::OptText(v.image_url.as_deref()),
        Arg::OptText(v.location.as_deref()),
        Arg::OptText(v.start_date.as_deref()),
        Arg::OptText(v.end_date.as_deref()),
        Arg::OptInt(price_minor(v)?),
        Arg::OptText(v.currency.as_deref()),
        Arg::OptInt(v.capacity),
        Arg::Int(bit(v.is_published)),
        Arg::Int(v.sort_order),
        last,
    ])
}

pub(super) fn not_found() -> Error {
    Error::not_found("course")
}

pub(super) async fn find<C: WriteConn>(conn: &mut C, id: &Id<Course>) -> Result<Option<Course>> {
    let row = by_id::find(conn, select_courses!("WHERE id = $1"), id.as_str()).await?;
    row.as_ref().map(course_from_row).transpose()
}

/// The course, or 404.
async fn require<C: WriteConn>(conn: &mut C, id: &Id<Course>) -> Result<Course> {
    find(conn, id).await?.ok_or_else(not_found)
}

/// A new course with these values.
async fn insert<C: WriteConn>(conn: &mut C, v: &CourseValues, now: i64) -> Result<Course> {
    let id: Id<Course> = Id::new();
    let args = value_args(Arg::Text(id.as_str()), v, Arg::Int(now))?;
    returned(
        conn,
        concat!(
            "INSERT INTO courses (id, title, summary, description, target_language, level,
                 locale, image_url, location, start_date, end_date, price_minor, currency,
                 capacity, is_published, sort_order, created_at, updated_at)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16,
                 $17, $17)
             RETURNING ",
            course_columns!()
        ),
        &args,
    )
    .await?
    .ok_or_else(|| Error::internal("the insert returned no row"))
}

/// Writes every editable column of the course; the course as stored, or 404.
async fn update<C: WriteConn>(
    conn: &mut C,
    id: &Id<Course>,
    v: &CourseValues,
    now: i64,
) -> Result<Course> {
    let args = value_args(Arg::Int(now), v, Arg::Text(id.as_str()))?;
    returned(
        conn,
        concat!(
            "UPDATE courses SET updated_at = $1, title = $2, summary = $3, description = $4,
                 target_language = $5, level = $6, locale = $7, image_url = $8,
                 location = $9, start_date = $10, end_date = $11, price_minor = $12,
                 currency = $13, capacity = $14, is_published = $15, sort_order = $16
             WHERE id = $17
             RETURNING ",
            course_columns!()
        ),
        &args,
    )
    .await?
    .ok_or_else(not_found)
}

/// The course a statement returns (`... RETURNING` the course's columns), if any.
async fn returned<C: WriteConn>(
    conn: &mut C,
    sql: &'static str,
    args: &[Arg<'_>],
) -> Result<Option<Course>> {
    let row = conn.fetch_first(sql, args).await?;
    row.as_ref().map(course_from_row).transpose()
}

fn target(course: &Course) -> Target {
    Target::record("course", &course.id, &course.title)
}

/// `POST /courses`: the new course with these values.
pub(super) struct Create(pub CourseValues);

impl StaffWrite for Create {
    type Output = Course;

    async fn run<C: WriteConn>(self, conn: &mut C, by: &Staff) -> Result<(Course, Entries)> {
        let course = insert(conn, &self.0, by.now).await?;
        let entry = Entry::new("course.created", target(&course));
        Ok((course, entry.into()))
    }
}

/// `POST /courses/{id}/duplicate`: an unpublished copy titled `<title> (copy)`.
pub(super) struct Duplicate(pub Id<Course>);

impl StaffWrite for Duplicate {
    type Output = Course;

    async fn run<C: WriteConn>(self, conn: &mut C, by: &Staff) -> Result<(Course, Entries)> {
        let original = require(conn, &self.0).await?;
        let mut values = CourseValues::from(&original);
        values.title = super::copy_title(&original.title);
        values.is_published = false;
        let copy = insert(conn, &values, by.now).await?;
        let entry = Entry::new("course.duplicated", target(&copy));
        Ok((copy, entry.into()))
    }
}

/// `PATCH /courses/{id}`: the change is checked against the stored course (an unknown
/// course is 404), so the rules that span fields see the values the course will have.
pub(super) struct Update(pub Id<Course>, pub CourseChange);

impl StaffWrite for Update {
    type Output = Course;

    async fn run<C: WriteConn>(self, conn: &mut C, by: &Staff) -> Result<(Course, Entries)> {
        let Update(id, change) = self;
        let course = require(conn, &id).await?;
        let mut values = CourseValues::from(&course);
        let mut problems = Problems::new();
        change.apply(&mut values, &mut problems);
        problems.finish()?;
        let updated = update(conn, &id, &values, by.now).await?;
        let entry = Entry::new("course.updated", target(&updated)).with_changes(&course, &updated);
        Ok((updated, entry.into()))
    }
}

/// The catalogue: by `sortOrder`, then creation time, at most [`UNPAGED_CAP`].
pub(super) async fn list<C: WriteConn>(
    conn: &mut C,
    published_only: bool,
    filter: &CourseFilter,
) -> Result<Vec<Course>> {
    let rows = conn
        .fetch_all(
            select_courses!(
                "WHERE ($1 IS NULL OR is_published = $1)
                   AND ($2 IS NULL OR locale = $2)
                   AND ($3 IS NULL OR target_language = $3)
                 ORDER BY sort_order, created_at, id LIMIT $4"
            ),
            &[
                Arg::OptInt(published_only.then_some(bit(true))),
                Arg::OptText(filter.locale.as_ref().map(LanguageTag::as_str)),
                Arg::OptText(filter.target_language.as_ref().map(LanguageTag::as_str)),
                Arg::Int(UNPAGED_CAP),
            ],
        )
        .await?;
    rows.iter().map(course_from_row).collect()
}
