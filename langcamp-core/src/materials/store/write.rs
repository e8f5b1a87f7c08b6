//! The writes of materials, each a [`StaffWrite`]: it runs with its audit entry as one
//! piece of write work, so on SQLite it shares the group commit's transaction with the
//! writes beside it.
//!
//! What a piece cannot do waits for the operation, outside it: the staged PDFs' bytes are
//! kept (or removed) once the piece has committed (or failed), and the bytes of the files
//! a piece let go of are removed after its commit (it answers their storage keys).

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use super::{load, require};
use crate::audit::{Entries, Entry, Staff, StaffWrite, Target};
use crate::domain::error::{Error, Result};
use crate::domain::id::new_id;
use crate::domain::time::Timestamp;
use crate::domain::validate::Problems;
use crate::domain::{Id, LanguageTag};
use crate::mail_templates::{MailBook, MailValues};
use crate::materials::input::{Description, MaterialChange, NewMaterial, Title, Video};
use crate::materials::{MAX_PDFS, Material, MaterialPdf, MaterialVideo};
use crate::platform::db::{Arg, Locks, Row as _, WriteConn};
use crate::platform::mail::MailKind;
use crate::storage::{self, FileRecord};
use crate::users::{self, User};
use crate::webhooks::Announcement;

/// The material's own row.
async fn insert<C: WriteConn>(
    conn: &mut C,
    id: &Id<Material>,
    new: &NewMaterial,
    now: i64,
) -> Result<()> {
    conn.exec(
        "INSERT INTO education_materials (id, title, description, locale, target_language, level, created_at, updated_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $7)",
        &[
            Arg::Text(id.as_str()),
            Arg::Text(new.title.as_str()),
            Arg::OptText(new.description.as_ref().map(|d| d.as_str())),
            Arg::OptText(new.locale.as_ref().map(LanguageTag::as_str)),
            Arg::OptText(new.target_language.as_ref().map(LanguageTag::as_str)),
            Arg::OptText(new.level.map(|l| l.as_str())),
            Arg::Int(now),
        ],
    )
    .await?;
    Ok(())
}

/// The material's scalar fields after a change, all of them.
struct Fields {
    title: String,
    description: Option<String>,
    locale: Option<String>,
    target_language: Option<String>,
    level: Option<String>,
}

async fn update<C: WriteConn>(
    conn: &mut C,
    id: &Id<Material>,
    fields: &Fields,
    now: i64,
) -> Result<()> {
    conn.exec(
        "UPDATE education_materials SET title = $1, description = $2, locale = $3,
                target_language = $4, level = $5, updated_at = $6
         WHERE id = $7",
        &[
            Arg::Text(&fields.title),
            Arg::OptText(fields.description.as_deref()),
            Arg::OptText(fields.locale.as_deref()),
            Arg::OptText(fields.target_language.as_deref()),
            Arg::OptText(fields.level.as_deref()),
            Arg::Int(now),
            Arg::Text(id.as_str()),
        ],
    )
    .await?;
    Ok(())
}

/// The ids of the material's videos.
async fn video_ids<C: WriteConn>(
    conn: &mut C,
    id: &Id<Material>,
) -> Result<HashSet<Id<MaterialVideo>>> {
    let rows = conn
        .fetch_all(
            "SELECT id FROM material_videos WHERE material_id = $1",
            &[Arg::Text(id.as_str())],
        )
        .await?;
    rows.iter()
        .map(|row| Ok(Id::from(row.text("id")?)))
        .collect()
}

/// The material's PDFs: PDF id to stored file id.
async fn pdf_files<C: WriteConn>(
    conn: &mut C,
    id: &Id<Material>,
) -> Result<HashMap<Id<MaterialPdf>, String>> {
    let rows = conn
        .fetch_all(
            "SELECT id, file_id FROM material_pdfs WHERE material_id = $1",
            &[Arg::Text(id.as_str())],
        )
        .await?;
    rows.iter()
        .map(|row| Ok((Id::from(row.text("id")?), row.text("file_id")?)))
        .collect()
}

/// Replaces the material's videos by `videos`, in their order.
async fn replace_videos<C: WriteConn>(
    conn: &mut C,
    id: &Id<Material>,
    videos: &[Video],
) -> Result<()> {
    conn.exec(
        "DELETE FROM material_videos WHERE material_id = $1",
        &[Arg::Text(id.as_str())],
    )
    .await?;
    insert_videos(conn, id, videos).await
}

