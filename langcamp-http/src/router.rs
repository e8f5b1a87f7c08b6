//! The route table: one `matchit` router per method, so a known path with another method
//! answers 405 with `Allow`, and an unknown path 404.
//!
//! Each endpoint is registered once, from its `#[utoipa::path]` handler: the method and the
//! path come from the handler's description, next to them the rate rule and the minimum
//! [`Access`], and the same registration adds the operation to the OpenAPI document
//! ([`Routes::document`]). So the routes served and the operations documented cannot drift.

use std::collections::BTreeMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use hyper::Method;
use langcamp_core::{Result, Role};
use utoipa::openapi::path::HttpMethod;

use crate::limits::RateRule;
use crate::reply::Reply;
use crate::request::Ctx;

pub type BoxFuture = Pin<Box<dyn Future<Output = Result<Reply>> + Send + 'static>>;
pub type Handler = Arc<dyn Fn(Ctx) -> BoxFuture + Send + Sync>;

/// An async handler function, as the route table stores it.
pub trait IntoHandler {
    fn into_handler(self) -> Handler;
}

impl<F, Fut> IntoHandler for F
where
    F: Fn(Ctx) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<Reply>> + Send + 'static,
{
    fn into_handler(self) -> Handler {
        Arc::new(move |ctx| Box::pin(self(ctx)))
    }
}

/// Who may call an endpoint at all. The router checks it before the body is read, so a
/// caller without the right gets 401/403 before any 400 about the body, and a large body is
/// never read for them. Core checks again (it is the source of truth, and refines per
/// resource, e.g. only a superadmin may delete an admin); both use [`langcamp_core::Actor::require`],
/// so the answers are the same whichever check speaks first.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Access {
    /// No token needed; a token that is sent is checked by the handler (most answer 401
    /// for an invalid one, `GET /auth/optional` ignores it).
    Anyone,
    /// A valid access token (401 otherwise), whatever its assurance: the own account and
    /// the factor routes, which a sign-in reaches before its second factor (CONTRACT §20).
    OwnAccount,
    /// A valid access token (401 otherwise) whose sign-in has the second factor its user
    /// is held to (403 `SECOND_FACTOR_REQUIRED` otherwise).
    SignedIn,
    /// An admin or superadmin (401 without a valid token, 403 for a user).
    Admin,
    /// A superadmin (401 without a valid token, 403 otherwise).
    Superadmin,
}

impl Access {
    /// The role [`langcamp_core::Actor::require`] is asked for; `None` for [`Access::Anyone`].
    pub fn role(self) -> Option<Role> {
        match self {
            Access::Anyone => None,
            Access::OwnAccount | Access::SignedIn => Some(Role::User),
            Access::Admin => Some(Role::Admin),
            Access::Superadmin => Some(Role::Superadmin),
        }
    }
}

#[derive(Clone)]
pub struct Route {
    /// A small number naming the route, the per-endpoint rate-limit key.
    pub id: u16,
    pub rule: RateRule,
    pub access: Access,
    /// The path pattern (`/courses/{id}`): the route label of logs and metrics.
    pub template: Arc<str>,
    pub handler: Handler,
}

pub enum Lookup<'r> {
    Route(&'r Route, Vec<(String, String)>),
    MethodNotAllowed(String),
    NoRoute,
}

/// One documented operation of the route table.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Operation {
    pub method: Method,
    pub path: String,
    pub rule: RateRule,
    pub access: Access,
}

#[derive(Default)]
pub struct Routes {
    by_method: BTreeMap<String, matchit::Router<Route>>,
    count: u16,
    operations: Vec<Operation>,
    /// Adds each documented endpoint's operation and schemas to a document.
    documenters: Vec<fn(&mut utoipa::openapi::OpenApi)>,
}

/// What a `#[utoipa::path]` handler's generated `__path_<name>` type provides.
pub trait Documented:
    utoipa::Path + for<'t> utoipa::__dev::Tags<'t> + utoipa::__dev::SchemaReferences
{
}

impl<P> Documented for P where
    P: utoipa::Path + for<'t> utoipa::__dev::Tags<'t> + utoipa::__dev::SchemaReferences
{
}

