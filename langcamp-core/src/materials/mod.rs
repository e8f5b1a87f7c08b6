//! Education materials (CONTRACT §7): sets of PDF documents and videos that admins assign
//! to users, who are told by mail and then read what was assigned to them.
//!
//! PDFs arrive as staged files (see [`crate::storage`]): their bytes are already in the
//! file store, and the material's transaction records them. If that transaction fails,
//! the staged bytes are removed again; if it removes PDFs (an update, a delete), their
//! bytes are removed after it commits.
//!
//! Here: the operations and what they answer. [`input`] holds what clients send and the
//! validated commands the operations take, `store` the SQL, `mail` the assignment mail.

mod input;
mod store;

use std::collections::HashSet;

use serde::Serialize;
use utoipa::ToSchema;

pub use self::input::{
    AssignInput, Assignment, Description, MaterialChange, MaterialInput, MaterialUpdate,
    NewMaterial, Title, Video, VideoInput, VideoTitle,
};
use crate::Langcamp;
use crate::audit::{self, Entry, Target};
use crate::domain::Deleted;
use crate::domain::actor::{Actor, Role};
use crate::domain::error::{Error, Result};
use crate::domain::page::{Page, PageRequest};
use crate::domain::time::Timestamp;
use crate::domain::{Id, LanguageTag};
use crate::mail_templates::MailValues;
use crate::platform::db::Locks;
use crate::platform::mail::MailKind;
use crate::storage::{FileType, StagedFile};
use crate::users::{self, User};

/// At most this many PDFs, and this many videos, per material.
pub const MAX_PDFS: usize = 50;
pub const MAX_VIDEOS: usize = 50;
/// At most this many users per assignment request.
pub const MAX_ASSIGN: usize = 1000;

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

impl Material {
    /// The material's id, typed.
    pub fn typed_id(&self) -> Id<Material> {
        Id::from(&self.id)
    }
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

fn too_many_pdfs() -> Error {
    Error::invalid(format!("a material holds at most {MAX_PDFS} PDFs"))
}

fn too_many_videos() -> Error {
    Error::invalid(format!("videos may hold at most {MAX_VIDEOS} items"))
}

impl Langcamp {
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
    #[tracing::instrument(level = "debug", skip_all)]
    pub async fn create_material(
        &self,
        actor: &Actor,
        new: NewMaterial,
        pdfs: Vec<StagedFile>,
    ) -> Result<Material> {
        let outcome = self.insert_material(actor, new, &pdfs).await;
        self.settle_staged(outcome, pdfs).await
    }

    async fn insert_material(
        &self,
        actor: &Actor,
        new: NewMaterial,
        pdfs: &[StagedFile],
    ) -> Result<Material> {
        actor.require(Role::Admin)?;
        check_pdfs(pdfs)?;
        if pdfs.len() > MAX_PDFS {
            return Err(too_many_pdfs());
        }
        if new.videos.len() > MAX_VIDEOS {
            return Err(too_many_videos());
        }
        // A new material has no videos yet whose ids a video could keep.
        if let Some(i) = new.videos.iter().position(|v| v.id.is_some()) {
            return Err(Error::invalid(format!(
                "videos[{i}].id does not name a video of this material"
            )));
        }
        let now = self.clock().now_ms();
        let id = Id::new();
        let mut tx = self.db().begin().await?;
        store::insert(&mut tx, &id, &new, now).await?;
        store::insert_videos(&mut tx, &id, &new.videos).await?;
        let max_bytes = self.config().file_store_max_bytes;
        store::append_pdfs(&mut tx, &id, pdfs, now, max_bytes).await?;
        let material = store::load(self, &mut tx, &id).await?;
        let entry = Entry::new("material.created", material_target(&material));
        audit::record(&mut tx, self, actor, entry).await?;
        tx.commit().await?;
        Ok(material)
    }

    /// `PATCH /education-materials/{id}` (admin): changes fields, replaces the videos when
    /// given, appends the staged PDFs and removes those in `removePdfIds`.
    #[tracing::instrument(level = "debug", skip_all)]
    pub async fn update_material(
        &self,
        actor: &Actor,
        id: &Id<Material>,
        change: MaterialChange,
        new_pdfs: Vec<StagedFile>,
    ) -> Result<Material> {
        let outcome = self.change_material(actor, id, change, &new_pdfs).await;
        let (material, removed) = self.settle_staged(outcome, new_pdfs).await?;
        self.remove_stored_bytes(removed).await;
        Ok(material)
    }

