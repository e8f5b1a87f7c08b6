//! The server's keys (CONTRACT §22): the current secret and the previous ones, and every
//! key a purpose needs, derived from them.
//!
//! Why: the server secret signs tokens and keys everything kept sealed or hashed (queued
//! mail, one-time code hashes, refresh-token successors, TOTP secrets, webhook secrets).
//! One secret that can never change is one that can never be rotated after a leak, and a
//! secret made anew at every start (the embedded default used to) loses all of it at
//! every restart. So:
//!
//! * the current secret is `JWT_SECRET`, or without it a random one kept in
//!   `DATA_DIR/secret.key` ([`load_or_create_secret_file`]); earlier secrets stay readable
//!   through `JWT_SECRET_PREVIOUS`. New values are only ever signed, sealed or hashed
//!   under the current secret;
//! * each secret has a short public id ([`KeySet::id`]): tokens carry it as `kid`, sealed
//!   values carry it in their first bytes, so a value names the key that opens it; a hash
//!   names none and is matched against the hashes under every secret;
//! * every purpose has its own key, derived with HKDF-SHA-256 (RFC 5869) from the secret
//!   with the purpose as `info`, so a leak of one derived key tells nothing about the
//!   others or the secret. Tokens are signed with the secret itself (HS256), as before
//!   the keyring: an instance of the previous release, beside this one during a rolling
//!   upgrade, still accepts them (it ignores `kid`);
//! * a sealed value is XChaCha20-Poly1305 with associated data that binds it to its row
//!   (a mail's id, a factor's id): moved to another row, it does not open;
//! * values from before this keyring (keys derived with HMAC and a label, ciphertexts
//!   without a key id) still open and match under every configured secret ([`Legacy`]),
//!   and count as needing a previous key until they are written again.
//!
//! Comparisons of secrets in memory use `subtle`'s constant-time equality.

use std::fmt;
use std::io::Write as _;
use std::path::{Path, PathBuf};

use chacha20poly1305::XChaCha20Poly1305;
use chacha20poly1305::aead::{Aead, KeyInit, Payload};
use hkdf::Hkdf;
use sha2::Sha256;
use sqlx::AssertSqlSafe;

use crate::domain::error::{Error, Result};
use crate::platform::config::Config;
use crate::platform::crypto::{hex, hmac_sha256, random_bytes};
use crate::platform::db::Db;

/// The file that keeps the embedded default's secret, in `DATA_DIR`.
pub const SECRET_FILE: &str = "secret.key";

/// The shortest secret accepted (`JWT_SECRET`, `JWT_SECRET_PREVIOUS`).
pub const MIN_SECRET_LEN: usize = 16;

/// The first byte of a sealed value that names its key.
const SEALED_V2: u8 = 2;
const KEY_ID_LEN: usize = 4;
const NONCE_LEN: usize = 24;

/// What a derived key is for; each has its own key.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Purpose {
    /// Queued mail in the outbox (it may carry one-time codes).
    Outbox,
    /// Second-factor secrets (TOTP) at rest.
    FactorSecret,
    /// The signing secrets of webhook endpoints (CONTRACT §24).
    WebhookSecret,
}

impl Purpose {
    fn info(self) -> &'static [u8] {
        match self {
            Purpose::Outbox => b"langcamp/v2/seal/outbox",
            Purpose::FactorSecret => b"langcamp/v2/seal/factor-secret",
            Purpose::WebhookSecret => b"langcamp/v2/seal/webhook-secret",
        }
    }
}

/// The keys of one secret.
#[derive(Clone)]
pub struct KeySet {
    id: [u8; KEY_ID_LEN],
    /// Signs access tokens: the secret itself.
    jwt: Vec<u8>,
    otp: [u8; 32],
    refresh: [u8; 32],
    outbox: [u8; 32],
    factor_secret: [u8; 32],
    webhook_secret: [u8; 32],
}

