//! `langcamp openapi`: print the OpenAPI document served at `/swagger/json`.

pub fn run() -> Result<(), String> {
    println!("{}", langcamp_http::docs::openapi_json());
    Ok(())
}
