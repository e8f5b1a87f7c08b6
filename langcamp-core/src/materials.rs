//! Education materials (CONTRACT §7): sets of PDF documents and videos that admins assign
//! to users, who are told by mail and then read what was assigned to them.
//!
//! PDFs arrive as staged files (see [`crate::storage`]): their bytes are already in the
//! file store, and the material's transaction records them. If that transaction fails,
//! the staged bytes are removed again; if it removes PDFs (an update, a delete), their
//! bytes are removed after it commits.

use std::collections::{HashMap, HashSet};

use serde::{Deserialize, Serialize};
use sqlx::any::AnyRow;
use sqlx::{AnyConnection, Row};
use utoipa::ToSchema;

use crate::Langcamp;
use crate::actor::{Actor, Role};
use crate::error::{Error, Result};
use crate::id::{looks_like_id, new_id};
use crate::mail::{self, MailKind, OutgoingMail};
use crate::page::{Page, PageRequest, UNPAGED_CAP};
use crate::storage::{self, FileType, StagedFile};
use crate::time::Timestamp;
use crate::users::{self, Deleted, User};
use crate::validate::{self, Patch, Problems};

/// At most this many PDFs, and this many videos, per material.
pub const MAX_PDFS: usize = 50;
pub const MAX_VIDEOS: usize = 50;
/// At most this many users per assignment request.
pub const MAX_ASSIGN: usize = 1000;
/// CEFR levels, the values `level` may take.
pub const LEVELS: [&str; 6] = ["A1", "A2", "B1", "B2", "C1", "C2"];

/// The columns of `education_materials` every material query selects, in this order.
macro_rules! material_columns {
    () => {
        "m.id, m.title, m.description, m.locale, m.target_language, m.level, m.created_at, m.updated_at"
    };
}

#[derive(Clone, Debug, PartialEq, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Material {
    pub id: String,
    #[schema(example = "Everyday German, unit 1")]
    pub title: String,
    pub description: Option<String>,
    #[schema(example = "en")]
    pub locale: Option<String>,
    #[schema(example = "de")]
    pub target_language: Option<String>,
    /// CEFR level `A1` to `C2`.
    #[schema(example = "A1")]
    pub level: Option<String>,
    pub pdfs: Vec<MaterialPdf>,
    pub videos: Vec<MaterialVideo>,
    pub created_at: Timestamp,
    pub updated_at: Timestamp,
}

/// A PDF document of a material; its bytes are served at `url`.
#[derive(Clone, Debug, PartialEq, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct MaterialPdf {
    pub id: String,
    /// The uploaded file's name without `.pdf`.
    #[schema(example = "Workbook")]
    pub title: Option<String>,
    pub file_id: String,
    /// `{PUBLIC_BASE_URL}/storage/files/{fileId}`.
    pub url: String,
    /// Bytes.
    pub size: u64,
}

#[derive(Clone, Debug, PartialEq, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct MaterialVideo {
    pub id: String,
    #[schema(example = "Greetings")]
    pub title: Option<String>,
    /// An http(s) address.
    #[schema(example = "https://video.example.com/greetings")]
    pub url: String,
}

/// A material as assigned to a user.
#[derive(Clone, Debug, PartialEq, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct AssignedMaterial {
    pub material: Material,
    pub assigned_at: Timestamp,
}

#[derive(Clone, Debug, PartialEq, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct AssignResult {
    pub material_id: String,
    /// Users newly assigned now (each gets one mail).
    pub assigned: u64,
    /// Users who already had the material (no mail).
    pub already_assigned: u64,
}

#[derive(Clone, Debug, PartialEq, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Unassigned {
    pub material_id: String,
    pub user_id: String,
    pub unassigned: bool,
}

/// A video in a create or update body.
#[derive(Clone, Debug, Default, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct VideoInput {
    /// On update only: the id of one of the material's videos, to keep that id.
    pub id: Option<String>,
    /// Up to 200 characters; optional.
    #[schema(example = "Greetings")]
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
    #[schema(example = "Everyday German, unit 1")]
    pub title: Option<String>,
    /// Up to 5000 characters.
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
    #[schema(value_type = Option<String>)]
    pub title: Patch<String>,
    #[serde(default)]
    #[schema(value_type = Option<String>)]
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

/// Validated scalar fields of a material.
#[derive(Debug, Default)]
struct Fields {
    title: String,
    description: Option<String>,
    locale: Option<String>,
    target_language: Option<String>,
    level: Option<String>,
}

