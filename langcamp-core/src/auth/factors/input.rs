//! What clients send to add, confirm and verify second factors (the wire inputs, with their
//! OpenAPI schemas), and the validated values the operations take.

use serde::Deserialize;
use utoipa::{PartialSchema, ToSchema};

use super::recovery;
use crate::auth::input::OtpCode;
use crate::domain::Text;
use crate::domain::error::{Error, Result};
use crate::domain::validate::{Problems, passed, required};

/// A factor's name, as its owner tells their factors apart ("Phone", "YubiKey").
pub type FactorName = Text<100>;

/// The body of `POST /me/factors/totp`.
#[derive(Clone, Debug, Default, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct TotpStartInput {
    /// What to call the factor (1 to 100 characters); default "Authenticator app".
    #[schema(value_type = Option<String>, min_length = 1, max_length = 100, example = "Phone")]
    pub name: Option<String>,
}

impl TryFrom<TotpStartInput> for FactorName {
    type Error = Error;

    fn try_from(input: TotpStartInput) -> Result<FactorName> {
        let name = input.name.as_deref().unwrap_or("Authenticator app");
        FactorName::parse("name", name).map_err(Error::invalid)
    }
}

/// The body of `POST /me/factors/totp/{id}/confirm`.
#[derive(Clone, Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct CodeInput {
    /// The 6-digit code the authenticator app shows now.
    #[schema(value_type = String, pattern = r"^[0-9]{6}$", example = "123456")]
    pub code: Option<String>,
}

impl TryFrom<CodeInput> for OtpCode {
    type Error = Error;

    fn try_from(input: CodeInput) -> Result<OtpCode> {
        OtpCode::parse(input.code.as_deref()).map_err(Error::invalid)
    }
}

/// How a second factor is proven (`method` of [`SecondFactorInput`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum ProofMethod {
    Totp,
    Recovery,
    Passkey,
}

/// The body of `POST /auth/second-factor/verify`: `{method: "totp", code}`,
/// `{method: "recovery", code}` or `{method: "passkey", challengeId, credential}`. Read
/// field by field, so that each problem gets its message; documented as one schema per
/// method ([`SecondFactorSchema`]).
#[derive(Clone, Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SecondFactorInput {
    pub method: Option<ProofMethod>,
    pub code: Option<String>,
    pub challenge_id: Option<String>,
    pub credential: Option<serde_json::Value>,
}

/// The body of `POST /auth/second-factor/verify`, as the document shows it: one schema
/// per `method`, each with the fields that method needs and no other.
#[derive(Deserialize, ToSchema)]
#[serde(tag = "method", rename_all = "lowercase", deny_unknown_fields)]
#[allow(dead_code)] // the body is read as `SecondFactorInput`; this is its schema
enum SecondFactorSchema {
    /// The code the user's authenticator app shows now.
    Totp {
        #[schema(pattern = r"^[0-9]{6}$", example = "123456")]
        code: String,
    },
    /// One of the user's unused recovery codes (`xxxx-xxxx`; case and dash ignored).
    Recovery {
        #[schema(pattern = r"^[A-Za-z0-9]{4}-?[A-Za-z0-9]{4}$", example = "k3p9-x2mf")]
        code: String,
    },
    /// An assertion of one of the user's passkeys.
    Passkey {
        /// The `challengeId` of `POST /auth/second-factor/options`.
        #[serde(rename = "challengeId")]
        #[schema(format = "uuid")]
        challenge_id: String,
        /// The `PublicKeyCredential` as its `toJSON()` gives it
        /// (`AuthenticationResponseJSON`).
        #[schema(value_type = Object)]
        credential: serde_json::Value,
    },
}

impl PartialSchema for SecondFactorInput {
    fn schema() -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
        SecondFactorSchema::schema()
    }
}

impl ToSchema for SecondFactorInput {}

/// A validated [`SecondFactorInput`].
#[derive(Clone, Debug, PartialEq)]
pub enum SecondFactorProof {
    Totp(OtpCode),
    /// A recovery code, normalized (lower case, no dash).
    Recovery(String),
    Passkey {
        challenge_id: String,
        credential: serde_json::Value,
    },
}

impl TryFrom<SecondFactorInput> for SecondFactorProof {
    type Error = Error;