/// Adds the operation of `P` (with its tags) and the schemas it refers to.
fn document<P: Documented>(doc: &mut utoipa::openapi::OpenApi) {
    let mut operation = P::operation();
    let tags = <P as utoipa::__dev::Tags>::tags();
    if !tags.is_empty() {
        operation
            .tags
            .get_or_insert_with(Vec::new)
            .extend(tags.iter().map(ToString::to_string));
    }
    doc.paths
        .add_path_operation(P::path(), P::methods(), operation);
    let mut schemas = Vec::new();
    <P as utoipa::__dev::SchemaReferences>::schemas(&mut schemas);
    doc.components
        .get_or_insert_with(Default::default)
        .schemas
        .extend(schemas);
}

fn hyper_method(method: &HttpMethod) -> Method {
    match method {
        HttpMethod::Get => Method::GET,
        HttpMethod::Post => Method::POST,
        HttpMethod::Put => Method::PUT,
        HttpMethod::Delete => Method::DELETE,
        HttpMethod::Options => Method::OPTIONS,
        HttpMethod::Head => Method::HEAD,
        HttpMethod::Patch => Method::PATCH,
        HttpMethod::Trace => Method::TRACE,
    }
}

impl Routes {
    pub fn new() -> Routes {
        Routes::default()
    }

    /// Registers the endpoint of a `#[utoipa::path]` handler: `P` is the handler's
    /// generated `__path_<handler>` type, which gives the method and the path; the
    /// operation joins the document. Panics on a malformed or conflicting pattern, which is
    /// a bug in the route table caught by every test run.
    pub fn add<P: Documented>(
        &mut self,
        rule: RateRule,
        access: Access,
        handler: impl IntoHandler,
    ) -> &mut Routes {
        let path = P::path();
        let handler = handler.into_handler();
        for method in P::methods() {
            let method = hyper_method(&method);
            self.insert(method.clone(), &path, rule, access, Arc::clone(&handler));
            self.operations.push(Operation {
                method,
                path: path.clone(),
                rule,
                access,
            });
        }
        self.documenters.push(document::<P>);
        self
    }

    /// Registers a route that is not an API operation (the Swagger UI and the document
    /// itself): served, but not in the document.
    pub fn add_undocumented(
        &mut self,
        method: Method,
        path: &str,
        rule: RateRule,
        handler: impl IntoHandler,
    ) -> &mut Routes {
        self.insert(method, path, rule, Access::Anyone, handler.into_handler())
    }

    fn insert(
        &mut self,
        method: Method,
        path: &str,
        rule: RateRule,
        access: Access,
        handler: Handler,
    ) -> &mut Routes {
        self.count += 1;
        let route = Route {
            id: self.count,
            rule,
            access,
            template: Arc::from(path),
            handler,
        };
        let router = self
            .by_method
            .entry(method.as_str().to_owned())
            .or_default();
        #[allow(clippy::expect_used)]
        router
            .insert(path, route)
            .expect("the route table has no conflicting patterns");
        self
    }

    /// The documented operations, in registration order.
    pub fn operations(&self) -> &[Operation] {
        &self.operations
    }

    /// Adds every documented operation, with the schemas it refers to, to `doc`.
    pub fn document(&self, doc: &mut utoipa::openapi::OpenApi) {
        for documenter in &self.documenters {
            documenter(doc);
        }
    }

    pub fn find(&self, method: &Method, path: &str) -> Lookup<'_> {
        // HEAD is answered like GET (hyper drops the body).
        let method_name = if method == Method::HEAD {
            "GET"
        } else {
            method.as_str()
        };
        if let Some(router) = self.by_method.get(method_name)
            && let Ok(matched) = router.at(path)
        {
            let params = matched
                .params
                .iter()
                .map(|(k, v)| (k.to_owned(), v.to_owned()))
                .collect();
            return Lookup::Route(matched.value, params);
        }
        let allowed: Vec<&str> = self
            .by_method
            .iter()
            .filter(|(_, router)| router.at(path).is_ok())
            .map(|(m, _)| m.as_str())
            .collect();
        if allowed.is_empty() {
            Lookup::NoRoute
        } else {
            let mut allow = allowed.join(", ");
            allow.push_str(", OPTIONS");
            Lookup::MethodNotAllowed(allow)
        }
    }
}