/// Adds `videos` to the material, in their order; a video without an id gets a new one.
async fn insert_videos<C: WriteConn>(
    conn: &mut C,
    id: &Id<Material>,
    videos: &[Video],
) -> Result<()> {
    for (position, video) in (0i64..).zip(videos) {
        let video_id = video
            .id
            .as_ref()
            .map_or_else(new_id, |v| v.as_str().to_owned());
        conn.exec(
            "INSERT INTO material_videos (id, material_id, title, url, position) VALUES ($1, $2, $3, $4, $5)",
            &[
                Arg::Text(&video_id),
                Arg::Text(id.as_str()),
                Arg::OptText(video.title.as_ref().map(|t| t.as_str())),
                Arg::Text(video.url.as_str()),
                Arg::Int(position),
            ],
        )
        .await?;
    }
    Ok(())
}

/// Records the staged PDFs as the material's, after its last PDF.
async fn append_pdfs<C: WriteConn>(
    conn: &mut C,
    id: &Id<Material>,
    pdfs: &[FileRecord],
    by: &Staff,
) -> Result<()> {
    let max_bytes = by.app.config().file_store_max_bytes;
    if pdfs.is_empty() {
        return Ok(());
    }
    let last = conn
        .fetch_first(
            "SELECT CAST(COALESCE(MAX(position), -1) AS BIGINT) AS last FROM material_pdfs
             WHERE material_id = $1",
            &[Arg::Text(id.as_str())],
        )
        .await?
        .ok_or_else(|| Error::internal("an aggregate returned no row"))?
        .int("last")?;
    for (offset, file) in (1i64..).zip(pdfs) {
        storage::insert_stored_file(conn, file, max_bytes).await?;
        conn.exec(
            "INSERT INTO material_pdfs (id, material_id, file_id, title, size, position, created_at)
             VALUES ($1, $2, $3, $4, $5, $6, $7)",
            &[
                Arg::Text(&new_id()),
                Arg::Text(id.as_str()),
                Arg::Text(file.id()),
                Arg::Text(&pdf_title(file.original_name())),
                Arg::Int(i64::try_from(file.size()).unwrap_or(i64::MAX)),
                Arg::Int(last + offset),
                Arg::Int(by.now),
            ],
        )
        .await?;
    }
    Ok(())
}

/// Removes one PDF of the material; the storage key of its bytes when no other record
/// uses the file (to remove after the commit).
async fn remove_pdf<C: WriteConn>(
    conn: &mut C,
    id: &Id<Material>,
    pdf_id: &Id<MaterialPdf>,
    file_id: &str,
) -> Result<Option<String>> {
    conn.exec(
        "DELETE FROM material_pdfs WHERE id = $1 AND material_id = $2",
        &[Arg::Text(pdf_id.as_str()), Arg::Text(id.as_str())],
    )
    .await?;
    storage::delete_unused_file(conn, file_id).await
}

/// Deletes the material with its assignments, PDFs and videos; the storage keys of the
/// files no other record uses (to remove after the commit).
async fn delete<C: WriteConn>(conn: &mut C, id: &Id<Material>) -> Result<Vec<String>> {
    let file_ids = conn
        .fetch_all(
            "SELECT file_id FROM material_pdfs WHERE material_id = $1",
            &[Arg::Text(id.as_str())],
        )
        .await?
        .iter()
        .map(|row| row.text("file_id"))
        .collect::<Result<Vec<_>>>()?;
    // Assignments, PDF and video rows go with it (ON DELETE CASCADE).
    conn.exec(
        "DELETE FROM education_materials WHERE id = $1",
        &[Arg::Text(id.as_str())],
    )
    .await?;
    let mut keys = Vec::new();
    for file_id in &file_ids {
        if let Some(key) = storage::delete_unused_file(conn, file_id).await? {
            keys.push(key);
        }
    }
    Ok(keys)
}

/// A material as the audit trail names it: by its title.
fn target(material: &Material) -> Target {
    Target::record("material", &material.id, &material.title)
}

/// `POST /education-materials`: the new material with its videos and the staged PDFs'
/// records.
pub(in crate::materials) struct Create(pub NewMaterial, pub Vec<FileRecord>);

