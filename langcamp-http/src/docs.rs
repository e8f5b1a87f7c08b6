//! The OpenAPI description (`/swagger/json`) and the Swagger UI (`/api/docs`).

use std::sync::{Arc, OnceLock};

use bytes::Bytes;
use hyper::header::{CACHE_CONTROL, CONTENT_ENCODING, CONTENT_TYPE, HeaderValue};
use hyper::{Method, Response, StatusCode};
use langcamp_core::Result;
use utoipa::openapi::security::{HttpAuthScheme, HttpBuilder, SecurityRequirement, SecurityScheme};
use utoipa::{Modify, OpenApi};

use crate::handlers;
use crate::reply::{Body, ErrorEnvelope, Reply, full};
use crate::request::Ctx;
use crate::router::{Access, Operation};

#[derive(OpenApi)]
#[openapi(
    info(
        title = "Langcamp API",
        description = "Backend of a multilingual language school: one-time-code sign-in, \
                       profiles, courses, placement tests, education materials, contact desk, \
                       settings, file storage and an admin dashboard.\n\n\
                       Every JSON answer wears the envelope `{isSuccess, statusCode, data, errors, timestamp}`; \
                       failures add a stable `code`. Rate limits answer 429 with `Retry-After`. \
                       A request body must arrive without a pause over 10 s and within 5 minutes \
                       of the headers, else 408 and the connection is closed.",
    ),
    components(schemas(ErrorEnvelope, langcamp_core::Pagination)),
    modifiers(&BearerScheme),
    tags(
        (name = "system", description = "Reachability and documentation"),
        (name = "auth", description = "One-time-code sign-in, tokens and the caller's profile"),
        (name = "factors", description = "Second factors (TOTP, recovery codes, passkeys) and the \
            second step of a sign-in. A sign-in's access token carries its assurance level `aal` \
            (1 after the e-mail code, 2 after a second factor or a passkey) and `fat`, the epoch second \
            of its latest second-factor check. Staff (under `STAFF_SECOND_FACTOR=required`, the default) \
            and any user with a factor reach only `GET /me`, the factor routes, refresh and logout \
            until their sign-in is at level 2; elsewhere 403 `SECOND_FACTOR_REQUIRED`. Role changes, \
            user deletion, exports, factor resets, removing a factor, new recovery codes and adding \
            a factor when one exists need a check within `STEP_UP_MAX_AGE` (default 10 minutes): \
            else 403 `STEP_UP_REQUIRED`; verify a factor again and retry."),
        (name = "users", description = "User administration (admin; role changes superadmin)"),
        (name = "courses", description = "The course catalogue: public reading, admin editing. \
            Without a token the caller is anonymous; a token that is presented must be valid (401 otherwise)."),
        (name = "settings", description = "Key/value settings read by the frontend. \
            Keys are `[a-z0-9_.-]{1,100}`; a value is any JSON value but null. \
            Well-known key: `landing_video_url`, a string holding the landing page's video address."),
        (name = "storage", description = "File upload and download (public)"),
        (name = "placement", description = "Placement tests: authoring (admin), taking them \
            (user) and results. Only admins ever see which option is correct."),
        (name = "education-materials", description = "PDFs and videos that admins assign to users"),
        (name = "contacts", description = "Contact requests: the public form, and replies by admins"),
        (name = "dashboard", description = "Statistics for admins"),
        (name = "audit", description = "The audit trail of staff actions (superadmin): append-only, \
            each entry written by the action's own transaction"),
        (name = "exports", description = "The admin lists as CSV files (streamed, every row \
            matching the list's filters) and a user's personal data as a JSON attachment"),
        (name = "webhooks", description = "Signed HTTP callbacks to the school's own systems \
            (superadmin): `contact.created`, `user.registered`, `result.created` and `material.assigned`, \
            each POSTed as `{type, timestamp, data}` with the Standard Webhooks headers `webhook-id` \
            (the same on every retry), `webhook-timestamp` and `webhook-signature` (`v1,` + base64 of \
            HMAC-SHA256 over `{webhook-id}.{webhook-timestamp}.{body}` keyed with the secret's bytes \
            after `whsec_`). Queued in the transaction of the change, delivered at least once: a 2xx \
            within 10 seconds delivers, anything else is retried (backing off to 5 minutes apart) \
            for 24 hours."),
        (name = "mail-templates", description = "Every mail (`otp`, `contact_reply`, \
            `material_assigned`) is written in its reader's language from a template: built-in ones \
            in en, de, fr, es, it and pt, which admins replace per kind and locale. A locale resolves \
            `pt-BR` → `pt` → the school's default (setting `mail.default_locale`) → `en`. Templates use \
            Jinja placeholders (`{{ code }}`); every kind has `schoolName` (setting `school_name`), \
            `otp` adds `code` and `minutes`, `contact_reply` adds `firstName`, `reply` and \
            `originalMessage`, `material_assigned` adds `name`, `materialTitle` and `link`. Filters: \
            `paragraphs` (text as escaped HTML paragraphs) and `quote` (`> ` before each line). \
            Values are HTML-escaped in `html` only."),
    )
)]
pub struct ApiDoc;

