//! JSON request bodies: arbitrary bytes through `parse_json::<T>` for every input type of
//! the core that a handler reads with `ctx.json()` / `ctx.optional_json()` (or, for the
//! materials, builds from a multipart form).
//!
//! A parse either succeeds or yields a 400 (`Error::Validation`) with at least one
//! non-empty message; anything else (a panic, a stack overflow, another error) is a bug.
#![no_main]

use langcamp_core::Error;
use langcamp_core::auth::{LogoutInput, OtpRequestInput, OtpVerifyInput, RefreshInput};
use langcamp_core::contacts::{ContactInput, ContactStatusInput, ReplyInput};
use langcamp_core::courses::CourseInput;
use langcamp_core::materials::{AssignInput, MaterialInput, MaterialUpdate};
use langcamp_core::placement::{SubmitInput, TestInput, TestPatch};
use langcamp_core::settings::SettingInput;
use langcamp_core::users::{AdminProfileInput, EmailInput, ProfileInput, RoleInput};
use langcamp_http::request::parse_json;
use libfuzzer_sys::fuzz_target;
use serde::de::DeserializeOwned;

fn check<T: DeserializeOwned>(data: &[u8]) {
    match parse_json::<T>(data) {
        Ok(_) => {}
        Err(Error::Validation(messages)) => {
            assert!(!messages.is_empty());
            assert!(messages.iter().all(|m| !m.is_empty()));
        }
        Err(other) => panic!("parse_json gave a non-400 error: {other:?}"),
    }
}

fuzz_target!(|data: &[u8]| {
    // Bodies over the JSON cap are refused with 413 before parsing.
    if data.len() > langcamp_http::request::JSON_LIMIT {
        return;
    }
    // auth
    check::<OtpRequestInput>(data);
    check::<OtpVerifyInput>(data);
    check::<RefreshInput>(data);
    check::<LogoutInput>(data);
    // users
    check::<ProfileInput>(data);
    check::<AdminProfileInput>(data);
    check::<RoleInput>(data);
    check::<EmailInput>(data);
    // contacts
    check::<ContactInput>(data);
    check::<ReplyInput>(data);
    check::<ContactStatusInput>(data);
    // courses, placement tests, materials, settings
    check::<CourseInput>(data);
    check::<TestInput>(data);
    check::<TestPatch>(data);
    check::<SubmitInput>(data);
    check::<MaterialInput>(data);
    check::<MaterialUpdate>(data);
    check::<AssignInput>(data);
    check::<SettingInput>(data);
    // Any JSON value at all (the shape the nesting limit protects).
    check::<serde_json::Value>(data);
});