impl KeySet {
    /// Every key of `secret`, derived with HKDF-SHA-256 (no salt: the secret is uniform or
    /// an operator's long random string, and its id is derived the same way).
    pub fn derive(secret: &str) -> KeySet {
        let hkdf = Hkdf::<Sha256>::new(None, secret.as_bytes());
        let key = |info: &[u8]| {
            let mut out = [0u8; 32];
            hkdf.expand(info, &mut out)
                .unwrap_or_else(|_| unreachable!("32 bytes is a valid HKDF-SHA-256 length"));
            out
        };
        let mut id = [0u8; KEY_ID_LEN];
        id.copy_from_slice(&key(b"langcamp/v2/key-id")[..KEY_ID_LEN]);
        KeySet {
            id,
            jwt: secret.as_bytes().to_vec(),
            otp: key(b"langcamp/v2/otp-code-hash"),
            refresh: key(b"langcamp/v2/refresh-successor"),
            outbox: key(Purpose::Outbox.info()),
            factor_secret: key(Purpose::FactorSecret.info()),
            webhook_secret: key(Purpose::WebhookSecret.info()),
        }
    }

    /// The public id of this secret: 8 hexadecimal characters (a token's `kid`).
    pub fn id(&self) -> String {
        hex(&self.id)
    }

    fn seal_key(&self, purpose: Purpose) -> &[u8; 32] {
        match purpose {
            Purpose::Outbox => &self.outbox,
            Purpose::FactorSecret => &self.factor_secret,
            Purpose::WebhookSecret => &self.webhook_secret,
        }
    }
}

/// The keys of one secret as the releases before the keyring derived them (an HMAC of a
/// label): for reading what they stored, never for writing.
#[derive(Clone)]
struct Legacy {
    otp: [u8; 32],
    refresh: [u8; 32],
    outbox: [u8; 32],
    factor_secret: [u8; 32],
    recovery: [u8; 32],
}

impl Legacy {
    fn derive(secret: &str) -> Legacy {
        let secret = secret.as_bytes();
        Legacy {
            otp: hmac_sha256(secret, b"langcamp/otp-code-hash/v1"),
            refresh: hmac_sha256(secret, b"langcamp/refresh-successor/v1"),
            outbox: hmac_sha256(secret, b"langcamp/outbox-seal/v1"),
            factor_secret: hmac_sha256(secret, b"langcamp/factor-secret-seal/v1"),
            recovery: hmac_sha256(secret, b"langcamp/recovery-code-hash/v1"),
        }
    }

    fn seal_key(&self, purpose: Purpose) -> Option<&[u8; 32]> {
        match purpose {
            Purpose::Outbox => Some(&self.outbox),
            Purpose::FactorSecret => Some(&self.factor_secret),
            Purpose::WebhookSecret => None,
        }
    }
}

/// A sealed value, opened.
#[derive(Debug, PartialEq, Eq)]
pub struct Opened {
    pub plain: Vec<u8>,
    /// Whether it was sealed under the current secret in the current form; when not, the
    /// operation that read it writes it again ([`Keyring::seal`]).
    pub current: bool,
}

/// The current secret's keys and the previous ones'.
#[derive(Clone)]
pub struct Keyring {
    current: KeySet,
    previous: Vec<KeySet>,
    /// Every configured secret's keys as the releases before the keyring derived them,
    /// the current secret's first.
    legacy: Vec<Legacy>,
}

impl fmt::Debug for Keyring {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Keyring")
            .field("current", &self.current.id())
            .field(
                "previous",
                &self.previous.iter().map(KeySet::id).collect::<Vec<_>>(),
            )
            .finish()
    }
}

impl Keyring {
    /// The keyring of `current` and `previous` (the order of `JWT_SECRET_PREVIOUS`).
    pub fn new(current: &str, previous: &[&str]) -> Keyring {
        Keyring {
            current: KeySet::derive(current),
            previous: previous.iter().map(|s| KeySet::derive(s)).collect(),
            legacy: std::iter::once(current)
                .chain(previous.iter().copied())
                .map(Legacy::derive)
                .collect(),
        }
    }

    /// The current secret's keys.
    pub fn current(&self) -> &KeySet {
        &self.current
    }

    /// Whether any previous secret is configured.
    pub fn has_previous(&self) -> bool {
        !self.previous.is_empty()
    }

    fn all(&self) -> impl Iterator<Item = &KeySet> {
        std::iter::once(&self.current).chain(&self.previous)
    }

    /// The current key id and the key that signs access tokens (HS256).
    pub fn token_signing_key(&self) -> (String, &[u8]) {
        (self.current.id(), &self.current.jwt)
    }

    /// The keys that may have signed a token with `kid` (none: the token's key is not
    /// configured); a token without `kid` is from before the keyring, and any configured
    /// secret may have signed it.
    pub fn token_keys(&self, kid: Option<&str>) -> Vec<&[u8]> {
        self.all()
            .filter(|set| kid.is_none_or(|kid| set.id() == kid))
            .map(|set| &set.jwt[..])
            .collect()
    }

