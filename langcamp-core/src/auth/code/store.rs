//! The writes of a sign-in with a code: the code used up, the user found or created, the
//! sign-in and its first refresh token.

use super::{OTP_MAX_ATTEMPTS, SignIn};
use crate::auth::factors;
use crate::auth::session::{self, FactorMethod, has_factor};
use crate::domain::error::{Error, Result};
use crate::platform::db::{Arg, Row as _, Write, WriteConn};
use crate::users::{self, User};

/// Who a code signed in: the user, the new sign-in's id and the user's second factors.
pub(super) struct SignedInUser {
    pub user: User,
    pub session_id: String,
    pub methods: Vec<FactorMethod>,
}

impl Write for SignIn {
    type Output = Option<SignedInUser>;

    async fn run<C: WriteConn>(self, conn: &mut C) -> Result<Self::Output> {
        let email = self.email.as_str();
        // Deleting the row is the single use: of concurrent verifies, one deletes it. The
        // stored hash is one of the code's hashes under each configured secret, given as
        // one comma-separated text (hexadecimal: a stored hash can only match one whole).
        let consumed = conn
            .fetch_first(
                "DELETE FROM otp_codes
                 WHERE email = $1 AND length(code_hash) = 64 AND $2 LIKE '%' || code_hash || '%'
                   AND expires_at > $3 AND attempts < $4
                 RETURNING email",
                &[
                    Arg::Text(email),
                    Arg::Text(&self.hashes),
                    Arg::Int(self.now),
                    Arg::Int(OTP_MAX_ATTEMPTS),
                ],
            )
            .await?;
        if consumed.is_none() {
            // A wrong try counts against the live code, whoever sends it (so this is a
            // success of the write: the count must be kept).
            conn.exec(
                "UPDATE otp_codes SET attempts = attempts + 1 WHERE email = $1 AND expires_at > $2",
                &[Arg::Text(email), Arg::Int(self.now)],
            )
            .await?;
            return Ok(None);
        }
        let (user, methods) =
            match users::create_user_if_new(conn, &self.email, &self.locale, self.now).await? {
                // A user this sign-in created has no second factor yet.
                Some(user) => (user, Vec::new()),
                // A returning user: their row says whether they have a factor, and only the
                // factors of one who has are read (most users have none).
                None => {
                    let row = conn
                        .fetch_first(
                            concat!(
                                "SELECT ",
                                users::user_columns!(),
                                ", ",
                                has_factor!("users.id"),
                                "FROM users WHERE email = $1"
                            ),
                            &[Arg::Text(email)],
                        )
                        .await?
                        .ok_or_else(|| {
                            Error::internal("user vanished right after the sign-in found it")
                        })?;
                    let user = User::from_row(&row)?;
                    let methods = if row.int("has_factor")? != 0 {
                        factors::methods_of(conn, &user.id).await?
                    } else {
                        Vec::new()
                    };
                    (user, methods)
                }
            };
        // A new sign-in, its end and first use set at once, and its first refresh token.
        conn.exec(
            "INSERT INTO sessions (id, user_id, created_at, expires_at, revoked_at, last_used_at)
             VALUES ($1, $2, $3, $4, NULL, $3)",
            &[
                Arg::Text(&self.session_id),
                Arg::Text(&user.id),
                Arg::Int(self.now),
                Arg::Int(self.refresh.expires_at),
            ],
        )
        .await?;
        session::record_refresh_token(conn, &self.session_id, &self.refresh, self.now).await?;
        Ok(Some(SignedInUser {
            user,
            session_id: self.session_id,
            methods,
        }))
    }
}
