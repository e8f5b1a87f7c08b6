//! JSON request bodies: arbitrary bytes through `parse_json::<T>` for every input type of
//! the core that a handler reads with `ctx.json()` / `ctx.optional_json()` (or, for the
//! materials, builds from a multipart form), and then, as the handler does, through the
//! `TryFrom` conversion into core's validated command (`NewCourse`, `ProfileChange`, ...).
//!
//! A parse or a conversion either succeeds or yields a 400 (`Error::Validation`) with at
//! least one non-empty message; anything else (a panic, a stack overflow, another error)
//! is a bug.
#![no_main]

use langcamp_core::Error;
use langcamp_core::auth::{
    LogoutInput, OtpRequestInput, OtpSignIn, OtpVerifyInput, RefreshInput, RefreshToken,
};
use langcamp_core::contacts::{
    ContactInput, ContactStatus, ContactStatusInput, NewContact, ReplyInput, ReplyText,
};
use langcamp_core::courses::{CourseChange, CourseInput, NewCourse};
use langcamp_core::domain::Email;
use langcamp_core::materials::{
    AssignInput, Assignment, MaterialChange, MaterialInput, MaterialUpdate, NewMaterial,
};
use langcamp_core::placement::{NewTest, SubmitInput, TestInput, TestPatch};
use langcamp_core::settings::{NewSetting, SettingInput};
use langcamp_core::users::{
    AdminProfileInput, EmailInput, ProfileChange, ProfileInput, Registration, RoleInput,
};
use langcamp_core::Role;
use langcamp_http::request::{parse_command, parse_json};
use libfuzzer_sys::fuzz_target;
use serde::de::DeserializeOwned;

/// A refusal must be a 400 with messages that say something.
fn refused_as_400<T>(outcome: Result<T, Error>, what: &str) {
    match outcome {
        Ok(_) => {}
        Err(Error::Validation(messages)) => {
            assert!(!messages.is_empty(), "{what}: a 400 without a message");
            assert!(messages.iter().all(|m| !m.is_empty()), "{what}: an empty message");
        }
        Err(other) => panic!("{what} gave a non-400 error: {other:?}"),
    }
}

/// The body parsed as `T`, if it parses (a refusal is checked).
fn check<T: DeserializeOwned>(data: &[u8]) -> Option<T> {
    match parse_json::<T>(data) {
        Ok(body) => Some(body),
        refused => {
            refused_as_400(refused, "parse_json");
            None
        }
    }
}

/// The body parsed as `T` and converted into the command `C`, as its handler does.
fn check_into<T, C>(data: &[u8])
where
    T: DeserializeOwned,
    C: TryFrom<T, Error = Error>,
{
    refused_as_400(
        parse_command::<T, C>(data, C::try_from),
        std::any::type_name::<C>(),
    );
}

/// Like [`check_into`] for a body read into two commands (a course is new or a change).
fn check_into_both<T, C, D>(data: &[u8])
where
    T: DeserializeOwned + Clone,
    C: TryFrom<T, Error = Error>,
    D: TryFrom<T, Error = Error>,
{
    refused_as_400(
        parse_command::<T, C>(data, C::try_from),
        std::any::type_name::<C>(),
    );
    refused_as_400(
        parse_command::<T, D>(data, D::try_from),
        std::any::type_name::<D>(),
    );
}

fuzz_target!(|data: &[u8]| {
    // Bodies over the JSON cap are refused with 413 before parsing.
    if data.len() > langcamp_http::request::JSON_LIMIT {
        return;
    }
    // auth
    check_into::<OtpRequestInput, Email>(data);
    check_into::<OtpVerifyInput, OtpSignIn>(data);
    check_into::<RefreshInput, RefreshToken>(data);
    check::<LogoutInput>(data);
    // users
    check_into_both::<ProfileInput, ProfileChange, Registration>(data);
    check_into::<AdminProfileInput, ProfileChange>(data);
    check_into::<RoleInput, Role>(data);
    check_into::<EmailInput, Email>(data);
    // contacts
    check_into::<ContactInput, NewContact>(data);
    check_into::<ReplyInput, ReplyText>(data);
    check_into::<ContactStatusInput, ContactStatus>(data);
    // courses, placement tests, materials, settings
    check_into_both::<CourseInput, NewCourse, CourseChange>(data);
    check_into::<TestInput, NewTest>(data);
    // A test's patch and a submission are checked against the stored test, in core.
    check::<TestPatch>(data);
    check::<SubmitInput>(data);
    check_into::<MaterialInput, NewMaterial>(data);
    check_into::<MaterialUpdate, MaterialChange>(data);
    check_into::<AssignInput, Assignment>(data);
    check_into::<SettingInput, NewSetting>(data);
    // Any JSON value at all (the shape the nesting limit protects).
    check::<serde_json::Value>(data);
});
