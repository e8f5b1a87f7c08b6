//! The SQL of materials: a material with its PDFs and videos, pages and assigned lists,
//! and writes. The child rows' SQL is written once ([`PDFS_OF`], [`VIDEOS_OF`]) and loaded
//! for a whole list by the listed materials' ids, not per material.

use std::collections::{HashMap, HashSet};

use sqlx::any::AnyRow;
use sqlx::{AnyConnection, Row};

use super::input::{NewMaterial, Video};
use super::{Material, MaterialPdf, MaterialVideo};
use crate::Langcamp;
use crate::domain::error::{Error, Result};
use crate::domain::id::new_id;
use crate::domain::page::{PageRequest, UNPAGED_CAP};
use crate::domain::time::Timestamp;
use crate::domain::{Id, LanguageTag};
use crate::platform::db::by_id;
use crate::platform::db::listing;
use crate::storage::{self, StagedFile};
use crate::users::User;

/// The columns of `education_materials` every material query selects, in this order.
macro_rules! material_columns {
    () => {
        "m.id, m.title, m.description, m.locale, m.target_language, m.level, m.created_at, m.updated_at"
    };
}

/// The admin list's filter, shared by its count and its page.
macro_rules! listed {
    () => {
        " FROM education_materials m WHERE ($1 IS NULL OR m.locale = $1)"
    };
}

/// The PDFs of the materials whose ids follow (`IN (...)`).
const PDFS_OF: &str =
    "SELECT id, material_id, file_id, title, size FROM material_pdfs WHERE material_id";
/// The videos of the materials whose ids follow (`IN (...)`).
const VIDEOS_OF: &str = "SELECT id, material_id, title, url FROM material_videos WHERE material_id";
/// Children in the order they were given.
const CHILD_ORDER: &str = "ORDER BY material_id, position, id";

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

pub(super) fn not_found() -> Error {
    Error::not_found("education material")
}

/// The material's own row (no PDFs or videos yet).
async fn find(conn: &mut AnyConnection, id: &Id<Material>) -> Result<Option<Material>> {
    let select = concat!(
        "SELECT ",
        material_columns!(),
        " FROM education_materials m WHERE m.id = $1"
    );
    let row = by_id::find(conn, select, id.as_str()).await?;
    Ok(row.as_ref().map(material_from_row).transpose()?)
}

/// The material's own row, or 404.
pub(super) async fn require(conn: &mut AnyConnection, id: &Id<Material>) -> Result<Material> {
    find(conn, id).await?.ok_or_else(not_found)
}

/// One material with its PDFs and videos, or 404.
pub(super) async fn load(
    app: &Langcamp,
    conn: &mut AnyConnection,
    id: &Id<Material>,
) -> Result<Material> {
    let mut material = require(conn, id).await?;
    attach_children(app, conn, std::slice::from_mut(&mut material)).await?;
    Ok(material)
}

