//! What several operations document word for word, declared once: the path parameter
//! that names a resource, and the answers that recur (no such resource, a body too large,
//! a token that is not valid). A handler lists them like any other parameter set or
//! answer: `params(CourseId)`, `responses((status = 200, ..), NoSuchCourse)`.

use std::collections::BTreeMap;

use utoipa::openapi::path::{Parameter, ParameterBuilder, ParameterIn};
use utoipa::openapi::schema::{ObjectBuilder, Type};
use utoipa::openapi::{RefOr, Response};

use crate::docs::failure;

/// `Name("param") = "description";`: a type documenting the required string path
/// parameter `param`, for `params(Name)`.
macro_rules! path_parameters {
    ($($(#[$meta:meta])* $name:ident($param:literal) = $description:literal;)*) => {$(
        #[doc = concat!("The path parameter `", $param, "`: ", $description, ".")]
        $(#[$meta])*
        pub struct $name;

        impl utoipa::IntoParams for $name {
            fn into_params(_: impl Fn() -> Option<ParameterIn>) -> Vec<Parameter> {
                vec![path_parameter($param, $description)]
            }
        }
    )*};
}

/// `status { Name = "description"; .. }`: types documenting failure answers in the
/// envelope with that status, for `responses(.., Name)`.
macro_rules! failures {
    ($($status:literal { $($(#[$meta:meta])* $name:ident = $description:literal;)* })*) => {$($(
        #[doc = concat!("The answer ", $status, ": ", $description, ".")]
        $(#[$meta])*
        pub struct $name;

        impl utoipa::IntoResponses for $name {
            fn responses() -> BTreeMap<String, RefOr<Response>> {
                BTreeMap::from([($status.to_string(), failure($description).into())])
            }
        }
    )*)*};
}

path_parameters! {
    ContactId("id") = "Contact request id";
    CourseId("id") = "Course id";
    MaterialId("id") = "Material id";
    TestId("id") = "Test id";
    ResultId("resultId") = "Result id";
    UserId("id") = "User id";
    /// The user a list or an assignment is about (`/…/user/{userId}`).
    OfUserId("userId") = "User id";
}

failures! {
    404 {
        NoSuchContact = "No such contact request";
        NoSuchCourse = "No such course";
        NoSuchMaterial = "No such material";
        NoSuchTest = "No such test";
        NoActiveTest = "No such test, or inactive";
        NoSuchResult = "No such result";
        NoSuchUser = "No such user";
        NoSuchSetting = "No such setting";
    }
    413 {
        /// Routes taking a JSON document of a known size say it shortly.
        BodyTooLarge = "Body too large";
    }
    401 {
        /// A route open to anyone that still checks a token when one is sent.
        TokenNotValid = "A token was sent but is not valid";
    }
}

fn path_parameter(name: &str, description: &str) -> Parameter {
    ParameterBuilder::from(Parameter::new(name))
        .parameter_in(ParameterIn::Path)
        .description(Some(description))
        .schema(Some(ObjectBuilder::new().schema_type(Type::String)))
        .build()
}