    fn try_from(input: SecondFactorInput) -> Result<SecondFactorProof> {
        let method = input
            .method
            .ok_or_else(|| Error::invalid("method is required: totp, recovery or passkey"))?;
        let mut problems = Problems::new();
        let stray = |problems: &mut Problems, field: &str, present: bool| {
            if present {
                problems.add(format!("{field} is not used with this method"));
            }
        };
        let proof = match method {
            ProofMethod::Totp => {
                stray(&mut problems, "challengeId", input.challenge_id.is_some());
                stray(&mut problems, "credential", input.credential.is_some());
                problems
                    .take(OtpCode::parse(input.code.as_deref()))
                    .map(SecondFactorProof::Totp)
            }
            ProofMethod::Recovery => {
                stray(&mut problems, "challengeId", input.challenge_id.is_some());
                stray(&mut problems, "credential", input.credential.is_some());
                let code = required("code", input.code.as_deref(), |_, raw| {
                    recovery::normalized(raw)
                        .ok_or_else(|| "code must be a recovery code (xxxx-xxxx)".to_owned())
                });
                problems.take(code).map(SecondFactorProof::Recovery)
            }
            ProofMethod::Passkey => {
                stray(&mut problems, "code", input.code.is_some());
                let challenge_id = problems.take(required(
                    "challengeId",
                    input.challenge_id.as_deref(),
                    |_, raw| Ok(raw.trim().to_owned()),
                ));
                let credential = problems.take(
                    input
                        .credential
                        .ok_or_else(|| "credential is required".to_owned()),
                );
                match (challenge_id, credential) {
                    (Some(challenge_id), Some(credential)) => Some(SecondFactorProof::Passkey {
                        challenge_id,
                        credential,
                    }),
                    _ => None,
                }
            }
        };
        problems.finish()?;
        passed(proof)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn input(json: serde_json::Value) -> Result<SecondFactorProof> {
        let input: SecondFactorInput = serde_json::from_value(json).expect("the wire form");
        SecondFactorProof::try_from(input)
    }

    #[test]
    fn each_method_takes_its_own_fields() {
        assert_eq!(
            input(serde_json::json!({"method": "totp", "code": "123456"})).ok(),
            Some(SecondFactorProof::Totp(
                OtpCode::parse(Some("123456")).expect("a code")
            ))
        );
        assert_eq!(
            input(serde_json::json!({"method": "recovery", "code": "AB12-CD34"})).ok(),
            Some(SecondFactorProof::Recovery("ab12cd34".into()))
        );
        assert!(input(serde_json::json!({"method": "totp", "code": "12345"})).is_err());
        assert!(input(serde_json::json!({"method": "recovery", "code": "nope"})).is_err());
        assert!(
            input(serde_json::json!({"method": "totp", "code": "123456", "challengeId": "x"}))
                .is_err()
        );
        assert!(input(serde_json::json!({"method": "passkey", "challengeId": "x"})).is_err());
        assert!(input(serde_json::json!({"code": "123456"})).is_err());
    }
}

/// The body of `POST /me/passkeys`.
#[derive(Clone, Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PasskeyRegistrationInput {
    /// The `challengeId` of `POST /me/passkeys/options`.
    #[schema(value_type = String, format = "uuid")]
    pub challenge_id: Option<String>,
    /// The new `PublicKeyCredential` as its `toJSON()` gives it (`RegistrationResponseJSON`:
    /// `id`, `rawId`, `type`, `response`, `authenticatorAttachment`, `clientExtensionResults`).
    #[schema(value_type = Object)]
    pub credential: Option<serde_json::Value>,
    /// What to call the passkey (1 to 100 characters); default "Passkey".
    #[schema(value_type = Option<String>, min_length = 1, max_length = 100, example = "MacBook")]
    pub name: Option<String>,
}

/// The body of `POST /auth/passkey/verify`.
#[derive(Clone, Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PasskeyVerifyInput {
    /// The `challengeId` of `POST /auth/passkey/options`.
    #[schema(value_type = String, format = "uuid")]
    pub challenge_id: Option<String>,
    /// The `PublicKeyCredential` as its `toJSON()` gives it (`AuthenticationResponseJSON`).
    #[schema(value_type = Object)]
    pub credential: Option<serde_json::Value>,
}

/// The body of `POST /auth/passkey/options`: an empty object (or no body).
#[derive(Clone, Debug, Default, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct PasskeyOptionsInput {}

/// A validated passkey answer: its challenge and the browser's credential.
#[derive(Clone, Debug, PartialEq)]
pub struct PasskeyAnswer {
    pub challenge_id: String,
    pub credential: serde_json::Value,
}

/// A validated [`PasskeyRegistrationInput`].
#[derive(Clone, Debug, PartialEq)]
pub struct NewPasskey {
    pub answer: PasskeyAnswer,
    pub name: FactorName,
}

fn answer(
    challenge_id: Option<String>,
    credential: Option<serde_json::Value>,
    problems: &mut Problems,
) -> Option<PasskeyAnswer> {
    let challenge_id = problems.take(required(
        "challengeId",
        challenge_id.as_deref(),
        |_, raw| {
            let raw = raw.trim();
            if raw.is_empty() {
                Err("challengeId must not be empty".to_owned())
            } else {
                Ok(raw.to_owned())
            }
        },
    ));
    let credential = problems.take(match credential {
        Some(value) if value.is_object() => Ok(value),
        Some(_) => Err("credential must be an object (the credential's toJSON())".to_owned()),
        None => Err("credential is required".to_owned()),
    });
    Some(PasskeyAnswer {
        challenge_id: challenge_id?,
        credential: credential?,
    })
}

impl TryFrom<PasskeyVerifyInput> for PasskeyAnswer {
    type Error = Error;

    fn try_from(input: PasskeyVerifyInput) -> Result<PasskeyAnswer> {
        let mut problems = Problems::new();
        let answer = answer(input.challenge_id, input.credential, &mut problems);
        problems.finish()?;
        passed(answer)
    }
}

impl TryFrom<PasskeyRegistrationInput> for NewPasskey {
    type Error = Error;

    fn try_from(input: PasskeyRegistrationInput) -> Result<NewPasskey> {
        let mut problems = Problems::new();
        let answer = answer(input.challenge_id, input.credential, &mut problems);
        let name = problems.take(FactorName::parse(
            "name",
            input.name.as_deref().unwrap_or("Passkey"),
        ));
        problems.finish()?;
        Ok(NewPasskey {
            answer: passed(answer)?,
            name: passed(name)?,
        })
    }
}