#[derive(Debug)]
struct Video {
    id: Option<String>,
    title: Option<String>,
    url: String,
}

/// A validated update: `None` leaves a field as it is.
#[derive(Debug, Default)]
struct Change {
    title: Option<String>,
    description: Option<Option<String>>,
    locale: Option<Option<String>>,
    target_language: Option<Option<String>>,
    level: Option<Option<String>>,
    videos: Option<Vec<Video>>,
    remove_pdf_ids: Vec<String>,
}

fn parse_level(raw: &str) -> std::result::Result<Option<String>, String> {
    let level = raw.trim().to_ascii_uppercase();
    if level.is_empty() {
        Ok(None)
    } else if LEVELS.contains(&level.as_str()) {
        Ok(Some(level))
    } else {
        Err(format!("level must be one of {}", LEVELS.join(", ")))
    }
}

/// A language tag, or nothing for an empty value.
fn optional_tag(field: &str, raw: &str) -> std::result::Result<Option<String>, String> {
    if raw.trim().is_empty() {
        Ok(None)
    } else {
        validate::language_tag(field, raw).map(Some)
    }
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
                Some(url) => problems.take(validate::http_url(&format!("videos[{i}].url"), url)),
            };
            let title = problems.take(validate::optional_text(
                &format!("videos[{i}].title"),
                v.title.as_deref(),
                200,
            ));
            Some(Video {
                id: v.id,
                title: title?,
                url: url?,
            })
        })
        .collect()
}

impl MaterialInput {
    fn parse(self, problems: &mut Problems) -> (Fields, Vec<Video>) {
        let fields = Fields {
            title: problems
                .take(validate::text("title", self.title.as_deref(), 1, 200))
                .unwrap_or_default(),
            description: problems
                .take(validate::optional_multiline_text(
                    "description",
                    self.description.as_deref(),
                    5000,
                ))
                .flatten(),
            locale: self
                .locale
                .and_then(|l| problems.take(optional_tag("locale", &l)).flatten()),
            target_language: self
                .target_language
                .and_then(|l| problems.take(optional_tag("targetLanguage", &l)).flatten()),
            level: self
                .level
                .and_then(|l| problems.take(parse_level(&l)).flatten()),
        };
        let videos = parse_videos(problems, self.videos.unwrap_or_default());
        (fields, videos)
    }
}

/// Applies a parse to a PATCH field: absent stays, null clears (when allowed).
fn patch_field<T, U>(
    problems: &mut Problems,
    field: &str,
    value: Patch<T>,
    nullable: bool,
    parse: impl FnOnce(T) -> std::result::Result<U, String>,
) -> Option<U>
where
    U: Default,
{
    match value {
        Patch::Absent => None,
        Patch::Null if nullable => Some(U::default()),
        Patch::Null => {
            problems.add(format!("{field} cannot be null"));
            None
        }
        Patch::Value(v) => problems.take(parse(v)),
    }
}

impl MaterialUpdate {
    fn parse(self, problems: &mut Problems) -> Change {
        let title = match self.title {
            Patch::Absent => None,
            Patch::Null => {
                problems.add("title cannot be null");
                None
            }
            Patch::Value(t) => problems.take(validate::bounded("title", &t, 1, 200)),
        };
        let videos = match self.videos {
            Patch::Absent => None,
            Patch::Null => {
                problems.add("videos cannot be null (send [] to remove every video)");
                None
            }
            Patch::Value(v) => Some(parse_videos(problems, v)),
        };
        let remove_pdf_ids = match self.remove_pdf_ids {
            Patch::Absent => Vec::new(),
            Patch::Null => {
                problems.add("removePdfIds cannot be null");
                Vec::new()
            }
            Patch::Value(ids) => ids,
        };
        Change {
            title,
            description: patch_field(problems, "description", self.description, true, |d| {
                validate::optional_multiline_text("description", Some(&d), 5000)
            }),
            locale: patch_field(problems, "locale", self.locale, true, |l| {
                optional_tag("locale", &l)
            }),
            target_language: patch_field(
                problems,
                "targetLanguage",
                self.target_language,
                true,
                |l| optional_tag("targetLanguage", &l),
            ),
            level: patch_field(problems, "level", self.level, true, |l| parse_level(&l)),
            videos,
            remove_pdf_ids,
        }
    }
}

/// A PDF's title: the file name without its `.pdf` ending.
fn pdf_title(original_name: &str) -> String {
    let name = original_name.trim();
    let stem = if name.len() > 4 && name.to_ascii_lowercase().ends_with(".pdf") {
        name.get(..name.len() - 4).unwrap_or(name).trim()
    } else {
        name
    };
    if stem.is_empty() { name } else { stem }.to_owned()
}

