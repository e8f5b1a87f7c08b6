//! The route table and the handlers, one module per resource. Each module declares its
//! routes (`routes`), each from its `#[utoipa::path]` handler, which also documents it.
//! A handler's description lists its own answers only; what follows from its [`Access`]
//! (bearer security, 401, 403) and from the server (408, 413, 415, 429, 503) is added to
//! every operation in [`crate::docs::openapi`].

pub mod audit;
pub mod auth;
pub mod contacts;
pub mod courses;
pub mod dashboard;
pub mod exports;
pub mod factors;
pub mod mail_templates;
pub mod materials;
pub mod placement;
pub mod settings;
pub mod storage;
pub mod system;
pub mod users;
pub mod webhooks;

use hyper::Method;

use crate::docs;
use crate::limits::RateRule::Default;
use crate::router::{Access, Routes};

/// The whole route table; the OpenAPI document is built from it too ([`Routes::document`]).
pub fn routes() -> Routes {
    let mut r = Routes::new();
    r.add::<system::__path_root>(Default, Access::Anyone, system::root)
        .add_undocumented(Method::GET, "/swagger/json", Default, docs::swagger_json)
        .add_undocumented(Method::GET, "/api/docs", Default, docs::swagger_ui)
        .add_undocumented(Method::GET, "/api/docs/", Default, docs::swagger_ui)
        .add_undocumented(
            Method::GET,
            "/api/docs/{*file}",
            Default,
            docs::swagger_asset,
        );
    auth::routes(&mut r);
    factors::routes(&mut r);
    users::routes(&mut r);
    courses::routes(&mut r);
    settings::routes(&mut r);
    storage::routes(&mut r);
    placement::routes(&mut r);
    materials::routes(&mut r);
    contacts::routes(&mut r);
    dashboard::routes(&mut r);
    mail_templates::routes(&mut r);
    audit::routes(&mut r);
    exports::routes(&mut r);
    webhooks::routes(&mut r);
    r
}