    /// The keyed hash under which a one-time code is stored, bound to its address, under
    /// the current secret.
    pub fn otp_hash(&self, email: &str, code: &str) -> String {
        otp_hash_under(&self.current.otp, email, code)
    }

    /// The hashes a stored one-time code may have: under every configured secret, current
    /// first (a code issued before a rotation is accepted until it expires).
    pub fn otp_hashes(&self, email: &str, code: &str) -> Vec<String> {
        self.all()
            .map(|set| &set.otp)
            .chain(self.legacy.iter().map(|l| &l.otp))
            .map(|key| otp_hash_under(key, email, code))
            .collect()
    }

    /// The refresh token that rotating `token` produces: a keyed hash of it, so every
    /// rotation of the same token (two tabs refreshing at once, on any instance) answers
    /// the same successor without the server ever storing a token in plain text. Only the
    /// holder of `token` and the server can compute it; it carries 256 bits like a random
    /// one.
    pub fn successor_token(&self, token: &str) -> String {
        hex(&hmac_sha256(&self.current.refresh, token.as_bytes()))
    }

    /// The successors `token` may have had under every configured secret, current first
    /// (a rotation made just before the secret changed).
    pub fn successor_tokens(&self, token: &str) -> Vec<String> {
        self.all()
            .map(|set| &set.refresh)
            .chain(self.legacy.iter().map(|l| &l.refresh))
            .map(|key| hex(&hmac_sha256(key, token.as_bytes())))
            .collect()
    }

    /// The hashes a recovery code made before codes were hashed with Argon2 may have,
    /// bound to its user, under every configured secret.
    pub fn legacy_recovery_hashes(&self, user_id: &str, code: &str) -> Vec<String> {
        self.legacy
            .iter()
            .map(|l| hex(&hmac_sha256(&l.recovery, &bound(user_id, code))))
            .collect()
    }

    /// Seals `plain` for `purpose` under the current secret, bound to `row` (the id of the
    /// row it is stored in): the key's id, a random nonce, then XChaCha20-Poly1305.
    pub fn seal(&self, purpose: Purpose, row: &str, plain: &[u8]) -> Vec<u8> {
        let cipher = XChaCha20Poly1305::new(self.current.seal_key(purpose).into());
        let nonce: [u8; NONCE_LEN] = random_bytes();
        let sealed = cipher
            .encrypt(
                &nonce.into(),
                Payload {
                    msg: plain,
                    aad: row.as_bytes(),
                },
            )
            .unwrap_or_else(|_| unreachable!("encryption of an in-memory buffer cannot fail"));
        let mut out = Vec::with_capacity(1 + KEY_ID_LEN + NONCE_LEN + sealed.len());
        out.push(SEALED_V2);
        out.extend_from_slice(&self.current.id);
        out.extend_from_slice(&nonce);
        out.extend_from_slice(&sealed);
        out
    }

    /// Opens what [`Keyring::seal`] (or a release before the keyring) sealed for
    /// `purpose` in the row `row`; `None` when no configured secret opens it.
    pub fn open(&self, purpose: Purpose, row: &str, sealed: &[u8]) -> Option<Opened> {
        if let Some((&SEALED_V2, rest)) = sealed.split_first()
            && rest.len() > KEY_ID_LEN + NONCE_LEN
        {
            let (id, rest) = rest.split_at(KEY_ID_LEN);
            let (nonce, ciphertext) = rest.split_at(NONCE_LEN);
            for (n, set) in self.all().enumerate() {
                if set.id[..] != *id {
                    continue;
                }
                if let Some(plain) = open_under(set.seal_key(purpose), nonce, ciphertext, row) {
                    return Some(Opened {
                        plain,
                        current: n == 0,
                    });
                }
            }
        }
        // A value from before the keyring: a nonce and the ciphertext, no associated data.
        if sealed.len() > NONCE_LEN {
            let (nonce, ciphertext) = sealed.split_at(NONCE_LEN);
            for legacy in &self.legacy {
                let Some(key) = legacy.seal_key(purpose) else {
                    continue;
                };
                if let Some(plain) = open_under(key, nonce, ciphertext, "") {
                    return Some(Opened {
                        plain,
                        current: false,
                    });
                }
            }
        }
        None
    }
}