struct BearerScheme;

impl Modify for BearerScheme {
    fn modify(&self, openapi: &mut utoipa::openapi::OpenApi) {
        let components = openapi.components.get_or_insert_with(Default::default);
        components.add_security_scheme(
            "bearer",
            SecurityScheme::Http(
                HttpBuilder::new()
                    .scheme(HttpAuthScheme::Bearer)
                    .bearer_format("JWT")
                    .description(Some(
                        "The `accessToken` from `POST /auth/otp/verify` or `POST /auth/refresh`.",
                    ))
                    .build(),
            ),
        );
    }
}

/// The whole OpenAPI document: the base, and every operation of the route table.
pub fn openapi() -> utoipa::openapi::OpenApi {
    let mut doc = ApiDoc::openapi();
    let routes = handlers::routes();
    routes.document(&mut doc);
    AccessRules(routes.operations()).modify(&mut doc);
    CommonResponses.modify(&mut doc);
    ExactObjects.modify(&mut doc);
    doc.info.version = env!("CARGO_PKG_VERSION").to_owned();
    doc
}

/// An error answer in the envelope, as the handlers' `body = ErrorEnvelope` rows document it.
fn failure(description: &str) -> utoipa::openapi::Response {
    use utoipa::openapi::{ContentBuilder, Ref, ResponseBuilder};
    ResponseBuilder::new()
        .description(description)
        .content(
            "application/json",
            ContentBuilder::new()
                .schema(Some(Ref::from_schema_name("ErrorEnvelope")))
                .build(),
        )
        .build()
}

/// What an operation's [`Access`] means for a client, documented once here from the same
/// declaration the router enforces rather than on each handler: above [`Access::Anyone`]
/// the bearer token is required and a call without a valid one is 401; a role too low is
/// 403. A handler documents its own 401 or 403 only where it says more (e.g. a user only
/// a superadmin may delete), and its own `security` where a token is optional.
struct AccessRules<'r>(&'r [Operation]);

impl Modify for AccessRules<'_> {
    fn modify(&self, openapi: &mut utoipa::openapi::OpenApi) {
        for op in self.0 {
            let Some(operation) = openapi
                .paths
                .paths
                .get_mut(&op.path)
                .and_then(|item| operation_of(item, &op.method))
            else {
                continue;
            };
            if op.access != Access::Anyone {
                operation
                    .security
                    .get_or_insert_with(|| vec![SecurityRequirement::new("bearer", NO_SCOPES)]);
                let responses = &mut operation.responses.responses;
                responses
                    .entry("401".into())
                    .or_insert_with(|| failure("No valid access token").into());
            }
            // Above the own account, a sign-in that lacks the second factor its user is
            // held to is refused first (CONTRACT §20).
            let second_factor =
                "SECOND_FACTOR_REQUIRED: the sign-in must pass its second factor first";
            let forbidden = match op.access {
                Access::Anyone | Access::OwnAccount => None,
                Access::SignedIn => Some(second_factor.to_owned()),
                Access::Admin => Some(format!("Not an admin, or {second_factor}")),
                Access::Superadmin => Some(format!("Not a superadmin, or {second_factor}")),
            };
            if let Some(description) = forbidden {
                operation
                    .responses
                    .responses
                    .entry("403".into())
                    .or_insert_with(|| failure(&description).into());
            }
        }
    }
}

