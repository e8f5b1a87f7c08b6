//! Education materials (CONTRACT §7). Create and update take either JSON or a multipart
//! form whose `pdfs` parts are streamed into the file store as they arrive.

use langcamp_core::domain::Deleted;
use langcamp_core::domain::{Id, LanguageTag};
use langcamp_core::materials::{
    AssignInput, AssignResult, AssignedMaterial, Assignment, MAX_PDFS, Material, MaterialChange,
    MaterialInput, MaterialUpdate, NewMaterial, Unassigned,
};
use langcamp_core::storage::{Accept, StagedFile};
use langcamp_core::{Actor, Error, Page, Result};
use serde::de::DeserializeOwned;
use utoipa::ToSchema;

use crate::limits::RateRule;
use crate::material_form::TextFields;
use crate::multipart::{Form, is_multipart};
use crate::reply::{Envelope, ErrorEnvelope, Reply};
use crate::request::{Ctx, PageParams};
use crate::router::{Access, Routes};

pub fn routes(r: &mut Routes) {
    r.add::<__path_create>(RateRule::Default, Access::Admin, create);
    r.add::<__path_list>(RateRule::Default, Access::Admin, list);
    r.add::<__path_mine>(RateRule::Default, Access::SignedIn, mine);
    r.add::<__path_of_user>(RateRule::Default, Access::Admin, of_user);
    r.add::<__path_get>(RateRule::Default, Access::SignedIn, get);
    r.add::<__path_update>(RateRule::Default, Access::Admin, update);
    r.add::<__path_delete>(RateRule::Default, Access::Admin, delete);
    r.add::<__path_assign>(RateRule::Default, Access::Admin, assign);
    r.add::<__path_unassign>(RateRule::Default, Access::Admin, unassign);
}

/// The multipart form of `POST /education-materials`.
#[derive(ToSchema)]
#[schema(rename_all = "camelCase")]
#[allow(dead_code)]
pub struct MaterialForm {
    /// 1 to 200 characters.
    title: String,
    /// Up to 5000 characters.
    description: Option<String>,
    /// BCP 47 language tag.
    locale: Option<String>,
    /// BCP 47 language tag.
    target_language: Option<String>,
    /// `A1` to `C2`.
    level: Option<String>,
    /// A JSON array of `{title, url}` (http(s) addresses).
    #[schema(
        example = "[{\"title\":\"Greetings\",\"url\":\"https://video.example.com/greetings\"}]"
    )]
    videos: Option<String>,
    /// Any number of PDF documents (each checked from its content; another type is 415),
    /// each at most `UPLOAD_MAX_BYTES`.
    #[schema(value_type = Option<Vec<String>>, format = Binary)]
    pdfs: Option<Vec<Vec<u8>>>,
}

/// The multipart form of `PATCH /education-materials/{id}`: any subset; an empty text
/// clears an optional field.
#[derive(ToSchema)]
#[schema(rename_all = "camelCase")]
#[allow(dead_code)]
pub struct MaterialUpdateForm {
    title: Option<String>,
    description: Option<String>,
    locale: Option<String>,
    target_language: Option<String>,
    level: Option<String>,
    /// A JSON array of `{id?, title, url}`: replaces the videos.
    videos: Option<String>,
    /// A JSON array of PDF ids of this material to remove.
    #[schema(example = "[\"0190f1a2-0000-7000-8000-0000000000ab\"]")]
    remove_pdf_ids: Option<String>,
    /// PDF documents to append.
    #[schema(value_type = Option<Vec<String>>, format = Binary)]
    pdfs: Option<Vec<Vec<u8>>>,
}

/// The command `C` of a material form and its staged PDFs. The text fields become the
/// JSON object `T` is parsed from (so a form and a JSON body are checked alike) and `T`
/// the command; `pdfs` parts are staged as they arrive. On any failure the staged PDFs are
/// removed again. A body that is no form is 415 (the caller took JSON already).
async fn read_form<T, C>(
    ctx: &mut Ctx,
    actor: &Actor,
    mut fields: TextFields,
) -> Result<(C, Vec<StagedFile>)>
where
    T: DeserializeOwned,
    C: TryFrom<T, Error = Error>,
{
    if !is_multipart(ctx) {
        return Err(neither_json_nor_form());
    }
    let mut form = Form::from_ctx(ctx)?;
    let app = &ctx.app;
    let mut pdfs: Vec<StagedFile> = Vec::new();
    let read: Result<C> = async {
        while let Some(part) = form.next_part().await? {
            if part.name() != "pdfs" {
                fields.read(part).await?;
                continue;
            }
            if pdfs.len() >= MAX_PDFS {
                return Err(Error::invalid(format!(
                    "a material holds at most {MAX_PDFS} PDFs"
                )));
            }
            let file_name = part.file_name().map(str::to_owned);
            let staged = app
                .stage_file(actor, Accept::Pdf, file_name.as_deref(), part.into_stream())
                .await?;
            pdfs.push(staged);
        }
        fields.parse::<T, C>()
    }
    .await;
    form.linger();
    match read {
        Ok(command) => Ok((command, pdfs)),
        Err(e) => {
            app.discard_staged(pdfs).await;
            Err(e)
        }
    }
}

