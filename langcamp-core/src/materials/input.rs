//! What clients send about materials (the wire inputs, with their OpenAPI schemas) and the
//! validated commands the operations take. A wire input becomes its command with
//! `TryFrom`, which records one message per problem and fails once with all of them; the
//! console and the CLI build the commands from typed values directly.

use std::collections::HashSet;

use serde::Deserialize;
use utoipa::ToSchema;

use super::{MAX_ASSIGN, MAX_VIDEOS, MaterialPdf, MaterialVideo};
use crate::domain::error::{Error, Result};
use crate::domain::validate::{Patch, Problems, passed, required};
use crate::domain::{CefrLevel, HttpUrl, Id, LanguageTag, LongText, Text};
use crate::users::User;

/// A material's title: one line of 1 to 200 characters.
pub type Title = Text<200>;
/// A material's description: up to 5000 characters, lines allowed.
pub type Description = LongText<5000>;
/// A video's title: one line of up to 200 characters.
pub type VideoTitle = Text<200>;

/// A video in a create or update body.
#[derive(Clone, Debug, Default, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct VideoInput {
    /// On update only: the id of one of the material's videos, to keep that id.
    pub id: Option<String>,
    /// Up to 200 characters; optional.
    #[schema(
        max_length = 200,
        pattern = r"^[^\x00-\x1f\x7f\u202a-\u202e\u2066-\u2069]*$",
        example = "Greetings"
    )]
    pub title: Option<String>,
    /// An `http://` or `https://` address.
    #[schema(example = "https://video.example.com/greetings")]
    pub url: Option<String>,
}

/// The fields of a new material (JSON, or the text fields of the multipart form).
#[derive(Clone, Debug, Default, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct MaterialInput {
    /// 1 to 200 characters.
    #[schema(
        min_length = 1,
        max_length = 200,
        pattern = r"^[^\x00-\x1f\x7f\u202a-\u202e\u2066-\u2069]*[^\s\x00-\x1f\x7f\u202a-\u202e\u2066-\u2069][^\x00-\x1f\x7f\u202a-\u202e\u2066-\u2069]*$",
        example = "Everyday German, unit 1"
    )]
    pub title: Option<String>,
    /// Up to 5000 characters.
    #[schema(
        max_length = 5000,
        pattern = r"^[^\x00-\x08\x0b-\x1f\x7f\u202a-\u202e\u2066-\u2069]*$"
    )]
    pub description: Option<String>,
    /// Language of the material's texts (BCP 47).
    #[schema(example = "en")]
    pub locale: Option<String>,
    /// The language taught (BCP 47).
    #[schema(example = "de")]
    pub target_language: Option<String>,
    /// `A1` to `C2`.
    #[schema(example = "A1")]
    pub level: Option<String>,
    /// Up to 50 videos.
    pub videos: Option<Vec<VideoInput>>,
}

/// A change to a material: an absent field stays, `null` clears an optional one.
/// `videos` replaces the list; `removePdfIds` removes PDFs (new ones come as file parts).
#[derive(Clone, Debug, Default, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct MaterialUpdate {
    #[serde(default)]
    #[schema(value_type = String, min_length = 1, max_length = 200, pattern = r"^[^\x00-\x1f\x7f\u202a-\u202e\u2066-\u2069]*[^\s\x00-\x1f\x7f\u202a-\u202e\u2066-\u2069][^\x00-\x1f\x7f\u202a-\u202e\u2066-\u2069]*$")]
    pub title: Patch<String>,
    #[serde(default)]
    #[schema(value_type = Option<String>, max_length = 5000, pattern = r"^[^\x00-\x08\x0b-\x1f\x7f\u202a-\u202e\u2066-\u2069]*$")]
    pub description: Patch<String>,
    #[serde(default)]
    #[schema(value_type = Option<String>)]
    pub locale: Patch<String>,
    #[serde(default)]
    #[schema(value_type = Option<String>)]
    pub target_language: Patch<String>,
    #[serde(default)]
    #[schema(value_type = Option<String>)]
    pub level: Patch<String>,
    /// The new list of videos (replaces the old one; `[]` removes all).
    #[serde(default)]
    #[schema(value_type = Option<Vec<VideoInput>>)]
    pub videos: Patch<Vec<VideoInput>>,
    /// Ids of PDFs of this material to remove.
    #[serde(default)]
    #[schema(value_type = Option<Vec<String>>)]
    pub remove_pdf_ids: Patch<Vec<String>>,
}

#[derive(Clone, Debug, Default, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct AssignInput {
    /// 1 to 1000 user ids.
    #[schema(value_type = Vec<String>, min_items = 1, max_items = 1000)]
    pub user_ids: Option<Vec<String>>,
}

/// A video of a validated command. On update, `id` keeps the id of one of the material's
/// videos (checked against the material when the change is applied).
#[derive(Clone, Debug, PartialEq)]
pub struct Video {
    pub id: Option<Id<MaterialVideo>>,
    pub title: Option<VideoTitle>,
    pub url: HttpUrl,
}