fn material_from_row(row: &AnyRow) -> std::result::Result<Material, sqlx::Error> {
    Ok(Material {
        id: row.try_get("id")?,
        title: row.try_get("title")?,
        description: row.try_get("description")?,
        locale: row.try_get("locale")?,
        target_language: row.try_get("target_language")?,
        level: row.try_get("level")?,
        pdfs: Vec::new(),
        videos: Vec::new(),
        created_at: Timestamp::from_millis(row.try_get("created_at")?),
        updated_at: Timestamp::from_millis(row.try_get("updated_at")?),
    })
}

async fn find_material(conn: &mut AnyConnection, id: &str) -> Result<Option<Material>> {
    if !looks_like_id(id) {
        return Ok(None);
    }
    let row = sqlx::query(concat!(
        "SELECT ",
        material_columns!(),
        " FROM education_materials m WHERE m.id = $1"
    ))
    .bind(id)
    .fetch_optional(conn)
    .await?;
    Ok(row.as_ref().map(material_from_row).transpose()?)
}

fn material_not_found() -> Error {
    Error::not_found("education material")
}

async fn require_material(conn: &mut AnyConnection, id: &str) -> Result<Material> {
    find_material(conn, id)
        .await?
        .ok_or_else(material_not_found)
}

impl Langcamp {
    /// Fills in the PDFs and videos of `materials` from rows that carry `material_id`.
    fn attach_items(
        &self,
        materials: &mut [Material],
        pdf_rows: &[AnyRow],
        video_rows: &[AnyRow],
    ) -> Result<()> {
        let mut pdfs: HashMap<String, Vec<MaterialPdf>> = HashMap::new();
        for row in pdf_rows {
            let file_id: String = row.try_get("file_id")?;
            let size: i64 = row.try_get("size")?;
            pdfs.entry(row.try_get("material_id")?)
                .or_default()
                .push(MaterialPdf {
                    id: row.try_get("id")?,
                    title: row.try_get("title")?,
                    url: self.file_url(&file_id),
                    file_id,
                    size: u64::try_from(size).unwrap_or(0),
                });
        }
        let mut videos: HashMap<String, Vec<MaterialVideo>> = HashMap::new();
        for row in video_rows {
            videos
                .entry(row.try_get("material_id")?)
                .or_default()
                .push(MaterialVideo {
                    id: row.try_get("id")?,
                    title: row.try_get("title")?,
                    url: row.try_get("url")?,
                });
        }
        for material in materials {
            material.pdfs = pdfs.remove(&material.id).unwrap_or_default();
            material.videos = videos.remove(&material.id).unwrap_or_default();
        }
        Ok(())
    }

    /// One material with its PDFs and videos.
    async fn load_material(&self, conn: &mut AnyConnection, id: &str) -> Result<Material> {
        let mut material = require_material(conn, id).await?;
        let pdfs = sqlx::query(
            "SELECT id, material_id, file_id, title, size FROM material_pdfs
             WHERE material_id = $1 ORDER BY position, id",
        )
        .bind(id)
        .fetch_all(&mut *conn)
        .await?;
        let videos = sqlx::query(
            "SELECT id, material_id, title, url FROM material_videos
             WHERE material_id = $1 ORDER BY position, id",
        )
        .bind(id)
        .fetch_all(&mut *conn)
        .await?;
        self.attach_items(std::slice::from_mut(&mut material), &pdfs, &videos)?;
        Ok(material)
    }

    /// The link an assignment mail carries.
    pub fn material_link(&self, id: &str) -> String {
        format!("{}/materials/{id}", self.config().frontend_base_url)
    }

    /// Keeps staged PDFs when `outcome` succeeded, removes them otherwise.
    async fn settle_staged<T>(&self, outcome: Result<T>, mut files: Vec<StagedFile>) -> Result<T> {
        match outcome {
            Ok(value) => {
                files.iter_mut().for_each(StagedFile::settle);
                Ok(value)
            }
            Err(e) => {
                self.discard_staged(files).await;
                Err(e)
            }
        }
    }

    /// `POST /education-materials` (admin): a new material with its videos and the
    /// staged PDFs (which must be PDF documents).
    #[tracing::instrument(skip_all)]
    pub async fn create_material(
        &self,
        actor: &Actor,
        input: MaterialInput,
        pdfs: Vec<StagedFile>,
    ) -> Result<Material> {
        let outcome = self.insert_material(actor, input, &pdfs).await;
        self.settle_staged(outcome, pdfs).await
    }