/// The bearer scheme has no scopes.
const NO_SCOPES: [&str; 0] = [];

fn operation_of<'i>(
    item: &'i mut utoipa::openapi::PathItem,
    method: &Method,
) -> Option<&'i mut utoipa::openapi::path::Operation> {
    match *method {
        Method::GET => item.get.as_mut(),
        Method::POST => item.post.as_mut(),
        Method::PUT => item.put.as_mut(),
        Method::PATCH => item.patch.as_mut(),
        Method::DELETE => item.delete.as_mut(),
        _ => None,
    }
}

/// Answers every operation can give, documented once here rather than on each handler:
/// 429 (every route has a rate limit), 503 (the database is unreachable), and 413 and 408
/// where a body is accepted, and 415 where that body is JSON only.
struct CommonResponses;

impl Modify for CommonResponses {
    fn modify(&self, openapi: &mut utoipa::openapi::OpenApi) {
        use utoipa::openapi::RefOr;
        for item in openapi.paths.paths.values_mut() {
            for operation in [
                &mut item.get,
                &mut item.post,
                &mut item.put,
                &mut item.patch,
                &mut item.delete,
            ]
            .into_iter()
            .flatten()
            {
                let responses = &mut operation.responses.responses;
                responses.entry("429".into()).or_insert_with(|| {
                    failure("Rate limited (RATE_LIMITED); see Retry-After").into()
                });
                responses.entry("503".into()).or_insert_with(|| {
                    failure("The database is unreachable (SERVICE_UNAVAILABLE)").into()
                });
                let Some(body) = &operation.request_body else {
                    continue;
                };
                responses
                    .entry("413".into())
                    .or_insert_with(|| failure("The body is too large (PAYLOAD_TOO_LARGE)").into());
                responses.entry("408".into()).or_insert_with(|| {
                    failure(
                        "The body did not arrive in time (REQUEST_TIMEOUT); the connection is closed",
                    )
                    .into()
                });
                let json_only = match body {
                    RefOr::T(body) => body.content.keys().eq(["application/json"]),
                    RefOr::Ref(_) => false,
                };
                if json_only {
                    responses
                        .entry("415".into())
                        .or_insert_with(|| failure("Body is not JSON").into());
                }
            }
        }
    }
}

/// The documented operations of the route table (method, path, rate rule, access), for
/// the test that holds them against the document.
pub fn operations() -> Vec<Operation> {
    handlers::routes().operations().to_vec()
}

/// Every object schema lists all its properties: `additionalProperties: false`, so a
/// client (and schemathesis) knows an answer has no field beyond those documented, and a
/// request none beyond those accepted (contract §1 refuses unknown fields). Done once here
/// rather than on every type, since most answer types are also read back with serde, where
/// `deny_unknown_fields` would change behaviour.
struct ExactObjects;

/// Objects that take fields beyond their schema's: an answer of a submission is read by
/// hand, which ignores other fields.
const OPEN_OBJECTS: [&str; 1] = ["SubmittedAnswer"];

impl Modify for ExactObjects {
    fn modify(&self, openapi: &mut utoipa::openapi::OpenApi) {
        let Some(components) = openapi.components.as_mut() else {
            return;
        };
        for (name, schema) in components.schemas.iter_mut() {
            if !OPEN_OBJECTS.contains(&name.as_str()) {
                close_objects(schema);
            }
        }
    }
}

