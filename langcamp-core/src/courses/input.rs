//! What clients send about courses (the wire inputs, with their OpenAPI schemas), the
//! list filter they become, and the validated commands the operations take. A body
//! becomes its command with `TryFrom`, which records one message per problem and fails
//! once with all of them.
//!
//! A new course is checked whole in `TryFrom` (the rules that span fields, such as a price
//! and its currency, see the defaults). A change is checked field by field there, and
//! against the course it changes when the operation applies it (the rules that span fields
//! see the stored values).

use serde::Deserialize;
use utoipa::{IntoParams, ToSchema};

use super::{COPY_SUFFIX, Course, DESCRIPTION_MAX, LOCATION_MAX, SUMMARY_MAX, TITLE_MAX};
use crate::domain::error::{Error, Result};
use crate::domain::money::{self, Price, PriceError, PriceText};
use crate::domain::validate::{self, Field, Patch, Problems};
use crate::domain::{CefrLevel, LanguageFilter};

/// The body of `POST /courses` and `PATCH /courses/{id}`.
///
/// Create: `title` is required; absent fields get their defaults (`isPublished` false,
/// `sortOrder` 0, the rest null). Update: absent fields stay as they are, `null` clears an
/// optional field; `null` for `title`, `isPublished` or `sortOrder` is refused. An empty
/// string clears an optional text field like `null`.
#[derive(Clone, Debug, Default, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct CourseInput {
    /// 1 to 200 characters.
    #[serde(default)]
    #[schema(value_type = String, min_length = 1, max_length = 200, pattern = r"^[^\x00-\x1f\x7f\u202a-\u202e\u2066-\u2069]*[^\s\x00-\x1f\x7f\u202a-\u202e\u2066-\u2069][^\x00-\x1f\x7f\u202a-\u202e\u2066-\u2069]*$", example = "German for beginners")]
    pub title: Patch<String>,
    /// Up to 1000 characters.
    #[serde(default)]
    #[schema(value_type = Option<String>)]
    pub summary: Patch<String>,
    /// Up to 20000 characters.
    #[serde(default)]
    #[schema(value_type = Option<String>)]
    pub description: Patch<String>,
    /// A language code such as `de` or `pt-BR`.
    #[serde(default)]
    #[schema(value_type = Option<String>, example = "de")]
    pub target_language: Patch<String>,
    /// `A1`..`C2` (lower-case is accepted and upper-cased).
    #[serde(default)]
    #[schema(value_type = Option<String>, example = "A1")]
    pub level: Patch<String>,
    /// A language code.
    #[serde(default)]
    #[schema(value_type = Option<String>, example = "en")]
    pub locale: Patch<String>,
    /// An `http://` or `https://` address.
    #[serde(default)]
    #[schema(value_type = Option<String>, example = "https://cdn.example.com/course.jpg")]
    pub image_url: Patch<String>,
    /// Up to 200 characters.
    #[serde(default)]
    #[schema(value_type = Option<String>, example = "Berlin")]
    pub location: Patch<String>,
    /// `YYYY-MM-DD`.
    #[serde(default)]
    #[schema(value_type = Option<String>, example = "2026-09-01")]
    pub start_date: Patch<String>,
    /// `YYYY-MM-DD`, not before `startDate`.
    #[serde(default)]
    #[schema(value_type = Option<String>, example = "2026-12-18")]
    pub end_date: Patch<String>,
    /// A number of at least 0 and at most 100000000000; needs `currency`, and has no more
    /// decimal places than its minor unit (EUR and USD 2, JPY 0, KWD 3).
    #[serde(default)]
    #[schema(value_type = Option<f64>, example = 490.5)]
    pub price: Patch<PriceText>,
    /// ISO 4217, three letters (upper-cased).
    #[serde(default)]
    #[schema(value_type = Option<String>, example = "EUR")]
    pub currency: Patch<String>,
    /// A whole number of at least 0.
    #[serde(default)]
    #[schema(value_type = Option<i64>, example = 12)]
    pub capacity: Patch<i64>,
    /// Default false.
    #[serde(default)]
    #[schema(value_type = bool)]
    pub is_published: Patch<bool>,
    /// Default 0.
    #[serde(default)]
    #[schema(value_type = i64)]
    pub sort_order: Patch<i64>,
}