    async fn insert_material(
        &self,
        actor: &Actor,
        input: MaterialInput,
        pdfs: &[StagedFile],
    ) -> Result<Material> {
        actor.require(Role::Admin)?;
        check_pdfs(pdfs)?;
        let mut problems = Problems::new();
        let (fields, videos) = input.parse(&mut problems);
        if pdfs.len() > MAX_PDFS {
            problems.add(format!("a material holds at most {MAX_PDFS} PDFs"));
        }
        for (i, video) in videos.iter().enumerate() {
            if video.id.is_some() {
                problems.add(format!(
                    "videos[{i}].id does not name a video of this material"
                ));
            }
        }
        problems.finish()?;

        let now = self.clock().now_ms();
        let id = new_id();
        let mut tx = self.db().begin().await?;
        sqlx::query(
            "INSERT INTO education_materials (id, title, description, locale, target_language, level, created_at, updated_at)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $7)",
        )
        .bind(&id)
        .bind(&fields.title)
        .bind(fields.description.as_deref())
        .bind(fields.locale.as_deref())
        .bind(fields.target_language.as_deref())
        .bind(fields.level.as_deref())
        .bind(now)
        .execute(&mut *tx)
        .await?;
        insert_videos(&mut tx, &id, &videos).await?;
        insert_pdfs(
            &mut tx,
            &id,
            pdfs,
            0,
            now,
            self.config().file_store_max_bytes,
        )
        .await?;
        let material = self.load_material(&mut tx, &id).await?;
        tx.commit().await?;
        Ok(material)
    }

    /// `PATCH /education-materials/{id}` (admin): changes fields, replaces the videos when
    /// given, appends the staged PDFs and removes those in `removePdfIds`.
    #[tracing::instrument(skip_all)]
    pub async fn update_material(
        &self,
        actor: &Actor,
        id: &str,
        input: MaterialUpdate,
        new_pdfs: Vec<StagedFile>,
    ) -> Result<Material> {
        let outcome = self.change_material(actor, id, input, &new_pdfs).await;
        let (material, removed) = self.settle_staged(outcome, new_pdfs).await?;
        self.remove_stored_bytes(removed).await;
        Ok(material)
    }

    async fn change_material(
        &self,
        actor: &Actor,
        id: &str,
        input: MaterialUpdate,
        new_pdfs: &[StagedFile],
    ) -> Result<(Material, Vec<String>)> {
        actor.require(Role::Admin)?;
        check_pdfs(new_pdfs)?;
        let mut problems = Problems::new();
        let change = input.parse(&mut problems);
        problems.finish()?;

        let now = self.clock().now_ms();
        let mut tx = self.db().begin().await?;
        let current = require_material(&mut tx, id).await?;
        let video_ids: HashSet<String> =
            sqlx::query_scalar("SELECT id FROM material_videos WHERE material_id = $1")
                .bind(id)
                .fetch_all(&mut *tx)
                .await?
                .into_iter()
                .collect();
        let pdf_rows = sqlx::query("SELECT id, file_id FROM material_pdfs WHERE material_id = $1")
            .bind(id)
            .fetch_all(&mut *tx)
            .await?;
        let mut pdf_files: HashMap<String, String> = HashMap::new();
        for row in &pdf_rows {
            pdf_files.insert(row.try_get("id")?, row.try_get("file_id")?);
        }

        let mut problems = Problems::new();
        let mut removing: Vec<String> = Vec::new();
        for pdf_id in &change.remove_pdf_ids {
            if !pdf_files.contains_key(pdf_id) {
                problems.add(format!(
                    "removePdfIds: {pdf_id:?} is not a PDF of this material"
                ));
            } else if !removing.contains(pdf_id) {
                removing.push(pdf_id.clone());
            }
        }
        if pdf_files.len() - removing.len() + new_pdfs.len() > MAX_PDFS {
            problems.add(format!("a material holds at most {MAX_PDFS} PDFs"));
        }
        if let Some(videos) = &change.videos {
            let mut seen = HashSet::new();
            for (i, video) in videos.iter().enumerate() {
                if let Some(video_id) = &video.id {
                    if !video_ids.contains(video_id) {
                        problems.add(format!(
                            "videos[{i}].id does not name a video of this material"
                        ));
                    } else if !seen.insert(video_id) {
                        problems.add(format!("videos[{i}].id appears twice"));
                    }
                }
            }
        }
        problems.finish()?;

        sqlx::query(
            "UPDATE education_materials SET title = $1, description = $2, locale = $3,
                    target_language = $4, level = $5, updated_at = $6
             WHERE id = $7",
        )
        .bind(change.title.unwrap_or(current.title))
        .bind(change.description.unwrap_or(current.description))
        .bind(change.locale.unwrap_or(current.locale))
        .bind(change.target_language.unwrap_or(current.target_language))
        .bind(change.level.unwrap_or(current.level))
        .bind(now)
        .bind(id)
        .execute(&mut *tx)
        .await?;
        if let Some(videos) = &change.videos {
            sqlx::query("DELETE FROM material_videos WHERE material_id = $1")
                .bind(id)
                .execute(&mut *tx)
                .await?;
            insert_videos(&mut tx, id, videos).await?;
        }
        let mut removed_keys = Vec::new();
        for pdf_id in &removing {
            sqlx::query("DELETE FROM material_pdfs WHERE id = $1 AND material_id = $2")
                .bind(pdf_id)
                .bind(id)
                .execute(&mut *tx)
                .await?;
            if let Some(file_id) = pdf_files.get(pdf_id)
                && let Some(key) = storage::delete_unused_file(&mut tx, file_id).await?
            {
                removed_keys.push(key);
            }
        }
        let last: i64 = sqlx::query_scalar(
            "SELECT CAST(COALESCE(MAX(position), -1) AS BIGINT) FROM material_pdfs WHERE material_id = $1",
        )
        .bind(id)
        .fetch_one(&mut *tx)
        .await?;
        insert_pdfs(
            &mut tx,
            id,
            new_pdfs,
            last + 1,
            now,
            self.config().file_store_max_bytes,
        )
        .await?;
        let material = self.load_material(&mut tx, id).await?;
        tx.commit().await?;
        Ok((material, removed_keys))
    }