/// A column of sealed values that [`reseal`] keeps under the current secret: its table,
/// the row id (the associated data the values are bound to) and a condition on the rows
/// that matter (SQL, fixed text).
#[derive(Clone, Copy, Debug)]
pub struct SealedColumn {
    pub table: &'static str,
    pub column: &'static str,
    pub purpose: Purpose,
    /// Which rows hold a value that matters, as a `WHERE` condition.
    pub rows: &'static str,
}

/// What a look at sealed or hashed values found (`langcamp keys reseal`, `langcamp doctor`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct KeyCounts {
    /// Written again under the current secret.
    pub resealed: u64,
    /// Still readable only under a previous secret (or the form before the keyring).
    pub need_previous: u64,
    /// Readable under no configured secret.
    pub unreadable: u64,
}

impl std::ops::AddAssign for KeyCounts {
    fn add_assign(&mut self, other: KeyCounts) {
        self.resealed += other.resealed;
        self.need_previous += other.need_previous;
        self.unreadable += other.unreadable;
    }
}

/// Reads every value of `sealed` (in chunks, by id) and, when `write`, seals each one read
/// under a previous secret again under the current one: a conditional update, so a value
/// changed meanwhile by the service is left to it. Safe while the service runs, and
/// idempotent.
pub async fn reseal(
    db: &Db,
    keys: &Keyring,
    sealed: SealedColumn,
    write: bool,
) -> Result<KeyCounts> {
    let SealedColumn {
        table,
        column,
        purpose,
        rows,
    } = sealed;
    let select = format!(
        "SELECT id, {column} AS sealed FROM {table} WHERE ({rows}) AND {column} IS NOT NULL AND id > $1 ORDER BY id LIMIT 500"
    );
    let update = format!("UPDATE {table} SET {column} = $1 WHERE id = $2 AND {column} = $3");
    let mut counts = KeyCounts::default();
    let mut after = String::new();
    loop {
        let chunk: Vec<(String, Vec<u8>)> = sqlx::query_as(AssertSqlSafe(select.clone()))
            .bind(&after)
            .fetch_all(db.reader())
            .await?;
        let Some((last, _)) = chunk.last() else {
            return Ok(counts);
        };
        after = last.clone();
        for (id, value) in chunk {
            match keys.open(purpose, &id, &value) {
                None => counts.unreadable += 1,
                Some(opened) if opened.current => {}
                Some(_) if !write => counts.need_previous += 1,
                Some(opened) => {
                    let again = keys.seal(purpose, &id, &opened.plain);
                    let mut tx = db.begin().await?;
                    let done = sqlx::query(AssertSqlSafe(update.clone()))
                        .bind(again)
                        .bind(&id)
                        .bind(value)
                        .execute(&mut *tx)
                        .await?
                        .rows_affected();
                    tx.commit().await?;
                    counts.resealed += done;
                }
            }
        }
    }
}

/// `user_id` (or an address) and a code, as one keyed-hash input.
fn bound(owner: &str, code: &str) -> Vec<u8> {
    let mut data = Vec::with_capacity(owner.len() + code.len() + 1);
    data.extend_from_slice(owner.as_bytes());
    data.push(0);
    data.extend_from_slice(code.as_bytes());
    data
}

fn otp_hash_under(key: &[u8; 32], email: &str, code: &str) -> String {
    hex(&hmac_sha256(key, &bound(email, code)))
}

fn open_under(key: &[u8; 32], nonce: &[u8], ciphertext: &[u8], row: &str) -> Option<Vec<u8>> {
    let nonce: [u8; NONCE_LEN] = nonce.try_into().ok()?;
    let cipher = XChaCha20Poly1305::new(key.into());
    cipher
        .decrypt(
            &nonce.into(),
            Payload {
                msg: ciphertext,
                aad: row.as_bytes(),
            },
        )
        .ok()
}

/// The keyring `config` names, and where its current secret came from: `JWT_SECRET`, else
/// the secret file in `DATA_DIR` (made now if there is none); `JWT_SECRET_PREVIOUS` for
/// the previous ones.
pub fn from_config(config: &Config) -> Result<(Keyring, SecretSource)> {
    let (current, source) = match &config.jwt_secret {
        Some(secret) => (secret.expose().to_owned(), SecretSource::Environment),
        None => (
            load_or_create_secret_file(&config.data_dir)?,
            SecretSource::File(config.data_dir.join(SECRET_FILE)),
        ),
    };
    let previous: Vec<&str> = config
        .jwt_secret_previous
        .iter()
        .map(|s| s.expose())
        .collect();
    Ok((Keyring::new(&current, &previous), source))
}