/// The query of `GET /courses`.
#[derive(Clone, Debug, Default, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(rename_all = "camelCase")]
pub struct CourseQuery {
    /// Only courses in this locale (a language code); empty means no filter.
    #[param(pattern = r"^$|^[A-Za-z]{2,3}(-[A-Za-z0-9]{1,8})*$", max_length = 35)]
    pub locale: Option<String>,
    /// Only courses teaching this language (a language code); empty means no filter.
    #[param(pattern = r"^$|^[A-Za-z]{2,3}(-[A-Za-z0-9]{1,8})*$", max_length = 35)]
    pub target_language: Option<String>,
}

/// A validated [`CourseQuery`]; the key of the public list cache.
pub type CourseFilter = LanguageFilter;

impl TryFrom<&CourseQuery> for CourseFilter {
    type Error = Error;

    fn try_from(query: &CourseQuery) -> Result<CourseFilter> {
        LanguageFilter::parse(query.locale.as_deref(), query.target_language.as_deref())
    }
}

/// A field that may be cleared: `null` or an empty string clears it.
fn optional<T>(
    problems: &mut Problems,
    value: Patch<T>,
    parse: impl FnOnce(T) -> std::result::Result<Option<String>, String>,
) -> Field<Option<String>> {
    match value {
        Patch::Absent => Field::Keep,
        Patch::Null => Field::Set(None),
        Patch::Value(v) => problems.take(parse(v)).map_or(Field::Invalid, Field::Set),
    }
}

/// A field that may be cleared with `null`, with a parse of its value.
fn nullable<T, U>(
    problems: &mut Problems,
    value: Patch<T>,
    parse: impl FnOnce(T) -> std::result::Result<U, String>,
) -> Field<Option<U>> {
    match value {
        Patch::Absent => Field::Keep,
        Patch::Null => Field::Set(None),
        Patch::Value(v) => problems
            .take(parse(v))
            .map_or(Field::Invalid, |u| Field::Set(Some(u))),
    }
}

/// A field that is required or has a default: `null` is refused.
fn required<T, U>(
    problems: &mut Problems,
    field: &str,
    value: Patch<T>,
    parse: impl FnOnce(T) -> std::result::Result<U, String>,
) -> Field<U> {
    match value {
        Patch::Absent => Field::Keep,
        Patch::Null => {
            problems.add(format!("{field} cannot be null"));
            Field::Invalid
        }
        Patch::Value(v) => problems.take(parse(v)).map_or(Field::Invalid, Field::Set),
    }
}

/// Single-line text: trimmed, empty is `None`.
fn text(field: &'static str, max: usize) -> impl FnOnce(String) -> Result<Option<String>, String> {
    move |v| validate::optional_text(field, Some(&v), max)
}

/// Multi-line text (line feeds and tabs allowed): trimmed, empty is `None`.
fn multiline(
    field: &'static str,
    max: usize,
) -> impl FnOnce(String) -> Result<Option<String>, String> {
    move |v| validate::optional_multiline_text(field, Some(&v), max)
}

/// Applies an optional-text parse `then` to a non-empty trimmed value.
fn non_empty(
    raw: &str,
    then: impl FnOnce(&str) -> std::result::Result<String, String>,
) -> std::result::Result<Option<String>, String> {
    match raw.trim() {
        "" => Ok(None),
        v => then(v).map(Some),
    }
}

fn check_level(raw: &str) -> std::result::Result<String, String> {
    CefrLevel::parse("level", raw)
        .map(|level| level.as_str().to_owned())
        .map_err(|message| format!("{message} or null"))
}

fn check_currency(raw: &str) -> std::result::Result<String, String> {
    let code = raw.trim();
    if code.len() == 3 && code.chars().all(|c| c.is_ascii_alphabetic()) {
        Ok(code.to_ascii_uppercase())
    } else {
        Err("currency must be a three-letter ISO 4217 code such as EUR".into())
    }
}

/// A calendar date written `YYYY-MM-DD`.
fn check_date(field: &str, raw: &str) -> std::result::Result<String, String> {
    let date = raw.trim();
    let shaped = date.len() == 10
        && date.char_indices().all(|(i, c)| match i {
            4 | 7 => c == '-',
            _ => c.is_ascii_digit(),
        });
    if shaped && chrono::NaiveDate::parse_from_str(date, "%Y-%m-%d").is_ok() {
        Ok(date.to_owned())
    } else {
        Err(format!("{field} must be a date written YYYY-MM-DD"))
    }
}

fn check_capacity(capacity: i64) -> std::result::Result<i64, String> {
    if capacity >= 0 {
        Ok(capacity)
    } else {
        Err("capacity must be a whole number of at least 0".into())
    }
}

