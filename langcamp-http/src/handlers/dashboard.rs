//! Handlers of this resource: filled in by its issue.

use utoipa::OpenApi;

use crate::router::Routes;

pub fn routes(_r: &mut Routes) {}

#[derive(OpenApi)]
#[openapi()]
pub struct Api;