/// Where the current secret comes from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SecretSource {
    /// `JWT_SECRET`.
    Environment,
    /// The embedded default's file, made at the first start.
    File(PathBuf),
}

/// The secret kept in `data_dir/secret.key`, made at the first call (a random 256-bit
/// secret, hexadecimal, in a file of mode 0600 that no other process can see half
/// written: it is written under another name, then linked into place, so of two first
/// starts at once one secret wins and both read it).
pub fn load_or_create_secret_file(data_dir: &Path) -> Result<String> {
    let path = data_dir.join(SECRET_FILE);
    if let Some(secret) = read_secret_file(&path)? {
        return Ok(secret);
    }
    let unavailable = |what: &str, e: std::io::Error| {
        Error::Unavailable(
            format!("cannot {what} {}: {e} (or set JWT_SECRET)", path.display()).into(),
        )
    };
    std::fs::create_dir_all(data_dir).map_err(|e| unavailable("create the folder of", e))?;
    let secret = hex(&random_bytes::<32>());
    let draft = data_dir.join(format!(".{SECRET_FILE}.{}", hex(&random_bytes::<8>())));
    let written = (|| {
        let mut options = std::fs::OpenOptions::new();
        options.write(true).create_new(true);
        #[cfg(unix)]
        std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
        let mut file = options.open(&draft)?;
        file.write_all(format!("{secret}\n").as_bytes())?;
        file.sync_all()?;
        std::fs::hard_link(&draft, &path)
    })();
    let _ = std::fs::remove_file(&draft);
    match written {
        Ok(()) => {
            tracing::info!(path = %path.display(), "made the server secret (JWT_SECRET is not set)");
            Ok(secret)
        }
        // Another process made it first: theirs is the one.
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => read_secret_file(&path)?
            .ok_or_else(|| unavailable("read", std::io::ErrorKind::NotFound.into())),
        Err(e) => Err(unavailable("write", e)),
    }
}

