//! A software passkey: a platform authenticator with user verification, as a browser
//! drives it, for the passkey tests (CONTRACT §21). It answers the server's options (the
//! WebAuthn Level 3 JSON forms) with the JSON a browser's `credential.toJSON()` gives:
//! `none` attestation, an ES256 (P-256) key, a discoverable credential holding the user
//! handle, and a signature counter the test can set (to send one that goes backwards).
//!
//! The real-browser check (`scripts/passkey-browser-check.sh`, Chromium's virtual
//! authenticator) proves the same ceremonies against an authenticator we did not write.

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use p256::ecdsa::signature::Signer;
use p256::ecdsa::{Signature, SigningKey};
use serde_cbor_2::Value as Cbor;
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

/// User present, user verified.
const UP_UV: u8 = 0x01 | 0x04;
/// Attested credential data included.
const AT: u8 = 0x40;

fn b64(bytes: &[u8]) -> String {
    URL_SAFE_NO_PAD.encode(bytes)
}

fn unb64(text: &str) -> Vec<u8> {
    URL_SAFE_NO_PAD
        .decode(text.trim_end_matches('='))
        .expect("base64url in the options")
}

/// A passkey held by the test.
#[derive(Clone, Debug)]
pub struct SoftPasskey {
    key: SigningKey,
    pub credential_id: Vec<u8>,
    user_handle: Vec<u8>,
    /// The signature counter the next assertion sends (then it counts on by one).
    pub counter: u32,
}

fn client_data(kind: &str, challenge: &str, origin: &str) -> Vec<u8> {
    json!({ "type": kind, "challenge": challenge, "origin": origin, "crossOrigin": false })
        .to_string()
        .into_bytes()
}

fn authenticator_data(rp_id: &str, flags: u8, counter: u32) -> Vec<u8> {
    let mut data = Sha256::digest(rp_id.as_bytes()).to_vec();
    data.push(flags);
    data.extend_from_slice(&counter.to_be_bytes());
    data
}

impl SoftPasskey {
    /// Makes a passkey for creation `options` (`PublicKeyCredentialCreationOptionsJSON`)
    /// in a page of `origin`; the passkey and the `RegistrationResponseJSON` to send.
    pub fn create(options: &Value, origin: &str) -> (SoftPasskey, Value) {
        SoftPasskey::create_with_id(options, origin, uuid::Uuid::new_v4().as_bytes().to_vec())
    }

    /// [`SoftPasskey::create`] with a credential id of the test's choosing (another
    /// authenticator's, to see it refused).
    pub fn create_with_id(
        options: &Value,
        origin: &str,
        credential_id: Vec<u8>,
    ) -> (SoftPasskey, Value) {
        let seed: Vec<u8> = [uuid::Uuid::new_v4(), uuid::Uuid::new_v4()]
            .iter()
            .flat_map(|u| *u.as_bytes())
            .collect();
        let key = SigningKey::from_slice(&seed).expect("a P-256 key");
        let rp_id = options["rp"]["id"].as_str().expect("rp.id");
        let challenge = options["challenge"].as_str().expect("challenge");
        let user_handle = unb64(options["user"]["id"].as_str().expect("user.id"));

        let point = key.verifying_key().to_encoded_point(false);
        let cose_key = Cbor::Map(
            [
                (Cbor::Integer(1), Cbor::Integer(2)),
                (Cbor::Integer(3), Cbor::Integer(-7)),
                (Cbor::Integer(-1), Cbor::Integer(1)),
                (
                    Cbor::Integer(-2),
                    Cbor::Bytes(point.x().expect("x").to_vec()),
                ),
                (
                    Cbor::Integer(-3),
                    Cbor::Bytes(point.y().expect("y").to_vec()),
                ),
            ]
            .into_iter()
            .collect(),
        );
        let mut auth_data = authenticator_data(rp_id, UP_UV | AT, 0);
        auth_data.extend_from_slice(&[0u8; 16]);
        auth_data.extend_from_slice(
            &u16::try_from(credential_id.len())
                .expect("short id")
                .to_be_bytes(),
        );
        auth_data.extend_from_slice(&credential_id);
        auth_data.extend_from_slice(&serde_cbor_2::to_vec(&cose_key).expect("CBOR"));
        let attestation = Cbor::Map(
            [
                (Cbor::Text("fmt".into()), Cbor::Text("none".into())),
                (Cbor::Text("attStmt".into()), Cbor::Map(Default::default())),
                (Cbor::Text("authData".into()), Cbor::Bytes(auth_data)),
            ]
            .into_iter()
            .collect(),
        );
        let response = json!({
            "id": b64(&credential_id),
            "rawId": b64(&credential_id),
            "type": "public-key",
            "response": {
                "clientDataJSON": b64(&client_data("webauthn.create", challenge, origin)),
                "attestationObject": b64(&serde_cbor_2::to_vec(&attestation).expect("CBOR")),
                "transports": ["internal"],
            },
            "authenticatorAttachment": "platform",
            "clientExtensionResults": {},
        });
        let passkey = SoftPasskey {
            key,
            credential_id,
            user_handle,
            counter: 1,
        };
        (passkey, response)
    }

    /// Answers request `options` (`PublicKeyCredentialRequestOptionsJSON`) in a page of
    /// `origin`: the `AuthenticationResponseJSON` to send. The counter counts on.
    pub fn get(&mut self, options: &Value, origin: &str) -> Value {
        let rp_id = options["rpId"].as_str().expect("rpId");
        let challenge = options["challenge"].as_str().expect("challenge");
        let client_data = client_data("webauthn.get", challenge, origin);
        let auth_data = authenticator_data(rp_id, UP_UV, self.counter);
        self.counter += 1;
        let mut signed = auth_data.clone();
        signed.extend_from_slice(&Sha256::digest(&client_data));
        let signature: Signature = self.key.sign(&signed);
        json!({
            "id": b64(&self.credential_id),
            "rawId": b64(&self.credential_id),
            "type": "public-key",
            "response": {
                "clientDataJSON": b64(&client_data),
                "authenticatorData": b64(&auth_data),
                "signature": b64(signature.to_der().as_bytes()),
                "userHandle": b64(&self.user_handle),
            },
            "authenticatorAttachment": "platform",
            "clientExtensionResults": {},
        })
    }
}