fn neither_json_nor_form() -> Error {
    Error::UnsupportedMediaType(
        "expected Content-Type: multipart/form-data or application/json".into(),
    )
}

/// Create a material from a multipart form (with `pdfs` file parts) or from JSON
/// (without files).
#[utoipa::path(post, operation_id = "createMaterial", path = "/education-materials", tag = "education-materials",
    request_body(content(
        (MaterialForm = "multipart/form-data"),
        (MaterialInput = "application/json"),
    )),
    responses(
        (status = 201, description = "Created", body = Envelope<Material>),
        (status = 400, description = "Invalid or unknown fields, a malformed form, an empty file", body = ErrorEnvelope),
        (status = 413, description = "A PDF over UPLOAD_MAX_BYTES, or a body over 50 MB", body = ErrorEnvelope),
        (status = 415, description = "Neither multipart/form-data nor JSON, or a `pdfs` part that is not a PDF (nothing is stored)", body = ErrorEnvelope),
        (status = 507, description = "The file store is full: the PDFs would pass FILE_STORE_MAX_BYTES (INSUFFICIENT_STORAGE); nothing is stored", body = ErrorEnvelope),
    ))]
pub async fn create(mut ctx: Ctx) -> Result<Reply> {
    let actor = ctx.actor().await?;
    if ctx.has_content_type("application/json") {
        let new = ctx.command::<MaterialInput, NewMaterial>().await?;
        let material = ctx.app.create_material(&actor, new, Vec::new()).await?;
        return Ok(Reply::created(&material));
    }
    let (new, pdfs) =
        read_form::<MaterialInput, NewMaterial>(&mut ctx, &actor, TextFields::create()).await?;
    Ok(Reply::created(
        &ctx.app.create_material(&actor, new, pdfs).await?,
    ))
}

/// List materials, newest first.
#[utoipa::path(get, operation_id = "listMaterials", path = "/education-materials", tag = "education-materials",
    params(
        ("locale" = Option<String>, Query, pattern = r"^$|^[A-Za-z]{2,3}(-[A-Za-z0-9]{1,8})*$", max_length = 35, description = "Only materials of this locale (a language code); empty means no filter"),
        PageParams,
    ),
    responses(
        (status = 200, description = "A page of materials", body = Envelope<Page<Material>>),
        (status = 400, description = "Bad locale or pagination", body = ErrorEnvelope),
    ))]
pub async fn list(ctx: Ctx) -> Result<Reply> {
    let actor = ctx.actor().await?;
    let page = ctx.page()?;
    let locale = match ctx.query("locale") {
        None => None,
        Some(raw) => LanguageTag::parse_optional("locale", raw).map_err(Error::invalid)?,
    };
    Ok(Reply::ok(
        &ctx.app
            .list_materials(&actor, locale.as_ref(), page)
            .await?,
    ))
}

/// The caller's assigned materials, newest assignment first.
#[utoipa::path(get, operation_id = "listMyMaterials", path = "/education-materials/my-materials", tag = "education-materials",
    responses(
        (status = 200, description = "Assigned materials", body = Envelope<Vec<AssignedMaterial>>),
    ))]
pub async fn mine(ctx: Ctx) -> Result<Reply> {
    let actor = ctx.actor().await?;
    Ok(Reply::ok(&ctx.app.my_materials(&actor).await?))
}

/// A user's assigned materials, newest assignment first.
#[utoipa::path(get, operation_id = "listUserMaterials", path = "/education-materials/user/{userId}", tag = "education-materials",
    params(("userId" = String, Path, description = "User id")),
    responses(
        (status = 200, description = "Assigned materials", body = Envelope<Vec<AssignedMaterial>>),
        (status = 404, description = "No such user", body = ErrorEnvelope),
    ))]
pub async fn of_user(ctx: Ctx) -> Result<Reply> {
    let actor = ctx.actor().await?;
    Ok(Reply::ok(
        &ctx.app.user_materials(&actor, &ctx.id("userId")).await?,
    ))
}

/// One material: any for admins; for users only one assigned to them.
#[utoipa::path(get, operation_id = "getMaterial", path = "/education-materials/{id}", tag = "education-materials",
    params(("id" = String, Path, description = "Material id")),
    responses(
        (status = 200, description = "The material", body = Envelope<Material>),
        (status = 404, description = "No such material, or not assigned to the calling user", body = ErrorEnvelope),
    ))]