/// The editable columns of a course.
#[derive(Clone, Debug, Default, PartialEq)]
pub(super) struct CourseValues {
    pub(super) title: String,
    pub(super) summary: Option<String>,
    pub(super) description: Option<String>,
    pub(super) target_language: Option<String>,
    pub(super) level: Option<String>,
    pub(super) locale: Option<String>,
    pub(super) image_url: Option<String>,
    pub(super) location: Option<String>,
    pub(super) start_date: Option<String>,
    pub(super) end_date: Option<String>,
    pub(super) price: Option<Price>,
    pub(super) currency: Option<String>,
    pub(super) capacity: Option<i64>,
    pub(super) is_published: bool,
    pub(super) sort_order: i64,
}

impl From<&Course> for CourseValues {
    fn from(c: &Course) -> CourseValues {
        CourseValues {
            title: c.title.clone(),
            summary: c.summary.clone(),
            description: c.description.clone(),
            target_language: c.target_language.clone(),
            level: c.level.clone(),
            locale: c.locale.clone(),
            image_url: c.image_url.clone(),
            location: c.location.clone(),
            start_date: c.start_date.clone(),
            end_date: c.end_date.clone(),
            price: c.price,
            currency: c.currency.clone(),
            capacity: c.capacity,
            is_published: c.is_published,
            sort_order: c.sort_order,
        }
    }
}

/// A parsed course body: each field kept, set or refused.
#[derive(Clone, Debug, Default, PartialEq)]
struct ParsedCourse {
    title: Field<String>,
    summary: Field<Option<String>>,
    description: Field<Option<String>>,
    target_language: Field<Option<String>>,
    level: Field<Option<String>>,
    locale: Field<Option<String>>,
    image_url: Field<Option<String>>,
    location: Field<Option<String>>,
    start_date: Field<Option<String>>,
    end_date: Field<Option<String>>,
    price: Field<Option<Price>>,
    /// The price had more decimal places than any currency; said once the currency is known.
    price_too_precise: bool,
    currency: Field<Option<String>>,
    capacity: Field<Option<i64>>,
    is_published: Field<bool>,
    sort_order: Field<i64>,
}

impl CourseInput {
    fn parse(self, problems: &mut Problems) -> ParsedCourse {
        let p = problems;
        let mut price_too_precise = false;
        ParsedCourse {
            title: required(p, "title", self.title, |v: String| {
                validate::bounded("title", &v, 1, TITLE_MAX)
            }),
            summary: optional(p, self.summary, multiline("summary", SUMMARY_MAX)),
            description: optional(
                p,
                self.description,
                multiline("description", DESCRIPTION_MAX),
            ),
            target_language: optional(p, self.target_language, |v: String| {
                non_empty(&v, |t| validate::language_tag("targetLanguage", t))
            }),
            level: optional(p, self.level, |v: String| non_empty(&v, check_level)),
            locale: optional(p, self.locale, |v: String| {
                non_empty(&v, |t| validate::language_tag("locale", t))
            }),
            image_url: optional(p, self.image_url, |v: String| {
                non_empty(&v, |u| validate::http_url("imageUrl", u))
            }),
            location: optional(p, self.location, text("location", LOCATION_MAX)),
            start_date: optional(p, self.start_date, |v: String| {
                non_empty(&v, |d| check_date("startDate", d))
            }),
            end_date: optional(p, self.end_date, |v: String| {
                non_empty(&v, |d| check_date("endDate", d))
            }),
            price: match self.price {
                Patch::Absent => Field::Keep,
                Patch::Null => Field::Set(None),
                Patch::Value(text) => match Price::parse(text.as_str()) {
                    Ok(price) => Field::Set(Some(price)),
                    Err(PriceError::TooManyDecimals) => {
                        price_too_precise = true;
                        Field::Invalid
                    }
                    Err(e) => {
                        p.add(e.message());
                        Field::Invalid
                    }
                },
            },
            price_too_precise,
            currency: optional(p, self.currency, |v: String| non_empty(&v, check_currency)),
            capacity: nullable(p, self.capacity, check_capacity),
            is_published: required(p, "isPublished", self.is_published, Ok),
            sort_order: required(p, "sortOrder", self.sort_order, Ok),
        }
    }
}