    async fn change_material(
        &self,
        actor: &Actor,
        id: &Id<Material>,
        change: MaterialChange,
        new_pdfs: &[StagedFile],
    ) -> Result<(Material, Vec<String>)> {
        actor.require(Role::Admin)?;
        check_pdfs(new_pdfs)?;
        if change.videos.as_ref().is_some_and(|v| v.len() > MAX_VIDEOS) {
            return Err(too_many_videos());
        }
        let now = self.clock().now_ms();
        let mut tx = self.db().begin().await?;
        let current = store::require(&mut tx, id).await?;
        let before = store::load(self, &mut tx, id).await?;
        let video_ids = store::video_ids(&mut tx, id).await?;
        let pdf_files = store::pdf_files(&mut tx, id).await?;

        // What the change names must be the material's: one message per problem.
        let mut problems = crate::domain::validate::Problems::new();
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

        let title = change.title.map_or(current.title, Title::into_string);
        let description = change
            .description
            .map_or(current.description, |d| d.map(Description::into_string));
        let locale = change
            .locale
            .map_or(current.locale, |l| l.map(LanguageTag::into_string));
        let target_language = change
            .target_language
            .map_or(current.target_language, |l| l.map(LanguageTag::into_string));
        let level = change
            .level
            .map_or(current.level, |l| l.map(|l| l.as_str().to_owned()));
        let fields = store::Fields {
            title: &title,
            description: description.as_deref(),
            locale: locale.as_deref(),
            target_language: target_language.as_deref(),
            level: level.as_deref(),
        };
        store::update(&mut tx, id, fields, now).await?;
        if let Some(videos) = &change.videos {
            store::replace_videos(&mut tx, id, videos).await?;
        }
        let mut removed_keys = Vec::new();
        for pdf_id in &removing {
            if let Some(file_id) = pdf_files.get(pdf_id)
                && let Some(key) = store::remove_pdf(&mut tx, id, pdf_id, file_id).await?
            {
                removed_keys.push(key);
            }
        }
        let max_bytes = self.config().file_store_max_bytes;
        store::append_pdfs(&mut tx, id, new_pdfs, now, max_bytes).await?;
        let material = store::load(self, &mut tx, id).await?;
        let entry = Entry::new("material.updated", material_target(&material))
            .with_changes(&before, &material);
        audit::record(&mut tx, self, actor, entry).await?;
        tx.commit().await?;
        Ok((material, removed_keys))
    }

    /// `DELETE /education-materials/{id}` (admin): the material, its assignments and its
    /// PDFs, records and bytes.
    #[tracing::instrument(level = "debug", skip_all)]
    pub async fn delete_material(&self, actor: &Actor, id: &Id<Material>) -> Result<Deleted> {
        actor.require(Role::Admin)?;
        let mut tx = self.db().begin().await?;
        let material = store::require(&mut tx, id).await?;
        let keys = store::delete(&mut tx, id).await?;
        let target = Target::record("material", id.as_str(), &material.title);
        audit::record(&mut tx, self, actor, Entry::new("material.deleted", target)).await?;
        tx.commit().await?;
        self.remove_stored_bytes(keys).await;
        Ok(Deleted::from(id))
    }

    /// `GET /education-materials` (admin): newest first, optionally of one locale.
    #[tracing::instrument(level = "debug", skip_all)]
    pub async fn list_materials(
        &self,
        actor: &Actor,
        locale: Option<&LanguageTag>,
        page: PageRequest,
    ) -> Result<Page<Material>> {
        actor.require(Role::Admin)?;
        let mut snapshot = self.db().read_snapshot().await?;
        let (list, total) = store::list(self, &mut snapshot, locale, page).await?;
        Ok(Page::new(list, page, total))
    }

    /// `GET /education-materials/{id}`: admins see any material, users those assigned to
    /// them (any other is 404, as if it did not exist).
    #[tracing::instrument(level = "debug", skip_all)]
    pub async fn get_material(&self, actor: &Actor, id: &Id<Material>) -> Result<Material> {
        actor.require(Role::User)?;
        let mut snapshot = self.db().read_snapshot().await?;
        if !actor.is_admin() {
            let caller = actor.caller()?;
            let user_id = Id::from(&caller.user_id);
            if !store::is_assigned(&mut snapshot, id, &user_id).await? {
                return Err(store::not_found());
            }
        }
        store::load(self, &mut snapshot, id).await
    }

    /// `GET /education-materials/my-materials`: the caller's materials, newest assignment first.
    #[tracing::instrument(level = "debug", skip_all)]
    pub async fn my_materials(&self, actor: &Actor) -> Result<Vec<AssignedMaterial>> {
        let caller = actor.caller()?;
        let mut snapshot = self.db().read_snapshot().await?;
        let (materials, at) =
            store::assigned_to(self, &mut snapshot, &Id::from(&caller.user_id)).await?;
        Ok(assigned(materials, at))
    }

