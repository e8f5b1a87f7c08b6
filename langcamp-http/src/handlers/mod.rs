//! The route table and the handlers, one module per resource. Each module declares its
//! routes (`routes`) and its part of the OpenAPI description (`Api`).

pub mod auth;
pub mod contacts;
pub mod courses;
pub mod dashboard;
pub mod materials;
pub mod placement;
pub mod settings;
pub mod storage;
pub mod system;
pub mod users;

use hyper::Method;
use utoipa::OpenApi;

use crate::docs;
use crate::limits::RateRule::Default;
use crate::router::Routes;

pub fn routes() -> Routes {
    let mut r = Routes::new();
    r.add(Method::GET, "/", Default, system::root)
        .add(Method::GET, "/swagger/json", Default, docs::swagger_json)
        .add(Method::GET, "/api/docs", Default, docs::swagger_ui)
        .add(Method::GET, "/api/docs/", Default, docs::swagger_ui)
        .add(
            Method::GET,
            "/api/docs/{*file}",
            Default,
            docs::swagger_asset,
        );
    auth::routes(&mut r);
    users::routes(&mut r);
    courses::routes(&mut r);
    settings::routes(&mut r);
    storage::routes(&mut r);
    placement::routes(&mut r);
    materials::routes(&mut r);
    contacts::routes(&mut r);
    dashboard::routes(&mut r);
    r
}

/// The OpenAPI parts of every resource, merged into the served document.
pub fn apis() -> Vec<utoipa::openapi::OpenApi> {
    vec![
        auth::Api::openapi(),
        users::Api::openapi(),
        courses::Api::openapi(),
        settings::Api::openapi(),
        storage::Api::openapi(),
        placement::Api::openapi(),
        materials::Api::openapi(),
        contacts::Api::openapi(),
        dashboard::Api::openapi(),
    ]
}