impl ParsedCourse {
    /// Applies the change to `values` and checks the rules that span fields.
    fn apply(self, values: &mut CourseValues, problems: &mut Problems) {
        self.title.apply(&mut values.title);
        self.summary.apply(&mut values.summary);
        self.description.apply(&mut values.description);
        self.target_language.apply(&mut values.target_language);
        self.level.apply(&mut values.level);
        self.locale.apply(&mut values.locale);
        self.image_url.apply(&mut values.image_url);
        self.location.apply(&mut values.location);
        let start_ok = self.start_date.apply(&mut values.start_date);
        let end_ok = self.end_date.apply(&mut values.end_date);
        let price_ok = self.price.apply(&mut values.price);
        let currency_ok = self.currency.apply(&mut values.currency);
        self.capacity.apply(&mut values.capacity);
        self.is_published.apply(&mut values.is_published);
        self.sort_order.apply(&mut values.sort_order);

        if start_ok
            && end_ok
            && let (Some(start), Some(end)) = (&values.start_date, &values.end_date)
            && end < start
        {
            problems.add("endDate must not be before startDate");
        }
        if self.price_too_precise {
            problems.add(match (currency_ok, &values.currency) {
                (true, Some(code)) => too_many_decimals(code),
                _ => PriceError::TooManyDecimals.message(),
            });
        }
        if price_ok && currency_ok && values.price.is_some() && values.currency.is_none() {
            problems.add("currency is required when price is set");
        }
        // Checked against the resulting pair, so a new currency is checked against the
        // stored price too (10.5 EUR cannot become 10.5 JPY).
        if price_ok
            && currency_ok
            && let (Some(price), Some(code)) = (values.price, &values.currency)
            && price.to_minor(money::decimals(code)).is_none()
        {
            problems.add(too_many_decimals(code));
        }
    }
}

/// A validated new course: every field checked, and the rules that span fields checked
/// against the defaults of the fields it leaves out.
#[derive(Clone, Debug, PartialEq)]
pub struct NewCourse(CourseValues);

impl NewCourse {
    /// The columns of the new course.
    pub(super) fn into_values(self) -> CourseValues {
        self.0
    }
}

impl TryFrom<CourseInput> for NewCourse {
    type Error = Error;

    fn try_from(input: CourseInput) -> Result<NewCourse> {
        let mut problems = Problems::new();
        if input.title.is_absent() {
            problems.add("title is required");
        }
        let parsed = input.parse(&mut problems);
        let mut values = CourseValues::default();
        parsed.apply(&mut values, &mut problems);
        problems.finish()?;
        Ok(NewCourse(values))
    }
}

/// A validated change to a course: each field kept or set to a checked value. The rules
/// that span fields are checked when the operation applies it, against the stored course.
#[derive(Clone, Debug, PartialEq)]
pub struct CourseChange(ParsedCourse);

impl CourseChange {
    /// Publishes or withdraws a course, and changes nothing else (the console's toggle).
    pub fn publish(published: bool) -> CourseChange {
        CourseChange(ParsedCourse {
            is_published: Field::Set(published),
            ..ParsedCourse::default()
        })
    }

    /// Applies the change to `values` (the stored course's) and records a message for
    /// each rule that spans fields and is broken by the result.
    pub(super) fn apply(self, values: &mut CourseValues, problems: &mut Problems) {
        self.0.apply(values, problems);
    }
}

impl TryFrom<CourseInput> for CourseChange {
    type Error = Error;

    fn try_from(input: CourseInput) -> Result<CourseChange> {
        let mut problems = Problems::new();
        let mut parsed = input.parse(&mut problems);
        // A price too precise for every currency is said with the currency the course
        // will have: when the body sets one (or refuses one), that is known now.
        if parsed.price_too_precise && parsed.currency != Field::Keep {
            problems.add(match &parsed.currency {
                Field::Set(Some(code)) => too_many_decimals(code),
                _ => PriceError::TooManyDecimals.message(),
            });
            parsed.price_too_precise = false;
        }
        problems.finish()?;
        Ok(CourseChange(parsed))
    }
}

fn too_many_decimals(currency: &str) -> String {
    match money::decimals(currency) {
        0 => format!("price must be a whole number in {currency}"),
        1 => format!("price must have at most 1 decimal place in {currency}"),
        n => format!("price must have at most {n} decimal places in {currency}"),
    }
}

/// `<title> (copy)`, the title shortened so the whole stays within [`TITLE_MAX`] characters.
pub fn copy_title(title: &str) -> String {
    let room = TITLE_MAX - COPY_SUFFIX.chars().count();
    let kept: String = title.chars().take(room).collect();
    format!("{}{COPY_SUFFIX}", kept.trim_end())
}

#[cfg(test)]
mod tests;
