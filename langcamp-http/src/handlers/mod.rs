//! The route table and the handlers, one module per resource.

pub mod system;

use hyper::Method;

use crate::docs;
use crate::limits::RateRule::Default;
use crate::router::Routes;

pub fn routes() -> Routes {
    let mut r = Routes::new();
    r.add(Method::GET, "/", Default, system::root)
        .add(Method::GET, "/swagger/json", Default, docs::swagger_json)
        .add(Method::GET, "/api/docs", Default, docs::swagger_ui)
        .add(Method::GET, "/api/docs/", Default, docs::swagger_ui)
        .add(Method::GET, "/api/docs/{*file}", Default, docs::swagger_asset);
    r
}
