//! The SQL of materials: a material with its PDFs and videos, pages and assigned lists;
//! the writes are in [`write`]. The child rows' SQL is written once (`pdfs_of!`,
//! `videos_of!`), for one material by its id or for a whole list by the listed
//! materials' ids, not per material.

mod write;

pub(super) use self::write::{Assign, Create, Delete, Unassign, Update};

use std::collections::HashMap;

use sqlx::AnyConnection;

use super::{Material, MaterialPdf, MaterialVideo};
use crate::Langcamp;
use crate::domain::error::{Error, Result};
use crate::domain::page::{PageRequest, UNPAGED_CAP};
use crate::domain::time::Timestamp;
use crate::domain::{Id, LanguageTag};
use crate::platform::db::listing::{self, Conditions, Paged};
use crate::platform::db::{Arg, Row, WriteConn, by_id};
use crate::users::User;

/// The columns of `education_materials` every material query selects, in this order.
macro_rules! material_columns {
    () => {
        "m.id, m.title, m.description, m.locale, m.target_language, m.level, m.created_at, m.updated_at"
    };
}

/// The admin list: materials newest first, their keys found in an index before their
/// rows are read.
const PAGED: Paged = Paged {
    select: concat!(
        "SELECT ",
        material_columns!(),
        " FROM education_materials m"
    ),
    joined: None,
    from: "education_materials m",
    key: "m.id",
    order: "m.created_at DESC, m.id DESC",
};

/// The PDFs of the materials whose id follows (`= $1`, or `IN (...)`).
macro_rules! pdfs_of {
    () => {
        "SELECT id, material_id, file_id, title, size FROM material_pdfs WHERE material_id"
    };
}

/// The videos of the materials whose id follows (`= $1`, or `IN (...)`).
macro_rules! videos_of {
    () => {
        "SELECT id, material_id, title, url FROM material_videos WHERE material_id"
    };
}

/// Children in the order they were given.
macro_rules! child_order {
    () => {
        "ORDER BY material_id, position, id"
    };
}

fn material_from_row(row: &impl Row) -> Result<Material> {
    Ok(Material {
        id: row.text("id")?,
        title: row.text("title")?,
        description: row.opt_text("description")?,
        locale: row.opt_text("locale")?,
        target_language: row.opt_text("target_language")?,
        level: row.opt_text("level")?,
        pdfs: Vec::new(),
        videos: Vec::new(),
        created_at: Timestamp::from_millis(row.int("created_at")?),
        updated_at: Timestamp::from_millis(row.int("updated_at")?),
    })
}

pub(super) fn not_found() -> Error {
    Error::not_found("education material")
}

/// The material's own row (no PDFs or videos yet).
async fn find<C: WriteConn>(conn: &mut C, id: &Id<Material>) -> Result<Option<Material>> {
    let select = concat!(
        "SELECT ",
        material_columns!(),
        " FROM education_materials m WHERE m.id = $1"
    );
    let row = by_id::find(conn, select, id.as_str()).await?;
    row.as_ref().map(material_from_row).transpose()
}

/// The material's own row, or 404.
async fn require<C: WriteConn>(conn: &mut C, id: &Id<Material>) -> Result<Material> {
    find(conn, id).await?.ok_or_else(not_found)
}

/// One material with its PDFs and videos, or 404.
pub(super) async fn load<C: WriteConn>(
    app: &Langcamp,
    conn: &mut C,
    id: &Id<Material>,
) -> Result<Material> {
    let mut material = require(conn, id).await?;
    let of = [Arg::Text(id.as_str())];
    let pdfs = conn
        .fetch_all(concat!(pdfs_of!(), " = $1 ", child_order!()), &of)
        .await?;
    let videos = conn
        .fetch_all(concat!(videos_of!(), " = $1 ", child_order!()), &of)
        .await?;
    attach(app, std::slice::from_mut(&mut material), &pdfs, &videos)?;
    Ok(material)
}

/// Fills in the PDFs and videos of `materials`: two queries for the whole list.
async fn attach_children(
    app: &Langcamp,
    conn: &mut AnyConnection,
    materials: &mut [Material],
) -> Result<()> {
    let ids: Vec<&str> = materials.iter().map(|m| m.id.as_str()).collect();
    let pdfs = listing::rows_of(conn, pdfs_of!(), &ids, child_order!()).await?;
    let videos = listing::rows_of(conn, videos_of!(), &ids, child_order!()).await?;
    attach(app, materials, &pdfs, &videos)
}

/// Puts PDF and video rows (each in their order) under their materials.
fn attach<R: Row>(
    app: &Langcamp,
    materials: &mut [Material],
    pdf_rows: &[R],
    video_rows: &[R],
) -> Result<()> {
    let mut pdfs: HashMap<String, Vec<MaterialPdf>> = HashMap::new();
    for row in pdf_rows {
        let file_id = row.text("file_id")?;
        pdfs.entry(row.text("material_id")?)
            .or_default()
            .push(MaterialPdf {
                id: row.text("id")?,
                title: row.opt_text("title")?,
                url: app.file_url(&file_id),
                file_id,
                size: u64::try_from(row.int("size")?).unwrap_or(0),
            });
    }
    let mut videos: HashMap<String, Vec<MaterialVideo>> = HashMap::new();
    for row in video_rows {
        videos
            .entry(row.text("material_id")?)
            .or_default()
            .push(MaterialVideo {
                id: row.text("id")?,
                title: row.opt_text("title")?,
                url: row.text("url")?,
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
    let mut conditions = Conditions::default();
    conditions.and_text("m.locale = ?", locale.map(LanguageTag::as_str));
    // A school holds hundreds of materials, not millions: counted in the locale's index.
    let total = conditions.count(conn, "education_materials m").await?;
    let rows = PAGED.page_by_keys(conn, &conditions, page, total).await?;
    let mut list = rows
        .iter()
        .map(material_from_row)
        .collect::<Result<Vec<_>>>()?;
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
        assigned_at.push(Timestamp::from_millis(row.int("assigned_at")?));
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