/// The secret in `path`, if the file exists; an error when it cannot be read or holds no
/// usable secret (never replaced: what it sealed would be lost).
pub fn read_secret_file(path: &Path) -> Result<Option<String>> {
    match std::fs::read_to_string(path) {
        Ok(text) => {
            let secret = text.trim();
            if secret.len() < MIN_SECRET_LEN {
                return Err(Error::Unavailable(
                    format!(
                        "{} holds no secret of at least {MIN_SECRET_LEN} characters; restore it from a backup (or set JWT_SECRET)",
                        path.display()
                    )
                    .into(),
                ));
            }
            Ok(Some(secret.to_owned()))
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(Error::Unavailable(
            format!("cannot read {}: {e}", path.display()).into(),
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const A: &str = "first-secret-0123456789";
    const B: &str = "second-secret-0123456789";

    #[test]
    fn a_value_opens_under_its_secret_and_row_only() {
        let keys = Keyring::new(A, &[]);
        let sealed = keys.seal(Purpose::Outbox, "row-1", b"your code is 123456");
        assert!(!sealed.windows(6).any(|w| w == b"123456"));
        assert_eq!(
            keys.open(Purpose::Outbox, "row-1", &sealed),
            Some(Opened {
                plain: b"your code is 123456".to_vec(),
                current: true
            })
        );
        assert_eq!(
            keys.open(Purpose::Outbox, "row-2", &sealed),
            None,
            "bound to its row"
        );
        assert_eq!(
            keys.open(Purpose::FactorSecret, "row-1", &sealed),
            None,
            "a key per purpose"
        );
        assert_eq!(
            Keyring::new(B, &[]).open(Purpose::Outbox, "row-1", &sealed),
            None
        );
        assert_eq!(keys.open(Purpose::Outbox, "row-1", b"short"), None);
    }

    #[test]
    fn after_a_rotation_old_values_open_and_ask_to_be_sealed_again() {
        let old = Keyring::new(A, &[]);
        let sealed = old.seal(Purpose::FactorSecret, "f", b"secret");
        let rotated = Keyring::new(B, &[A]);
        let opened = rotated
            .open(Purpose::FactorSecret, "f", &sealed)
            .expect("a previous secret opens it");
        assert_eq!(opened.plain, b"secret");
        assert!(!opened.current);
        let again = rotated.seal(Purpose::FactorSecret, "f", &opened.plain);
        assert!(
            rotated
                .open(Purpose::FactorSecret, "f", &again)
                .is_some_and(|o| o.current)
        );
        assert_eq!(
            Keyring::new(B, &[]).open(Purpose::FactorSecret, "f", &sealed),
            None,
            "without the previous secret it is lost"
        );
    }

    #[test]
    fn values_sealed_before_the_keyring_still_open() {
        // What `Keys::seal` of the release before wrote: nonce, then the ciphertext under
        // an HMAC-derived key, no associated data.
        let key = hmac_sha256(A.as_bytes(), b"langcamp/outbox-seal/v1");
        let nonce = [7u8; NONCE_LEN];
        let cipher = XChaCha20Poly1305::new((&key).into());
        let mut old = nonce.to_vec();
        old.extend(
            cipher
                .encrypt(&nonce.into(), &b"queued mail"[..])
                .expect("sealed"),
        );
        for keys in [Keyring::new(A, &[]), Keyring::new(B, &[A])] {
            let opened = keys.open(Purpose::Outbox, "any-row", &old).expect("opens");
            assert_eq!(opened.plain, b"queued mail");
            assert!(!opened.current, "written again in the current form");
        }
    }

    #[test]
    fn codes_and_successors_match_under_every_configured_secret() {
        let old = Keyring::new(A, &[]);
        let rotated = Keyring::new(B, &[A]);
        let hash = old.otp_hash("a@example.com", "123456");
        assert_eq!(hash.len(), 64);
        assert!(
            rotated
                .otp_hashes("a@example.com", "123456")
                .contains(&hash)
        );
        assert_ne!(rotated.otp_hash("a@example.com", "123456"), hash);
        assert_ne!(hash, old.otp_hash("b@example.com", "123456"));
        assert!(
            !Keyring::new(B, &[])
                .otp_hashes("a@example.com", "123456")
                .contains(&hash)
        );
        let next = old.successor_token("token-a");
        assert_eq!(next, old.successor_token("token-a"));
        assert_ne!(next, old.successor_token("token-b"));
        assert!(rotated.successor_tokens("token-a").contains(&next));
        assert_eq!(
            rotated.successor_tokens("token-a")[0],
            rotated.successor_token("token-a")
        );
    }

    #[test]
    fn tokens_name_their_key_and_old_tokens_find_theirs() {
        let rotated = Keyring::new(B, &[A]);
        let (kid, key) = rotated.token_signing_key();
        assert_eq!(kid.len(), 8);
        assert_eq!(rotated.token_keys(Some(&kid)), vec![key]);
        let old_kid = Keyring::new(A, &[]).current().id();
        assert_ne!(old_kid, kid);
        assert_eq!(rotated.token_keys(Some(&old_kid)).len(), 1);
        assert!(rotated.token_keys(Some("00000000")).is_empty());
        assert_eq!(
            rotated.token_keys(None),
            vec![B.as_bytes(), A.as_bytes()],
            "a token from before the keyring names no key"
        );
        assert_eq!(
            key,
            B.as_bytes(),
            "signed with the secret, as the release before did"
        );
    }

    #[test]
    fn the_secret_file_is_made_once_private_and_then_kept() {
        let dir =
            std::env::temp_dir().join(format!("langcamp-keyring-{}", hex(&random_bytes::<6>())));
        let first = load_or_create_secret_file(&dir).expect("made");
        assert_eq!(first.len(), 64);
        assert_eq!(load_or_create_secret_file(&dir).expect("read"), first);
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(dir.join(SECRET_FILE))
                .expect("there")
                .permissions()
                .mode();
            assert_eq!(mode & 0o777, 0o600);
        }
        let strays: Vec<_> = std::fs::read_dir(&dir).expect("listed").collect();
        assert_eq!(strays.len(), 1, "no draft is left behind");
        std::fs::write(dir.join(SECRET_FILE), "short\n").expect("spoiled");
        assert!(matches!(
            load_or_create_secret_file(&dir),
            Err(Error::Unavailable(_))
        ));
        let _ = std::fs::remove_dir_all(&dir);
    }
}