/// Fills in the PDFs and videos of `materials`: two queries for the whole list.
async fn attach_children(
    app: &Langcamp,
    conn: &mut AnyConnection,
    materials: &mut [Material],
) -> Result<()> {
    let ids: Vec<&str> = materials.iter().map(|m| m.id.as_str()).collect();
    let pdf_rows = listing::rows_of(conn, PDFS_OF, &ids, CHILD_ORDER).await?;
    let video_rows = listing::rows_of(conn, VIDEOS_OF, &ids, CHILD_ORDER).await?;
    let mut pdfs: HashMap<String, Vec<MaterialPdf>> = HashMap::new();
    for row in &pdf_rows {
        let file_id: String = row.try_get("file_id")?;
        let size: i64 = row.try_get("size")?;
        pdfs.entry(row.try_get("material_id")?)
            .or_default()
            .push(MaterialPdf {
                id: row.try_get("id")?,
                title: row.try_get("title")?,
                url: app.file_url(&file_id),
                file_id,
                size: u64::try_from(size).unwrap_or(0),
            });
    }
    let mut videos: HashMap<String, Vec<MaterialVideo>> = HashMap::new();
    for row in &video_rows {
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

/// A page of the admin list (newest first, optionally of one locale) and the total.
pub(super) async fn list(
    app: &Langcamp,
    conn: &mut AnyConnection,
    locale: Option<&LanguageTag>,
    page: PageRequest,
) -> Result<(Vec<Material>, i64)> {
    let locale = locale.map(LanguageTag::as_str);
    let total: i64 = sqlx::query_scalar(concat!("SELECT COUNT(*)", listed!()))
        .bind(locale)
        .fetch_one(&mut *conn)
        .await?;
    let rows = sqlx::query(concat!(
        "SELECT ",
        material_columns!(),
        listed!(),
        " ORDER BY m.created_at DESC, m.id DESC LIMIT $2 OFFSET $3"
    ))
    .bind(locale)
    .bind(page.limit())
    .bind(page.offset())
    .fetch_all(&mut *conn)
    .await?;
    let mut list = rows
        .iter()
        .map(material_from_row)
        .collect::<std::result::Result<Vec<_>, _>>()?;
    attach_children(app, conn, &mut list).await?;
    Ok((list, total))
}

/// The materials assigned to a user, newest assignment first, with when.
pub(super) async fn assigned_to(
    app: &Langcamp,
    conn: &mut AnyConnection,
    user_id: &Id<User>,
) -> Result<(Vec<Material>, Vec<Timestamp>)> {
    let rows = sqlx::query(concat!(
        "SELECT ",
        material_columns!(),
        ", a.assigned_at FROM material_assignments a
         JOIN education_materials m ON m.id = a.material_id
         WHERE a.user_id = $1
         ORDER BY a.assigned_at DESC, m.id DESC LIMIT $2"
    ))
    .bind(user_id.as_str())
    .bind(UNPAGED_CAP)
    .fetch_all(&mut *conn)
    .await?;
    let mut materials = Vec::with_capacity(rows.len());
    let mut assigned_at = Vec::with_capacity(rows.len());
    for row in &rows {
        materials.push(material_from_row(row)?);
        assigned_at.push(Timestamp::from_millis(row.try_get("assigned_at")?));
    }
    attach_children(app, conn, &mut materials).await?;
    Ok((materials, assigned_at))
}

/// Whether the material is assigned to the user.
pub(super) async fn is_assigned(
    conn: &mut AnyConnection,
    id: &Id<Material>,
    user_id: &Id<User>,
) -> Result<bool> {
    let row = sqlx::query(
        "SELECT material_id FROM material_assignments WHERE material_id = $1 AND user_id = $2",
    )
    .bind(id.as_str())
    .bind(user_id.as_str())
    .fetch_optional(conn)
    .await?;
    Ok(row.is_some())
}

/// The material's own row.
pub(super) async fn insert(
    conn: &mut AnyConnection,
    id: &Id<Material>,
    new: &NewMaterial,
    now: i64,
) -> Result<()> {
    sqlx::query(
        "INSERT INTO education_materials (id, title, description, locale, target_language, level, created_at, updated_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $7)",
    )
    .bind(id.as_str())
    .bind(new.title.as_str())
    .bind(new.description.as_ref().map(|d| d.as_str()))
    .bind(new.locale.as_ref().map(LanguageTag::as_str))
    .bind(new.target_language.as_ref().map(LanguageTag::as_str))
    .bind(new.level.map(|l| l.as_str()))
    .bind(now)
    .execute(conn)
    .await?;
    Ok(())
}

/// The material's scalar fields after a change, all of them.
pub(super) struct Fields<'a> {
    pub title: &'a str,
    pub description: Option<&'a str>,
    pub locale: Option<&'a str>,
    pub target_language: Option<&'a str>,
    pub level: Option<&'a str>,
}

pub(super) async fn update(
    conn: &mut AnyConnection,
    id: &Id<Material>,
    fields: Fields<'_>,
    now: i64,
) -> Result<()> {
    sqlx::query(
        "UPDATE education_materials SET title = $1, description = $2, locale = $3,
                target_language = $4, level = $5, updated_at = $6
         WHERE id = $7",
    )
    .bind(fields.title)
    .bind(fields.description)
    .bind(fields.locale)
    .bind(fields.target_language)
    .bind(fields.level)
    .bind(now)
    .bind(id.as_str())
    .execute(conn)
    .await?;
    Ok(())
}

/// The ids of the material's videos.
pub(super) async fn video_ids(
    conn: &mut AnyConnection,
    id: &Id<Material>,
) -> Result<HashSet<Id<MaterialVideo>>> {
    let ids: Vec<String> =
        sqlx::query_scalar("SELECT id FROM material_videos WHERE material_id = $1")
            .bind(id.as_str())
            .fetch_all(conn)
            .await?;
    Ok(ids.into_iter().map(Id::from).collect())
}

/// The material's PDFs: PDF id to stored file id.
pub(super) async fn pdf_files(
    conn: &mut AnyConnection,
    id: &Id<Material>,
) -> Result<HashMap<Id<MaterialPdf>, String>> {
    let rows = sqlx::query("SELECT id, file_id FROM material_pdfs WHERE material_id = $1")
        .bind(id.as_str())
        .fetch_all(conn)
        .await?;
    let mut files = HashMap::new();
    for row in &rows {
        files.insert(
            Id::from(row.try_get::<String, _>("id")?),
            row.try_get("file_id")?,
        );
    }
    Ok(files)
}

/// Replaces the material's videos by `videos`, in their order.
pub(super) async fn replace_videos(
    conn: &mut AnyConnection,
    id: &Id<Material>,
    videos: &[Video],
) -> Result<()> {
    sqlx::query("DELETE FROM material_videos WHERE material_id = $1")
        .bind(id.as_str())
        .execute(&mut *conn)
        .await?;
    insert_videos(conn, id, videos).await
}

/// Adds `videos` to the material, in their order; a video without an id gets a new one.
pub(super) async fn insert_videos(
    conn: &mut AnyConnection,
    id: &Id<Material>,
    videos: &[Video],
) -> Result<()> {
    for (position, video) in videos.iter().enumerate() {
        sqlx::query(
            "INSERT INTO material_videos (id, material_id, title, url, position) VALUES ($1, $2, $3, $4, $5)",
        )
        .bind(video.id.as_ref().map_or_else(new_id, |v| v.as_str().to_owned()))
        .bind(id.as_str())
        .bind(video.title.as_ref().map(|t| t.as_str()))
        .bind(video.url.as_str())
        .bind(i64::try_from(position).unwrap_or(i64::MAX))
        .execute(&mut *conn)
        .await?;
    }
    Ok(())
}

/// Records the staged PDFs as the material's, after its last PDF.
pub(super) async fn append_pdfs(
    conn: &mut AnyConnection,
    id: &Id<Material>,
    pdfs: &[StagedFile],
    now: i64,
    file_store_max_bytes: Option<u64>,
) -> Result<()> {
    if pdfs.is_empty() {
        return Ok(());
    }
    let last: i64 = sqlx::query_scalar(
        "SELECT CAST(COALESCE(MAX(position), -1) AS BIGINT) FROM material_pdfs WHERE material_id = $1",
    )
    .bind(id.as_str())
    .fetch_one(&mut *conn)
    .await?;
    for (offset, file) in (1i64..).zip(pdfs) {
        storage::insert_stored_file(&mut *conn, file, file_store_max_bytes).await?;
        sqlx::query(
            "INSERT INTO material_pdfs (id, material_id, file_id, title, size, position, created_at)
             VALUES ($1, $2, $3, $4, $5, $6, $7)",
        )
        .bind(new_id())
        .bind(id.as_str())
        .bind(file.id())
        .bind(pdf_title(file.original_name()))
        .bind(i64::try_from(file.size()).unwrap_or(i64::MAX))
        .bind(last + offset)
        .bind(now)
        .execute(&mut *conn)
        .await?;
    }
    Ok(())
}

/// Removes one PDF of the material; the storage key of its bytes when no other record
/// uses the file (to remove after the commit).
pub(super) async fn remove_pdf(
    conn: &mut AnyConnection,
    id: &Id<Material>,
    pdf_id: &Id<MaterialPdf>,
    file_id: &str,
) -> Result<Option<String>> {
    sqlx::query("DELETE FROM material_pdfs WHERE id = $1 AND material_id = $2")
        .bind(pdf_id.as_str())
        .bind(id.as_str())
        .execute(&mut *conn)
        .await?;
    storage::delete_unused_file(conn, file_id).await
}

/// Deletes the material with its assignments, PDFs and videos; the storage keys of the
/// files no other record uses (to remove after the commit).
pub(super) async fn delete(conn: &mut AnyConnection, id: &Id<Material>) -> Result<Vec<String>> {
    let file_ids: Vec<String> =
        sqlx::query_scalar("SELECT file_id FROM material_pdfs WHERE material_id = $1")
            .bind(id.as_str())
            .fetch_all(&mut *conn)
            .await?;
    // Assignments, PDF and video rows go with it (ON DELETE CASCADE).
    sqlx::query("DELETE FROM education_materials WHERE id = $1")
        .bind(id.as_str())
        .execute(&mut *conn)
        .await?;
    let mut keys = Vec::new();
    for file_id in &file_ids {
        if let Some(key) = storage::delete_unused_file(conn, file_id).await? {
            keys.push(key);
        }
    }
    Ok(keys)
}

/// Assigns the material to the user; false when it already was.
pub(super) async fn assign(
    conn: &mut AnyConnection,
    id: &Id<Material>,
    user_id: &str,
    now: i64,
    by: Option<&str>,
) -> Result<bool> {
    let inserted = sqlx::query(
        "INSERT INTO material_assignments (material_id, user_id, assigned_at, assigned_by)
         VALUES ($1, $2, $3, $4) ON CONFLICT (material_id, user_id) DO NOTHING",
    )
    .bind(id.as_str())
    .bind(user_id)
    .bind(now)
    .bind(by)
    .execute(conn)
    .await?
    .rows_affected();
    Ok(inserted > 0)
}

/// Takes the material from the user; false when it was not assigned.
pub(super) async fn unassign(
    conn: &mut AnyConnection,
    id: &Id<Material>,
    user_id: &Id<User>,
) -> Result<bool> {
    let removed =
        sqlx::query("DELETE FROM material_assignments WHERE material_id = $1 AND user_id = $2")
            .bind(id.as_str())
            .bind(user_id.as_str())
            .execute(conn)
            .await?
            .rows_affected();
    Ok(removed > 0)
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pdf_titles_drop_the_extension() {
        assert_eq!(pdf_title("Workbook.pdf"), "Workbook");
        assert_eq!(pdf_title("notes.PDF"), "notes");
        assert_eq!(pdf_title(".pdf"), ".pdf");
        assert_eq!(pdf_title("scan"), "scan");
    }
}