/// A validated new material. PDFs come beside it, as staged files.
#[derive(Clone, Debug, PartialEq)]
pub struct NewMaterial {
    pub title: Title,
    pub description: Option<Description>,
    pub locale: Option<LanguageTag>,
    pub target_language: Option<LanguageTag>,
    pub level: Option<CefrLevel>,
    /// New videos (no ids), at most [`MAX_VIDEOS`].
    pub videos: Vec<Video>,
}

/// A validated change: `None` leaves a field as it is, `Some(None)` clears it.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct MaterialChange {
    pub title: Option<Title>,
    pub description: Option<Option<Description>>,
    pub locale: Option<Option<LanguageTag>>,
    pub target_language: Option<Option<LanguageTag>>,
    pub level: Option<Option<CefrLevel>>,
    /// The new list of videos, replacing the old one.
    pub videos: Option<Vec<Video>>,
    /// PDFs of this material to remove (with their files).
    pub remove_pdf_ids: Vec<Id<MaterialPdf>>,
}

/// The users a material is assigned to: 1 to [`MAX_ASSIGN`] ids, each once.
#[derive(Clone, Debug, PartialEq)]
pub struct Assignment {
    user_ids: Vec<Id<User>>,
}

impl Assignment {
    /// Trims the ids and drops repeats (keeping the first); refuses none or too many.
    pub fn new(user_ids: Vec<Id<User>>) -> Result<Assignment> {
        if user_ids.is_empty() {
            return Err(Error::invalid("userIds must hold at least one user id"));
        }
        if user_ids.len() > MAX_ASSIGN {
            return Err(Error::invalid(format!(
                "userIds may hold at most {MAX_ASSIGN} user ids"
            )));
        }
        let mut seen = HashSet::new();
        let user_ids = user_ids
            .into_iter()
            .map(|id| Id::from(id.as_str().trim()))
            .filter(|id: &Id<User>| seen.insert(id.clone()))
            .collect();
        Ok(Assignment { user_ids })
    }

    pub fn user_ids(&self) -> &[Id<User>] {
        &self.user_ids
    }
}

impl TryFrom<AssignInput> for Assignment {
    type Error = Error;

    fn try_from(input: AssignInput) -> Result<Assignment> {
        let ids = input
            .user_ids
            .ok_or_else(|| Error::invalid("userIds is required"))?;
        Assignment::new(ids.into_iter().map(Id::from).collect())
    }
}

/// `Ok` of an optional text field, or its message in `problems`; `None` for empty.
fn optional<T>(
    problems: &mut Problems,
    raw: Option<String>,
    parse: impl FnOnce(&str) -> std::result::Result<Option<T>, String>,
) -> Option<T> {
    raw.and_then(|raw| problems.take(parse(&raw)).flatten())
}

fn parse_videos(problems: &mut Problems, videos: Vec<VideoInput>) -> Vec<Video> {
    if videos.len() > MAX_VIDEOS {
        problems.add(format!("videos may hold at most {MAX_VIDEOS} items"));
        return Vec::new();
    }
    videos
        .into_iter()
        .enumerate()
        .filter_map(|(i, v)| {
            let url = match v.url.as_deref() {
                None => {
                    problems.add(format!("videos[{i}].url is required"));
                    None
                }
                Some(url) => problems.take(HttpUrl::parse(&format!("videos[{i}].url"), url)),
            };
            let title = match v.title.as_deref() {
                None => Some(None),
                Some(t) => {
                    problems.take(VideoTitle::parse_optional(&format!("videos[{i}].title"), t))
                }
            };
            Some(Video {
                id: v.id.map(Id::from),
                title: title?,
                url: url?,
            })
        })
        .collect()
}

impl TryFrom<MaterialInput> for NewMaterial {
    type Error = Error;

    fn try_from(input: MaterialInput) -> Result<NewMaterial> {
        let mut problems = Problems::new();
        let title = problems.take(required("title", input.title.as_deref(), Title::parse));
        let description = optional(&mut problems, input.description, |d| {
            Description::parse_optional("description", d)
        });
        let locale = optional(&mut problems, input.locale, |l| {
            LanguageTag::parse_optional("locale", l)
        });
        let target_language = optional(&mut problems, input.target_language, |l| {
            LanguageTag::parse_optional("targetLanguage", l)
        });
        let level = optional(&mut problems, input.level, |l| {
            CefrLevel::parse_optional("level", l)
        });
        let videos = parse_videos(&mut problems, input.videos.unwrap_or_default());
        for (i, video) in videos.iter().enumerate() {
            if video.id.is_some() {
                problems.add(format!(
                    "videos[{i}].id does not name a video of this material"
                ));
            }
        }
        problems.finish()?;
        Ok(NewMaterial {
            title: passed(title)?,
            description,
            locale,
            target_language,
            level,
            videos,
        })
    }
}

impl TryFrom<MaterialUpdate> for MaterialChange {
    type Error = Error;