impl StaffWrite for Create {
    type Output = Material;

    async fn run<C: WriteConn>(self, conn: &mut C, by: &Staff) -> Result<(Material, Entries)> {
        let Create(new, pdfs) = self;
        let id = &Id::new();
        insert(conn, id, &new, by.now).await?;
        insert_videos(conn, id, &new.videos).await?;
        append_pdfs(conn, id, &pdfs, by).await?;
        let material = load(&by.app, conn, id).await?;
        let entry = Entry::new("material.created", target(&material));
        Ok((material, entry.into()))
    }
}

/// `PATCH /education-materials/{id}`: changes fields, replaces the videos when given,
/// appends the staged PDFs' records and removes those in `removePdfIds`. Answers the
/// material and the storage keys of the files it let go of.
pub(in crate::materials) struct Update(pub Id<Material>, pub MaterialChange, pub Vec<FileRecord>);

impl StaffWrite for Update {
    type Output = (Material, Vec<String>);

    async fn run<C: WriteConn>(
        self,
        conn: &mut C,
        by: &Staff,
    ) -> Result<((Material, Vec<String>), Entries)> {
        let Update(id, change, pdfs) = self;
        let id = &id;
        let current = require(conn, id).await?;
        let before = load(&by.app, conn, id).await?;
        let video_ids = video_ids(conn, id).await?;
        let pdf_files = pdf_files(conn, id).await?;
        let removing = check_names(&change, &video_ids, &pdf_files, pdfs.len())?;

        let fields = Fields {
            title: change.title.map_or(current.title, Title::into_string),
            description: change
                .description
                .map_or(current.description, |d| d.map(Description::into_string)),
            locale: change
                .locale
                .map_or(current.locale, |l| l.map(LanguageTag::into_string)),
            target_language: change
                .target_language
                .map_or(current.target_language, |l| l.map(LanguageTag::into_string)),
            level: change
                .level
                .map_or(current.level, |l| l.map(|l| l.as_str().to_owned())),
        };
        update(conn, id, &fields, by.now).await?;
        if let Some(videos) = &change.videos {
            replace_videos(conn, id, videos).await?;
        }
        let mut removed_keys = Vec::new();
        for pdf_id in &removing {
            if let Some(file_id) = pdf_files.get(pdf_id)
                && let Some(key) = remove_pdf(conn, id, pdf_id, file_id).await?
            {
                removed_keys.push(key);
            }
        }
        append_pdfs(conn, id, &pdfs, by).await?;
        let material = load(&by.app, conn, id).await?;
        let entry =
            Entry::new("material.updated", target(&material)).with_changes(&before, &material);
        Ok(((material, removed_keys), entry.into()))
    }
}

/// What the change names must be the material's: one message per problem. The PDFs to
/// remove, each once.
fn check_names(
    change: &MaterialChange,
    video_ids: &HashSet<Id<MaterialVideo>>,
    pdf_files: &HashMap<Id<MaterialPdf>, String>,
    new_pdfs: usize,
) -> Result<Vec<Id<MaterialPdf>>> {
    let mut problems = Problems::new();
    let mut removing = Vec::new();
    for pdf_id in &change.remove_pdf_ids {
        if !pdf_files.contains_key(pdf_id) {
            problems.add(format!(
                "removePdfIds: {pdf_id:?} is not a PDF of this material"
            ));
        } else if !removing.contains(pdf_id) {
            removing.push(pdf_id.clone());
        }
    }
    if pdf_files.len() - removing.len() + new_pdfs > MAX_PDFS {
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
    Ok(removing)
}

/// `DELETE /education-materials/{id}`: the material, its assignments and its PDFs'
/// records. Answers the storage keys of the files no other record uses.
pub(in crate::materials) struct Delete(pub Id<Material>);

impl StaffWrite for Delete {
    type Output = Vec<String>;

    async fn run<C: WriteConn>(self, conn: &mut C, _by: &Staff) -> Result<(Vec<String>, Entries)> {
        let material = require(conn, &self.0).await?;
        let keys = delete(conn, &self.0).await?;
        Ok((
            keys,
            Entry::new("material.deleted", target(&material)).into(),
        ))
    }
}

/// `POST /education-materials/{id}/assign`: all or nothing. Any unknown user is 404
/// (naming it) and nothing is assigned; each newly assigned user gets one mail, queued in
/// the same piece. Answers how many were newly assigned and how many already were.
pub(in crate::materials) struct Assign {
    pub id: Id<Material>,
    pub user_ids: Vec<String>,
    /// The mail templates, read before the piece.
    pub book: Arc<MailBook>,
    /// The `material.assigned` deliveries, one for each user newly assigned.
    pub announce: Option<Announcement>,
}

/// What a `material.assigned` delivery carries.
#[derive(serde::Serialize)]
#[serde(rename_all = "camelCase")]
struct AssignmentNotice<'a> {
    material_id: &'a str,
    user_id: &'a str,
    assigned_at: Timestamp,
}

