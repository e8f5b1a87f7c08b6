//! `langcamp openapi`: print the OpenAPI document served at `/swagger/json`.

use crate::CliError;

pub fn run() -> Result<(), CliError> {
    println!("{}", langcamp_http::docs::openapi_json());
    Ok(())
}