pub async fn get(ctx: Ctx) -> Result<Reply> {
    let actor = ctx.actor().await?;
    Ok(Reply::ok(
        &ctx.app.get_material(&actor, &ctx.id("id")).await?,
    ))
}

/// Update a material from a multipart form or JSON: fields given change, `videos`
/// replaces the list, `pdfs` parts are appended, `removePdfIds` removes PDFs (their
/// files too).
#[utoipa::path(patch, operation_id = "updateMaterial", path = "/education-materials/{id}", tag = "education-materials",
    params(("id" = String, Path, description = "Material id")),
    request_body(content(
        (MaterialUpdateForm = "multipart/form-data"),
        (MaterialUpdate = "application/json"),
    )),
    responses(
        (status = 200, description = "Updated", body = Envelope<Material>),
        (status = 400, description = "Invalid or unknown fields, an id in removePdfIds that is not a PDF of this material", body = ErrorEnvelope),
        (status = 404, description = "No such material", body = ErrorEnvelope),
        (status = 413, description = "A PDF over UPLOAD_MAX_BYTES, or a body over 50 MB", body = ErrorEnvelope),
        (status = 415, description = "Neither multipart/form-data nor JSON, or a `pdfs` part that is not a PDF (nothing is changed)", body = ErrorEnvelope),
        (status = 507, description = "The file store is full: the new PDFs would pass FILE_STORE_MAX_BYTES (INSUFFICIENT_STORAGE); nothing is changed", body = ErrorEnvelope),
    ))]
pub async fn update(mut ctx: Ctx) -> Result<Reply> {
    let actor = ctx.actor().await?;
    let id: Id<Material> = ctx.id("id");
    if ctx.has_content_type("application/json") {
        let change = ctx.command::<MaterialUpdate, MaterialChange>().await?;
        let material = ctx
            .app
            .update_material(&actor, &id, change, Vec::new())
            .await?;
        return Ok(Reply::ok(&material));
    }
    let (change, pdfs) =
        read_form::<MaterialUpdate, MaterialChange>(&mut ctx, &actor, TextFields::update()).await?;
    Ok(Reply::ok(
        &ctx.app.update_material(&actor, &id, change, pdfs).await?,
    ))
}

/// Delete a material with its assignments and its PDFs (records and files).
#[utoipa::path(delete, operation_id = "deleteMaterial", path = "/education-materials/{id}", tag = "education-materials",
    params(("id" = String, Path, description = "Material id")),
    responses(
        (status = 200, description = "Deleted", body = Envelope<Deleted>),
        (status = 404, description = "No such material", body = ErrorEnvelope),
    ))]
pub async fn delete(ctx: Ctx) -> Result<Reply> {
    let actor = ctx.actor().await?;
    Ok(Reply::ok(
        &ctx.app.delete_material(&actor, &ctx.id("id")).await?,
    ))
}

/// Assign a material to users, all or nothing: an unknown user id is 404 (naming it)
/// and nothing is assigned. Each newly assigned user gets one mail with the link
/// `{FRONTEND_BASE_URL}/materials/{id}`; users who already had it count as
/// `alreadyAssigned` and get no mail.
#[utoipa::path(post, operation_id = "assignMaterial", path = "/education-materials/{id}/assign", tag = "education-materials",
    params(("id" = String, Path, description = "Material id")),
    request_body = AssignInput,
    responses(
        (status = 200, description = "Assigned", body = Envelope<AssignResult>),
        (status = 400, description = "userIds missing, empty or too long", body = ErrorEnvelope),
        (status = 404, description = "No such material, or an unknown user id (named)", body = ErrorEnvelope),
    ))]
pub async fn assign(mut ctx: Ctx) -> Result<Reply> {
    let actor = ctx.actor().await?;
    let assignment = ctx.command::<AssignInput, Assignment>().await?;
    Ok(Reply::ok(
        &ctx.app
            .assign_material(&actor, &ctx.id("id"), &assignment)
            .await?,
    ))
}

/// Take a material away from a user.
#[utoipa::path(delete, operation_id = "unassignMaterial", path = "/education-materials/{id}/assign/{userId}", tag = "education-materials",
    params(
        ("id" = String, Path, description = "Material id"),
        ("userId" = String, Path, description = "User id"),
    ),
    responses(
        (status = 200, description = "Unassigned", body = Envelope<Unassigned>),
        (status = 404, description = "No such material, or not assigned to that user", body = ErrorEnvelope),
    ))]
pub async fn unassign(ctx: Ctx) -> Result<Reply> {
    let actor = ctx.actor().await?;
    Ok(Reply::ok(
        &ctx.app
            .unassign_material(&actor, &ctx.id("id"), &ctx.id("userId"))
            .await?,
    ))
}