fn close_objects(schema: &mut utoipa::openapi::RefOr<utoipa::openapi::schema::Schema>) {
    use utoipa::openapi::RefOr;
    use utoipa::openapi::schema::{AdditionalProperties, ArrayItems, Schema};
    let RefOr::T(schema) = schema else {
        return;
    };
    match schema {
        Schema::Object(object) => {
            if !object.properties.is_empty() && object.additional_properties.is_none() {
                object.additional_properties =
                    Some(Box::new(AdditionalProperties::FreeForm(false)));
            }
            object.properties.values_mut().for_each(close_objects);
        }
        Schema::Array(array) => {
            if let ArrayItems::RefOrSchema(items) = &mut array.items {
                close_objects(items);
            }
        }
        // Not allOf: a closed part would refuse the other parts' fields.
        Schema::OneOf(one_of) => one_of.items.iter_mut().for_each(close_objects),
        Schema::AnyOf(any_of) => any_of.items.iter_mut().for_each(close_objects),
        _ => {}
    }
}

/// The OpenAPI document as pretty JSON.
pub fn openapi_json() -> String {
    openapi()
        .to_pretty_json()
        .unwrap_or_else(|e| format!("{{\"error\":\"{e}\"}}"))
}

fn cached_openapi() -> Bytes {
    static DOC: OnceLock<Bytes> = OnceLock::new();
    DOC.get_or_init(|| Bytes::from(openapi_json())).clone()
}

fn raw(status: StatusCode, content_type: &str, body: impl Into<Bytes>) -> Response<Body> {
    let mut response = Response::new(full(body));
    *response.status_mut() = status;
    if let Ok(value) = HeaderValue::from_str(content_type) {
        response.headers_mut().insert(CONTENT_TYPE, value);
    }
    response
}

pub async fn swagger_json(_ctx: Ctx) -> Result<Reply> {
    Ok(Reply::Raw(raw(
        StatusCode::OK,
        "application/json",
        cached_openapi(),
    )))
}

fn swagger_config() -> Arc<utoipa_swagger_ui::Config<'static>> {
    static CONFIG: OnceLock<Arc<utoipa_swagger_ui::Config<'static>>> = OnceLock::new();
    CONFIG
        .get_or_init(|| Arc::new(utoipa_swagger_ui::Config::new(["/swagger/json"])))
        .clone()
}

/// `GET /api/docs`: the UI's page; it works with and without a trailing slash.
pub async fn swagger_ui(_ctx: Ctx) -> Result<Reply> {
    swagger_file("index.html")
}

/// `GET /api/docs/{*file}`: the UI's scripts and styles.
pub async fn swagger_asset(ctx: Ctx) -> Result<Reply> {
    swagger_file(ctx.param("file"))
}

fn swagger_file(path: &str) -> Result<Reply> {
    let file = utoipa_swagger_ui::serve(path, swagger_config())
        .map_err(|e| langcamp_core::Error::internal(e.to_string()))?;
    let Some(file) = file else {
        return Err(langcamp_core::Error::not_found("documentation file"));
    };
    let mut bytes = Bytes::from(file.bytes.into_owned());
    if path == "index.html" && !file.gzpipped {
        // A base makes every relative asset link resolve under /api/docs/.
        let page = String::from_utf8_lossy(&bytes).replacen(
            "<head>",
            "<head><base href=\"/api/docs/\">",
            1,
        );
        bytes = Bytes::from(page);
    }
    let mut response = raw(StatusCode::OK, &file.content_type, bytes);
    if file.gzpipped {
        response
            .headers_mut()
            .insert(CONTENT_ENCODING, HeaderValue::from_static("gzip"));
    }
    response.headers_mut().insert(
        CACHE_CONTROL,
        HeaderValue::from_static("public, max-age=3600"),
    );
    Ok(Reply::Raw(response))
}