    /// `DELETE /education-materials/{id}` (admin): the material, its assignments and its
    /// PDFs, records and bytes.
    #[tracing::instrument(skip_all)]
    pub async fn delete_material(&self, actor: &Actor, id: &str) -> Result<Deleted> {
        actor.require(Role::Admin)?;
        let mut tx = self.db().begin().await?;
        require_material(&mut tx, id).await?;
        let file_ids: Vec<String> =
            sqlx::query_scalar("SELECT file_id FROM material_pdfs WHERE material_id = $1")
                .bind(id)
                .fetch_all(&mut *tx)
                .await?;
        // Assignments, PDF and video rows go with it (ON DELETE CASCADE).
        sqlx::query("DELETE FROM education_materials WHERE id = $1")
            .bind(id)
            .execute(&mut *tx)
            .await?;
        let mut keys = Vec::new();
        for file_id in &file_ids {
            if let Some(key) = storage::delete_unused_file(&mut tx, file_id).await? {
                keys.push(key);
            }
        }
        tx.commit().await?;
        self.remove_stored_bytes(keys).await;
        Ok(Deleted {
            id: id.to_owned(),
            deleted: true,
        })
    }

    /// `GET /education-materials` (admin): newest first, optionally of one locale.
    #[tracing::instrument(skip_all)]
    pub async fn list_materials(
        &self,
        actor: &Actor,
        locale: Option<&str>,
        page: PageRequest,
    ) -> Result<Page<Material>> {
        actor.require(Role::Admin)?;
        let locale = match locale {
            None => None,
            Some(l) => optional_tag("locale", l).map_err(Error::invalid)?,
        };
        let mut conn = self.db().reader().acquire().await?;
        let total: i64 = sqlx::query_scalar(
            "SELECT COUNT(*) FROM education_materials WHERE ($1 IS NULL OR locale = $1)",
        )
        .bind(locale.as_deref())
        .fetch_one(&mut *conn)
        .await?;
        let rows = sqlx::query(concat!(
            "SELECT ",
            material_columns!(),
            " FROM education_materials m WHERE ($1 IS NULL OR m.locale = $1)
             ORDER BY m.created_at DESC, m.id DESC LIMIT $2 OFFSET $3"
        ))
        .bind(locale.as_deref())
        .bind(page.limit())
        .bind(page.offset())
        .fetch_all(&mut *conn)
        .await?;
        let mut list = rows
            .iter()
            .map(material_from_row)
            .collect::<std::result::Result<Vec<_>, _>>()?;
        if !list.is_empty() {
            let pdfs = sqlx::query(
                "SELECT id, material_id, file_id, title, size FROM material_pdfs
                 WHERE material_id IN (SELECT id FROM education_materials WHERE ($1 IS NULL OR locale = $1)
                                       ORDER BY created_at DESC, id DESC LIMIT $2 OFFSET $3)
                 ORDER BY material_id, position, id",
            )
            .bind(locale.as_deref())
            .bind(page.limit())
            .bind(page.offset())
            .fetch_all(&mut *conn)
            .await?;
            let videos = sqlx::query(
                "SELECT id, material_id, title, url FROM material_videos
                 WHERE material_id IN (SELECT id FROM education_materials WHERE ($1 IS NULL OR locale = $1)
                                       ORDER BY created_at DESC, id DESC LIMIT $2 OFFSET $3)
                 ORDER BY material_id, position, id",
            )
            .bind(locale.as_deref())
            .bind(page.limit())
            .bind(page.offset())
            .fetch_all(&mut *conn)
            .await?;
            self.attach_items(&mut list, &pdfs, &videos)?;
        }
        Ok(Page::new(list, page, total))
    }

