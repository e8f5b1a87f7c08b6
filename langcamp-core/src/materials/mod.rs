//! Education materials (CONTRACT §7): sets of PDF documents and videos that admins assign
//! to users, who are told by mail and then read what was assigned to them.
//!
//! Every write is one piece of the group commit with its audit entry (the
//! staff writes of `store/write.rs`). PDFs arrive as staged files
//! (see [`crate::storage`]): their bytes are already in the file store, and the
//! material's piece records them. If that piece fails, the staged bytes are removed
//! again; if it removes PDFs (an update, a delete), their bytes are removed after it
//! commits. Each write runs to its end in a task of its own, whoever waits for it
//! (`run_to_end`): its piece commits even when the caller has stopped waiting (a client
//! hanging up), so what must follow the commit cannot be left to the caller: keeping the
//! staged PDFs (dropped unsettled, their bytes would go, and the committed material would
//! name PDFs that can never be served), removing the bytes of the files it let go of.
//!
//! Here: the operations and what they answer. [`input`] holds what clients send and the
//! validated commands the operations take, `store` the SQL, `mail` the assignment mail.

mod input;
mod store;

use serde::Serialize;
use utoipa::ToSchema;

pub use self::input::{
    AssignInput, Assignment, Description, MaterialChange, MaterialInput, MaterialUpdate,
    NewMaterial, Title, Video, VideoInput, VideoTitle,
};
use crate::Langcamp;
use crate::domain::Deleted;
use crate::domain::actor::{Actor, Role};
use crate::domain::error::{Error, Result};
use crate::domain::page::{Page, PageRequest};
use crate::domain::time::Timestamp;
use crate::domain::{Id, LanguageTag};
use crate::platform::db::run_to_end;
use crate::storage::{FileType, StagedFile};
use crate::users::{self, User};
use crate::webhooks::Event;

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
        let (app, actor) = (self.clone(), actor.clone());
        run_to_end(async move {
            let outcome = app.insert_material(&actor, new, &pdfs).await;
            app.settle_staged(outcome, pdfs).await
        })
        .await
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
        let create = store::Create(new, pdfs.iter().map(StagedFile::record).collect());
        self.staff_write(actor, create, None).await
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
        let (app, actor, id) = (self.clone(), actor.clone(), id.clone());
        run_to_end(async move {
            let outcome = app.change_material(&actor, &id, change, &new_pdfs).await;
            let (material, removed) = app.settle_staged(outcome, new_pdfs).await?;
            app.remove_stored_bytes(removed).await;
            Ok::<_, Error>(material)
        })
        .await
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
        if !id.is_well_formed() {
            return Err(store::not_found());
        }
        let records = new_pdfs.iter().map(StagedFile::record).collect();
        let update = store::Update(id.clone(), change, records);
        self.staff_write(actor, update, None).await
    }

    /// `DELETE /education-materials/{id}` (admin): the material, its assignments and its
    /// PDFs, records and bytes.
    #[tracing::instrument(level = "debug", skip_all)]
    pub async fn delete_material(&self, actor: &Actor, id: &Id<Material>) -> Result<Deleted> {
        actor.require(Role::Admin)?;
        if !id.is_well_formed() {
            return Err(store::not_found());
        }
        let (app, actor, delete) = (self.clone(), actor.clone(), store::Delete(id.clone()));
        run_to_end(async move {
            let keys = app.staff_write(&actor, delete, None).await?;
            app.remove_stored_bytes(keys).await;
            Ok::<_, Error>(())
        })
        .await?;
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
    /// queued in the same piece of write work.
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
        let book = self.mail_book().await?;
        if !id.is_well_formed() {
            return Err(store::not_found());
        }
        let announce = self.announcement(Event::MaterialAssigned).await?;
        let announced = announce.is_some();
        let assign = store::Assign {
            id: id.clone(),
            user_ids,
            book,
            announce,
        };
        let (assigned, already_assigned) = self.staff_write(actor, assign, None).await?;
        if assigned > 0 {
            self.wake_mail_worker();
            self.wake_webhooks(announced);
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
        if !id.is_well_formed() {
            return Err(store::not_found());
        }
        let unassign = store::Unassign {
            id: id.clone(),
            user_id: user_id.clone(),
        };
        self.staff_write(actor, unassign, None).await?;
        Ok(Unassigned {
            material_id: id.as_str().to_owned(),
            user_id: user_id.as_str().to_owned(),
            unassigned: true,
        })
    }
}

/// Every material assigned to `user_id`, newest assignment first, read on `conn` (the
/// personal-data export, the `exports` area).
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