    fn try_from(input: MaterialUpdate) -> Result<MaterialChange> {
        let MaterialUpdate {
            title,
            description,
            locale,
            target_language,
            level,
            videos,
            remove_pdf_ids,
        } = input;
        let mut problems = Problems::new();
        let p = &mut problems;
        let title = title.non_null(p, "title", |t| Title::parse("title", &t));
        let videos = match videos {
            Patch::Absent => None,
            Patch::Null => {
                p.add("videos cannot be null (send [] to remove every video)");
                None
            }
            Patch::Value(v) => Some(parse_videos(p, v)),
        };
        let remove_pdf_ids = match remove_pdf_ids {
            Patch::Absent => Vec::new(),
            Patch::Null => {
                p.add("removePdfIds cannot be null");
                Vec::new()
            }
            Patch::Value(ids) => ids.into_iter().map(Id::from).collect(),
        };
        let change = MaterialChange {
            title,
            description: description.clearable_field(p, "description", Description::parse_optional),
            locale: locale.clearable_field(p, "locale", LanguageTag::parse_optional),
            target_language: target_language.clearable_field(
                p,
                "targetLanguage",
                LanguageTag::parse_optional,
            ),
            level: level.clearable_field(p, "level", CefrLevel::parse_optional),
            videos,
            remove_pdf_ids,
        };
        problems.finish()?;
        Ok(change)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn material_fields_are_checked_one_message_each() {
        let input: MaterialInput = serde_json::from_str(
            r#"{"title":"","locale":"english","targetLanguage":"de","level":"Z9",
                "videos":[{"title":"ok","url":"javascript:alert(1)"},{"title":"no url"}]}"#,
        )
        .expect("valid JSON");
        match NewMaterial::try_from(input) {
            Err(Error::Validation(messages)) => assert_eq!(
                messages,
                vec![
                    "title must not be empty",
                    "locale must be a language code such as \"en\" or \"de-AT\"",
                    "level must be one of A1, A2, B1, B2, C1, C2",
                    "videos[0].url must be an http:// or https:// address",
                    "videos[1].url is required",
                ]
            ),
            other => panic!("expected validation errors, got {other:?}"),
        }
    }

    #[test]
    fn a_valid_material_is_typed_and_empty_optionals_are_absent() {
        let input: MaterialInput = serde_json::from_str(
            r#"{"title":" Unit 1 ","locale":"EN-us","targetLanguage":" ","level":"b1",
                "videos":[{"url":"https://video.example.com/1"}]}"#,
        )
        .expect("valid JSON");
        let new = NewMaterial::try_from(input).expect("valid");
        assert_eq!(new.title.as_str(), "Unit 1");
        assert_eq!(new.locale.as_ref().map(LanguageTag::as_str), Some("en-US"));
        assert_eq!(new.target_language, None);
        assert_eq!(new.level, Some(CefrLevel::B1));
        assert_eq!(new.videos.len(), 1);
        assert_eq!(new.videos[0].title, None);
    }

    #[test]
    fn new_videos_cannot_name_an_id() {
        let input: MaterialInput = serde_json::from_str(
            r#"{"title":"T","videos":[{"id":"x","url":"https://video.example.com/1"}]}"#,
        )
        .expect("valid JSON");
        match NewMaterial::try_from(input) {
            Err(Error::Validation(messages)) => assert_eq!(
                messages,
                vec!["videos[0].id does not name a video of this material"]
            ),
            other => panic!("expected validation errors, got {other:?}"),
        }
    }

    #[test]
    fn updates_refuse_null_for_required_fields_and_clear_optional_ones() {
        let input: MaterialUpdate =
            serde_json::from_str(r#"{"description":null,"level":"c2"}"#).expect("valid JSON");
        let change = MaterialChange::try_from(input).expect("valid");
        assert_eq!(change.description, Some(None));
        assert_eq!(change.level, Some(Some(CefrLevel::C2)));
        assert_eq!(change.title, None);

        let input: MaterialUpdate =
            serde_json::from_str(r#"{"title":null,"videos":null,"description":null}"#)
                .expect("valid JSON");
        match MaterialChange::try_from(input) {
            Err(Error::Validation(messages)) => assert_eq!(
                messages,
                vec![
                    "title cannot be null",
                    "videos cannot be null (send [] to remove every video)"
                ]
            ),
            other => panic!("expected validation errors, got {other:?}"),
        }
        assert!(serde_json::from_str::<MaterialUpdate>(r#"{"pdfs":[]}"#).is_err());
    }

    #[test]
    fn assignments_need_one_to_a_thousand_distinct_ids() {
        let ids = |n: usize| -> Vec<Id<User>> { (0..n).map(|i| Id::from(i.to_string())).collect() };
        assert!(Assignment::new(ids(0)).is_err());
        assert!(Assignment::new(ids(MAX_ASSIGN + 1)).is_err());
        let twice =
            Assignment::new(vec![Id::from(" a "), Id::from("a"), Id::from("b")]).expect("valid");
        assert_eq!(twice.user_ids(), &[Id::from("a"), Id::from("b")]);
        assert!(Assignment::try_from(AssignInput { user_ids: None }).is_err());
    }
}