    /// `GET /education-materials/{id}`: admins see any material, users those assigned to
    /// them (any other is 404, as if it did not exist).
    #[tracing::instrument(skip_all)]
    pub async fn get_material(&self, actor: &Actor, id: &str) -> Result<Material> {
        actor.require(Role::User)?;
        let mut conn = self.db().reader().acquire().await?;
        if !actor.is_admin() {
            let caller = actor.caller()?;
            let assigned = sqlx::query(
                "SELECT material_id FROM material_assignments WHERE material_id = $1 AND user_id = $2",
            )
            .bind(id)
            .bind(&caller.user_id)
            .fetch_optional(&mut *conn)
            .await?;
            if assigned.is_none() {
                return Err(material_not_found());
            }
        }
        self.load_material(&mut conn, id).await
    }

    /// `GET /education-materials/my-materials`: the caller's materials, newest assignment first.
    #[tracing::instrument(skip_all)]
    pub async fn my_materials(&self, actor: &Actor) -> Result<Vec<AssignedMaterial>> {
        let caller = actor.caller()?;
        let mut conn = self.db().reader().acquire().await?;
        self.assigned_to(&mut conn, &caller.user_id).await
    }

    /// `GET /education-materials/user/{userId}` (admin): a user's materials, newest first.
    #[tracing::instrument(skip_all)]
    pub async fn user_materials(
        &self,
        actor: &Actor,
        user_id: &str,
    ) -> Result<Vec<AssignedMaterial>> {
        actor.require(Role::Admin)?;
        let mut conn = self.db().reader().acquire().await?;
        if users::find_user(&mut conn, user_id).await?.is_none() {
            return Err(Error::not_found("user"));
        }
        self.assigned_to(&mut conn, user_id).await
    }

    async fn assigned_to(
        &self,
        conn: &mut AnyConnection,
        user_id: &str,
    ) -> Result<Vec<AssignedMaterial>> {
        let rows = sqlx::query(concat!(
            "SELECT ",
            material_columns!(),
            ", a.assigned_at FROM material_assignments a
             JOIN education_materials m ON m.id = a.material_id
             WHERE a.user_id = $1
             ORDER BY a.assigned_at DESC, m.id DESC LIMIT $2"
        ))
        .bind(user_id)
        .bind(UNPAGED_CAP)
        .fetch_all(&mut *conn)
        .await?;
        let mut materials = Vec::with_capacity(rows.len());
        let mut assigned_at = Vec::with_capacity(rows.len());
        for row in &rows {
            materials.push(material_from_row(row)?);
            assigned_at.push(Timestamp::from_millis(row.try_get("assigned_at")?));
        }
        if !materials.is_empty() {
            let pdfs = sqlx::query(
                "SELECT id, material_id, file_id, title, size FROM material_pdfs
                 WHERE material_id IN (SELECT material_id FROM material_assignments WHERE user_id = $1
                                       ORDER BY assigned_at DESC, material_id DESC LIMIT $2)
                 ORDER BY material_id, position, id",
            )
            .bind(user_id)
            .bind(UNPAGED_CAP)
            .fetch_all(&mut *conn)
            .await?;
            let videos = sqlx::query(
                "SELECT id, material_id, title, url FROM material_videos
                 WHERE material_id IN (SELECT material_id FROM material_assignments WHERE user_id = $1
                                       ORDER BY assigned_at DESC, material_id DESC LIMIT $2)
                 ORDER BY material_id, position, id",
            )
            .bind(user_id)
            .bind(UNPAGED_CAP)
            .fetch_all(&mut *conn)
            .await?;
            self.attach_items(&mut materials, &pdfs, &videos)?;
        }
        Ok(materials
            .into_iter()
            .zip(assigned_at)
            .map(|(material, assigned_at)| AssignedMaterial {
                material,
                assigned_at,
            })
            .collect())
    }