impl StaffWrite for Assign {
    type Output = (u64, u64);

    async fn run<C: WriteConn>(self, conn: &mut C, by: &Staff) -> Result<((u64, u64), Entries)> {
        let material = require(conn, &self.id).await?;
        conn.hold_users(&self.user_ids).await?;
        let mut users: Vec<User> = Vec::with_capacity(self.user_ids.len());
        let mut unknown: Vec<&str> = Vec::new();
        for user_id in &self.user_ids {
            match users::find_user(conn, user_id).await? {
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

        let link = by.app.material_link(self.id.as_str());
        let (mut assigned, mut already_assigned) = (0u64, 0u64);
        let mut newly: Vec<&str> = Vec::new();
        for user in &users {
            if !assign(conn, &self.id, &user.id, by.now, by.actor.user_id()).await? {
                already_assigned += 1;
                continue;
            }
            assigned += 1;
            newly.push(&user.id);
            let values = MailValues::MaterialAssigned {
                name: user.name.clone().unwrap_or_default(),
                material_title: material.title.clone(),
                link: link.clone(),
            };
            let mail = self
                .book
                .compose(&user.email, Some(&user.locale), &values)?;
            by.app
                .queue_mail(conn, MailKind::MaterialAssignment, &mail, None)
                .await?;
            if let Some(announce) = &self.announce {
                let notice = AssignmentNotice {
                    material_id: self.id.as_str(),
                    user_id: &user.id,
                    assigned_at: Timestamp::from_millis(by.now),
                };
                announce.queue(conn, by.now, &notice).await?;
            }
        }
        let entry = Entry::new("material.assigned", target(&material))
            .with_change_map(serde_json::json!({ "assignedTo": { "from": null, "to": newly } }));
        Ok(((assigned, already_assigned), entry.into()))
    }
}

/// Assigns the material to the user; false when it already was.
async fn assign<C: WriteConn>(
    conn: &mut C,
    id: &Id<Material>,
    user_id: &str,
    now: i64,
    by: Option<&str>,
) -> Result<bool> {
    let inserted = conn
        .exec(
            "INSERT INTO material_assignments (material_id, user_id, assigned_at, assigned_by)
             VALUES ($1, $2, $3, $4) ON CONFLICT (material_id, user_id) DO NOTHING",
            &[
                Arg::Text(id.as_str()),
                Arg::Text(user_id),
                Arg::Int(now),
                Arg::OptText(by),
            ],
        )
        .await?;
    Ok(inserted > 0)
}

/// `DELETE /education-materials/{id}/assign/{userId}`: 404 when the material is not
/// assigned to that user.
pub(in crate::materials) struct Unassign {
    pub id: Id<Material>,
    pub user_id: Id<User>,
}

impl StaffWrite for Unassign {
    type Output = ();

    async fn run<C: WriteConn>(self, conn: &mut C, _by: &Staff) -> Result<((), Entries)> {
        let material = require(conn, &self.id).await?;
        let removed = conn
            .exec(
                "DELETE FROM material_assignments WHERE material_id = $1 AND user_id = $2",
                &[
                    Arg::Text(self.id.as_str()),
                    Arg::Text(self.user_id.as_str()),
                ],
            )
            .await?;
        if removed == 0 {
            return Err(Error::NotFound(
                "this material is not assigned to that user".into(),
            ));
        }
        let entry = Entry::new("material.unassigned", target(&material)).with_change_map(
            serde_json::json!({ "assignedTo": { "from": self.user_id.as_str(), "to": null } }),
        );
        Ok(((), entry.into()))
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
