//! The route table: one `matchit` router per method, so a known path with another method
//! answers 405 with `Allow`, and an unknown path 404.

use std::collections::BTreeMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use hyper::Method;
use langcamp_core::Result;

use crate::limits::RateRule;
use crate::reply::Reply;
use crate::request::Ctx;

pub type BoxFuture = Pin<Box<dyn Future<Output = Result<Reply>> + Send + 'static>>;
pub type Handler = Arc<dyn Fn(Ctx) -> BoxFuture + Send + Sync>;

#[derive(Clone)]
pub struct Route {
    /// A small number naming the route, the per-endpoint rate-limit key.
    pub id: u16,
    pub rule: RateRule,
    /// The path pattern (`/courses/{id}`): the route label of logs and metrics.
    pub template: Arc<str>,
    pub handler: Handler,
}

pub enum Lookup<'r> {
    Route(&'r Route, Vec<(String, String)>),
    MethodNotAllowed(String),
    NoRoute,
}

#[derive(Default)]
pub struct Routes {
    by_method: BTreeMap<String, matchit::Router<Route>>,
    count: u16,
}

impl Routes {
    pub fn new() -> Routes {
        Routes::default()
    }

    /// Adds a route; panics on a malformed or conflicting pattern, which is a bug in the
    /// route table caught by every test run.
    pub fn add<F, Fut>(
        &mut self,
        method: Method,
        path: &str,
        rule: RateRule,
        handler: F,
    ) -> &mut Routes
    where
        F: Fn(Ctx) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<Reply>> + Send + 'static,
    {
        self.count += 1;
        let route = Route {
            id: self.count,
            rule,
            template: Arc::from(path),
            handler: Arc::new(move |ctx| Box::pin(handler(ctx))),
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