    /// `POST /education-materials/{id}/assign` (admin): all or nothing. Any unknown user
    /// is 404 (naming it) and nothing is assigned; each newly assigned user gets one mail,
    /// queued in the same transaction.
    #[tracing::instrument(skip_all)]
    pub async fn assign_material(
        &self,
        actor: &Actor,
        id: &str,
        input: AssignInput,
    ) -> Result<AssignResult> {
        actor.require(Role::Admin)?;
        let user_ids = match input.user_ids {
            None => return Err(Error::invalid("userIds is required")),
            Some(ids) if ids.is_empty() => {
                return Err(Error::invalid("userIds must hold at least one user id"));
            }
            Some(ids) if ids.len() > MAX_ASSIGN => {
                return Err(Error::invalid(format!(
                    "userIds may hold at most {MAX_ASSIGN} user ids"
                )));
            }
            Some(ids) => {
                let mut seen = HashSet::new();
                ids.into_iter()
                    .map(|i| i.trim().to_owned())
                    .filter(|i| seen.insert(i.clone()))
                    .collect::<Vec<_>>()
            }
        };

        let now = self.clock().now_ms();
        let mut tx = self.db().begin().await?;
        let material = require_material(&mut tx, id).await?;
        users::hold_users(&mut tx, self.db().backend(), &user_ids).await?;
        let mut users: Vec<User> = Vec::with_capacity(user_ids.len());
        let mut unknown: Vec<&str> = Vec::new();
        for user_id in &user_ids {
            match users::find_user(&mut tx, user_id).await? {
                Some(user) => users.push(user),
                None => unknown.push(user_id),
            }
        }
        match unknown.as_slice() {
            [] => {}
            [one] => return Err(Error::NotFound(format!("user {one:?} not found"))),
            many => {
                let names: Vec<String> = many.iter().map(|u| format!("{u:?}")).collect();
                return Err(Error::NotFound(format!(
                    "users not found: {}",
                    names.join(", ")
                )));
            }
        }

        let link = self.material_link(id);
        let (mut assigned, mut already_assigned) = (0u64, 0u64);
        for user in &users {
            let inserted = sqlx::query(
                "INSERT INTO material_assignments (material_id, user_id, assigned_at, assigned_by)
                 VALUES ($1, $2, $3, $4) ON CONFLICT (material_id, user_id) DO NOTHING",
            )
            .bind(id)
            .bind(&user.id)
            .bind(now)
            .bind(actor.user_id())
            .execute(&mut *tx)
            .await?
            .rows_affected();
            if inserted == 0 {
                already_assigned += 1;
                continue;
            }
            assigned += 1;
            let mail = assignment_mail(user, &material.title, &link);
            mail::enqueue(&mut tx, self, MailKind::MaterialAssignment, &mail, None).await?;
        }
        tx.commit().await?;
        if assigned > 0 {
            self.wake_mail_worker();
        }
        Ok(AssignResult {
            material_id: id.to_owned(),
            assigned,
            already_assigned,
        })
    }

    /// `DELETE /education-materials/{id}/assign/{userId}` (admin).
    #[tracing::instrument(skip_all)]
    pub async fn unassign_material(
        &self,
        actor: &Actor,
        id: &str,
        user_id: &str,
    ) -> Result<Unassigned> {
        actor.require(Role::Admin)?;
        let mut tx = self.db().begin().await?;
        require_material(&mut tx, id).await?;
        let removed =
            sqlx::query("DELETE FROM material_assignments WHERE material_id = $1 AND user_id = $2")
                .bind(id)
                .bind(user_id)
                .execute(&mut *tx)
                .await?
                .rows_affected();
        if removed == 0 {
            return Err(Error::NotFound(
                "this material is not assigned to that user".into(),
            ));
        }
        tx.commit().await?;
        Ok(Unassigned {
            material_id: id.to_owned(),
            user_id: user_id.to_owned(),
            unassigned: true,
        })
    }
}