    /// `GET /education-materials/user/{userId}` (admin): a user's materials, newest first.
    #[tracing::instrument(level = "debug", skip_all)]
    pub async fn user_materials(
        &self,
        actor: &Actor,
        user_id: &Id<User>,
    ) -> Result<Vec<AssignedMaterial>> {
        actor.require(Role::Admin)?;
        let mut snapshot = self.db().read_snapshot().await?;
        if users::find_user(&mut snapshot, user_id.as_str())
            .await?
            .is_none()
        {
            return Err(Error::not_found("user"));
        }
        let (materials, at) = store::assigned_to(self, &mut snapshot, user_id).await?;
        Ok(assigned(materials, at))
    }

    /// `POST /education-materials/{id}/assign` (admin): all or nothing. Any unknown user
    /// is 404 (naming it) and nothing is assigned; each newly assigned user gets one mail,
    /// queued in the same transaction.
    #[tracing::instrument(level = "debug", skip_all)]
    pub async fn assign_material(
        &self,
        actor: &Actor,
        id: &Id<Material>,
        assignment: &Assignment,
    ) -> Result<AssignResult> {
        actor.require(Role::Admin)?;
        let user_ids: Vec<String> = assignment
            .user_ids()
            .iter()
            .map(|u| u.as_str().to_owned())
            .collect();
        let now = self.clock().now_ms();
        let book = self.mail_book().await?;
        let mut tx = self.db().begin().await?;
        let material = store::require(&mut tx, id).await?;
        tx.hold_users(&user_ids).await?;
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

        let link = self.material_link(id.as_str());
        let (mut assigned, mut already_assigned) = (0u64, 0u64);
        let mut newly: Vec<&str> = Vec::new();
        for user in &users {
            if !store::assign(&mut tx, id, &user.id, now, actor.user_id()).await? {
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
            let mail = book.compose(&user.email, Some(&user.locale), &values)?;
            crate::platform::mail::enqueue(
                &mut tx,
                self,
                MailKind::MaterialAssignment,
                &mail,
                None,
            )
            .await?;
        }
        let target = Target::record("material", id.as_str(), &material.title);
        let entry = Entry::new("material.assigned", target)
            .with_change_map(serde_json::json!({ "assignedTo": { "from": null, "to": newly } }));
        audit::record(&mut tx, self, actor, entry).await?;
        tx.commit().await?;
        if assigned > 0 {
            self.wake_mail_worker();
        }
        Ok(AssignResult {
            material_id: id.as_str().to_owned(),
            assigned,
            already_assigned,
        })
    }

    /// `DELETE /education-materials/{id}/assign/{userId}` (admin).
    #[tracing::instrument(level = "debug", skip_all)]
    pub async fn unassign_material(
        &self,
        actor: &Actor,
        id: &Id<Material>,
        user_id: &Id<User>,
    ) -> Result<Unassigned> {
        actor.require(Role::Admin)?;
        let mut tx = self.db().begin().await?;
        let material = store::require(&mut tx, id).await?;
        if !store::unassign(&mut tx, id, user_id).await? {
            return Err(Error::NotFound(
                "this material is not assigned to that user".into(),
            ));
        }
        let target = Target::record("material", id.as_str(), &material.title);
        let entry = Entry::new("material.unassigned", target).with_change_map(
            serde_json::json!({ "assignedTo": { "from": user_id.as_str(), "to": null } }),
        );
        audit::record(&mut tx, self, actor, entry).await?;
        tx.commit().await?;
        Ok(Unassigned {
            material_id: id.as_str().to_owned(),
            user_id: user_id.as_str().to_owned(),
            unassigned: true,
        })
    }
}

/// A material as the audit trail names it: by its title.
fn material_target(material: &Material) -> Target {
    Target::record("material", &material.id, &material.title)
}

/// Pairs each material with when it was assigned.
/// Every material assigned to `user_id`, newest assignment first, read on `conn` (the
/// personal-data export, `crate::exports`).
pub(crate) async fn assigned_materials(
    app: &Langcamp,
    conn: &mut sqlx::AnyConnection,
    user_id: &Id<User>,
) -> Result<Vec<AssignedMaterial>> {
    let (materials, at) = store::assigned_to(app, conn, user_id).await?;
    Ok(assigned(materials, at))
}

fn assigned(materials: Vec<Material>, at: Vec<Timestamp>) -> Vec<AssignedMaterial> {
    materials
        .into_iter()
        .zip(at)
        .map(|(material, assigned_at)| AssignedMaterial {
            material,
            assigned_at,
        })
        .collect()
}