/// Staged files handed to a material must be PDF documents.
fn check_pdfs(pdfs: &[StagedFile]) -> Result<()> {
    match pdfs.iter().find(|f| f.file_type() != FileType::Pdf) {
        Some(f) => Err(Error::UnsupportedMediaType(format!(
            "{:?} is not a PDF document",
            f.original_name()
        ))),
        None => Ok(()),
    }
}

async fn insert_videos(
    conn: &mut AnyConnection,
    material_id: &str,
    videos: &[Video],
) -> Result<()> {
    for (position, video) in videos.iter().enumerate() {
        sqlx::query(
            "INSERT INTO material_videos (id, material_id, title, url, position) VALUES ($1, $2, $3, $4, $5)",
        )
        .bind(video.id.clone().unwrap_or_else(new_id))
        .bind(material_id)
        .bind(video.title.as_deref())
        .bind(&video.url)
        .bind(i64::try_from(position).unwrap_or(i64::MAX))
        .execute(&mut *conn)
        .await?;
    }
    Ok(())
}

async fn insert_pdfs(
    conn: &mut AnyConnection,
    material_id: &str,
    pdfs: &[StagedFile],
    first_position: i64,
    now: i64,
    file_store_max_bytes: Option<u64>,
) -> Result<()> {
    for (offset, file) in (0i64..).zip(pdfs) {
        storage::insert_stored_file(&mut *conn, file, file_store_max_bytes).await?;
        sqlx::query(
            "INSERT INTO material_pdfs (id, material_id, file_id, title, size, position, created_at)
             VALUES ($1, $2, $3, $4, $5, $6, $7)",
        )
        .bind(new_id())
        .bind(material_id)
        .bind(file.id())
        .bind(pdf_title(file.original_name()))
        .bind(i64::try_from(file.size()).unwrap_or(i64::MAX))
        .bind(first_position + offset)
        .bind(now)
        .execute(&mut *conn)
        .await?;
    }
    Ok(())
}

/// The mail telling `user` that a material was assigned to them.
fn assignment_mail(user: &User, title: &str, link: &str) -> OutgoingMail {
    let greeting = match user.name.as_deref() {
        Some(name) => format!("Hello {name},"),
        None => "Hello,".to_owned(),
    };
    let subject = mail::header_safe(&format!("New learning material: {title}"));
    OutgoingMail {
        to: user.email.clone(),
        text: format!(
            "{greeting}\n\nA new learning material has been assigned to you: {title}\n\n\
             Open it here: {link}\n\nHappy learning!\nLangcamp"
        ),
        html: mail::html_document(
            &subject,
            &format!(
                "<p>{}</p><p>A new learning material has been assigned to you: <b>{}</b></p>\
                 <p><a href=\"{}\">Open the material</a></p><p>Happy learning!<br>Langcamp</p>",
                mail::escape_html(&greeting),
                mail::escape_html(title),
                mail::escape_html(link),
            ),
        ),
        subject,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn levels_are_cefr_labels_in_upper_case() {
        assert_eq!(parse_level("b1"), Ok(Some("B1".into())));
        assert_eq!(parse_level(" "), Ok(None));
        assert!(parse_level("D1").is_err());
    }

    #[test]
    fn pdf_titles_drop_the_extension() {
        assert_eq!(pdf_title("Workbook.pdf"), "Workbook");
        assert_eq!(pdf_title("notes.PDF"), "notes");
        assert_eq!(pdf_title(".pdf"), ".pdf");
        assert_eq!(pdf_title("scan"), "scan");
    }

    #[test]
    fn material_fields_are_checked_one_message_each() {
        let input: MaterialInput = serde_json::from_str(
            r#"{"title":"","locale":"english","targetLanguage":"de","level":"Z9",
                "videos":[{"title":"ok","url":"javascript:alert(1)"},{"title":"no url"}]}"#,
        )
        .expect("valid JSON");
        let mut problems = Problems::new();
        input.parse(&mut problems);
        match problems.finish() {
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
    fn updates_refuse_null_for_required_fields_and_clear_optional_ones() {
        let input: MaterialUpdate =
            serde_json::from_str(r#"{"title":null,"videos":null,"description":null}"#)
                .expect("valid JSON");
        let mut problems = Problems::new();
        let change = input.parse(&mut problems);
        assert_eq!(change.description, Some(None));
        match problems.finish() {
            Err(Error::Validation(messages)) => assert_eq!(messages.len(), 2, "{messages:?}"),
            other => panic!("expected validation errors, got {other:?}"),
        }
        assert!(serde_json::from_str::<MaterialUpdate>(r#"{"pdfs":[]}"#).is_err());
    }
}
