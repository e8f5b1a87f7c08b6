//! The SQL of users: reads by id and e-mail, the sign-in insert, locks, and profile writes.
//!
//! Every write to a user is a piece of work for [`Langcamp::write_change`] ([`SetRole`],
//! [`ChangeUser`], [`CompleteRegistration`], [`DeleteUser`], [`CreateUser`]): the change,
//! its audit entry when staff made it, and the notice that makes every instance forget the
//! user's held sign-ins, so on SQLite they share the group commit with the writes beside
//! them. The rules that need the stored row (who may manage whom, the last superadmin) are
//! checked inside the piece, on the row it changes.

use sqlx::AnyConnection;

use super::input::{ProfileChange, UserQuery};
use super::{User, may_manage, no_user};
use crate::Langcamp;
use crate::audit::{Entries, Entry, Staff, StaffWrite, Target};
use crate::domain::actor::Role;
use crate::domain::error::{Error, Result};
use crate::domain::id::new_id;
use crate::domain::page::PageRequest;
use crate::domain::time::Timestamp;
use crate::domain::validate::Email;
use crate::platform::changes::Change;
use crate::platform::db::by_id;
use crate::platform::db::listing::{self, Conditions, Paged, Search};
use crate::platform::db::search_index::SearchIndex;
use crate::platform::db::{self, Arg, Backend, Locks, Row as _, Write, WriteConn, bit, flag};
use crate::webhooks::Announcement;

/// Every query that returns users reads these columns, in this order.
macro_rules! user_columns {
    () => {
        "id, email, name, role, is_registration_complete, age, gender, city, country, \
         country_code, phone_number, locale, created_at, updated_at "
    };
}
pub(crate) use user_columns;

macro_rules! select_users {
    ($($rest:expr),+) => {
        concat!("SELECT ", user_columns!(), "FROM users ", $($rest),+)
    };
}

/// The role of the stored user `id`. The table's CHECK constraint allows only the three
/// roles, so another one was written around it or by a newer release. Reading it as
/// `user` would quietly take a staff member's rights away (or hide a tampered row);
/// refusing the read (500, the row and the value in the log, never in an answer) shows
/// the fault where it is.
fn stored_role(id: &str, text: &str) -> Result<Role> {
    text.parse().map_err(|_| {
        Error::internal(format!(
            "user {id} has the role {text:?}, which this build does not know"
        ))
    })
}

impl User {
    /// A user from a row of [`user_columns!`], on either backend's connection.
    pub(crate) fn from_row(row: &impl db::Row) -> Result<User> {
        let id = row.text("id")?;
        let role = stored_role(&id, &row.text("role")?)?;
        Ok(User {
            id,
            email: row.text("email")?,
            name: row.opt_text("name")?,
            role,
            is_registration_complete: flag(row.int("is_registration_complete")?),
            age: row.opt_int("age")?,
            gender: row.opt_text("gender")?,
            city: row.opt_text("city")?,
            country: row.opt_text("country")?,
            country_code: row.opt_text("country_code")?,
            phone_number: row.opt_text("phone_number")?,
            locale: row.text("locale")?,
            created_at: Timestamp::from_millis(row.int("created_at")?),
            updated_at: Timestamp::from_millis(row.int("updated_at")?),
        })
    }
}
pub(crate) async fn find_user<C: WriteConn>(conn: &mut C, id: &str) -> Result<Option<User>> {
    let row = by_id::find(conn, select_users!("WHERE id = $1"), id).await?;
    row.as_ref().map(User::from_row).transpose()
}

/// The admin list: users newest first, their keys found in `users_created_at_id_idx`
/// (or the role's or the registration's index) before their rows are read.
const PAGED: Paged = Paged {
    joined: None,
    select: select_users!(""),
    from: "users",
    key: "id",
    order: "created_at DESC, id DESC",
};

/// The users' searched text: the e-mail and the name (migration 0150's indexes).
const SEARCH: Search = Search {
    postgres: "lower(email) || chr(1) || lower(COALESCE(name, ''))",
    sqlite: SEARCH_INDEX,
};

/// The users' FTS5 table on SQLite (migrations 0150 and 0190).
pub(crate) const SEARCH_INDEX: SearchIndex = SearchIndex {
    table: "users",
    fts: "user_search",
    keys: "user_search_keys",
    keyed: "user_id",
    text: "lower(email) || char(1) || lower(COALESCE(name, ''))",
};

/// The admin list's conditions, for the filters given.
fn conditions(backend: Backend, query: &UserQuery) -> Conditions {
    let mut conditions = Conditions::default();
    conditions
        .and_text("role = ?", query.role.map(Role::as_str))
        .and_int(
            "is_registration_complete = ?",
            query.is_registration_complete.map(i64::from),
        )
        .and_search(backend, &SEARCH, query.text.as_deref());
    conditions
}

/// How many users the admin list's `query` (no search) matches: from the counts the
/// triggers keep (`users.role.<role>`, `users.completed`, `users.role.<role>.completed`).
async fn total(conn: &mut AnyConnection, query: &UserQuery) -> Result<i64> {
    let counts = listing::counts(conn, "users.role.").await?;
    // Every role held (a role written around the table's check too, so that its row is
    // listed, and refused there), or the one asked for: `users.role.<role>` and
    // `users.role.<role>.completed`.
    let (mut all, mut completed) = (0, 0);
    for (name, n) in &counts {
        let Some(rest) = name.strip_prefix("users.role.") else {
            continue;
        };
        let (role, is_completed) = match rest.strip_suffix(".completed") {
            Some(role) => (role, true),
            None => (rest, false),
        };
        if query.role.is_some_and(|wanted| wanted.as_str() != role) {
            continue;
        }
        if is_completed {
            completed += n;
        } else {
            all += n;
        }
    }
    Ok(match query.is_registration_complete {
        None => all,
        Some(true) => completed,
        Some(false) => all - completed,
    })
}

/// A page of the admin list and the number of users matching.
pub(super) async fn list(
    conn: &mut AnyConnection,
    query: &UserQuery,
    page: PageRequest,
) -> Result<(Vec<User>, i64)> {
    let conditions = conditions(db::backend_of(conn), query);
    let (rows, total) = if query.text.is_some() {
        PAGED.search_page(conn, &conditions, page).await?
    } else {
        let total = total(conn, query).await?;
        (
            PAGED.page_by_keys(conn, &conditions, page, total).await?,
            total,
        )
    };
    let list = rows.iter().map(User::from_row).collect::<Result<_>>()?;
    Ok((list, total))
}

/// The admin list's users after the key `(created_at, id)`, newest first, `limit` of them:
/// one chunk of an export (the `exports` area), read by key rather than by offset so each
/// chunk costs the same however far the export has gone.
pub(crate) async fn chunk_after(
    conn: &mut AnyConnection,
    query: &UserQuery,
    after: (i64, &str),
    limit: i64,
) -> Result<Vec<User>> {
    let conditions = conditions(db::backend_of(conn), query);
    let rows = PAGED
        .chunk_after(conn, &conditions, "(created_at, id) <", after, limit)
        .await?;
    rows.iter().map(User::from_row).collect()
}

pub(crate) async fn find_user_by_email<C: WriteConn>(
    conn: &mut C,
    email: &str,
) -> Result<Option<User>> {
    let row = conn
        .fetch_first(select_users!("WHERE email = $1"), &[Arg::Text(email)])
        .await?;
    row.as_ref().map(User::from_row).transpose()
}

pub(super) async fn require_user<C: WriteConn>(conn: &mut C, id: &str) -> Result<User> {
    find_user(conn, id).await?.ok_or_else(no_user)
}

/// Creates a user with incomplete registration, unless the address has one already: the
/// new user, or `None` (the insert does nothing then). One statement: sign-in is a hot
/// write path.
pub(crate) async fn create_user_if_new<C: WriteConn>(
    conn: &mut C,
    email: &Email,
    locale: &str,
    now: i64,
) -> Result<Option<User>> {
    let id = new_id();
    let created = conn
        .fetch_first(
            concat!(
                "INSERT INTO users (id, email, role, is_registration_complete, locale, created_at, updated_at)
                 VALUES ($1, $2, 'user', 0, $3, $4, $4) ON CONFLICT (email) DO NOTHING
                 RETURNING ",
                user_columns!()
            ),
            &[
                Arg::Text(&id),
                Arg::Text(email.as_str()),
                Arg::Text(locale),
                Arg::Int(now),
            ],
        )
        .await?;
    created.as_ref().map(User::from_row).transpose()
}

/// How many superadmins there are, and still at the commit: their rows are held first
/// ([`Locks::hold_superadmins`]), so two superadmins demoted or deleted at once cannot
/// both see the other one still there.
pub(super) async fn count_superadmins<C: WriteConn>(conn: &mut C) -> Result<i64> {
    conn.hold_superadmins().await?;
    conn.fetch_first(
        "SELECT COUNT(*) AS n FROM users WHERE role = 'superadmin'",
        &[],
    )
    .await?
    .ok_or_else(|| Error::internal("a count returned no row"))?
    .int("n")
}

pub(super) async fn apply_change<C: WriteConn>(
    conn: &mut C,
    user: &User,
    change: ProfileChange,
    now: i64,
) -> Result<User> {
    if let Some(email) = &change.email
        && email.as_str() != user.email
        && let Some(other) = find_user_by_email(conn, email.as_str()).await?
        && other.id != user.id
    {
        return Err(Error::Conflict(
            "that e-mail address is already in use".into(),
        ));
    }
    let keep =
        |new: Option<Option<String>>, old: &Option<String>| new.unwrap_or_else(|| old.clone());
    let name = change.name.or_else(|| user.name.clone());
    let gender = keep(change.gender, &user.gender);
    let city = keep(change.city, &user.city);
    let country = keep(change.country, &user.country);
    let country_code = keep(change.country_code, &user.country_code);
    let phone_number = keep(change.phone_number, &user.phone_number);
    let locale = change.locale.unwrap_or_else(|| user.locale.clone());
    let email = change
        .email
        .map_or_else(|| user.email.clone(), Email::into_string);
    conn.exec(
        "UPDATE users SET name = $1, age = $2, gender = $3, city = $4, country = $5, country_code = $6,
                phone_number = $7, locale = $8, email = $9, updated_at = $10
         WHERE id = $11",
        &[
            Arg::OptText(name.as_deref()),
            Arg::OptInt(change.age.unwrap_or(user.age)),
            Arg::OptText(gender.as_deref()),
            Arg::OptText(city.as_deref()),
            Arg::OptText(country.as_deref()),
            Arg::OptText(country_code.as_deref()),
            Arg::OptText(phone_number.as_deref()),
            Arg::Text(&locale),
            Arg::Text(&email),
            Arg::Int(now),
            Arg::Text(&user.id),
        ],
    )
    .await
    .map_err(|e| match e {
        Error::Conflict(_) => Error::Conflict("that e-mail address is already in use".into()),
        other => other,
    })?;
    require_user(conn, &user.id).await
}

/// `PATCH /users/{id}/role` (superadmin): the last superadmin stays.
pub(super) struct SetRole {
    pub id: String,
    pub role: Role,
}

impl StaffWrite for SetRole {
    type Output = User;

    async fn run<C: WriteConn>(self, conn: &mut C, by: &Staff) -> Result<(User, Entries)> {
        let id = self.id.as_str();
        let user = require_user(conn, id).await?;
        if user.role == Role::Superadmin
            && self.role != Role::Superadmin
            && count_superadmins(conn).await? <= 1
        {
            return Err(Error::Conflict(
                "the last superadmin cannot be demoted".into(),
            ));
        }
        conn.exec(
            "UPDATE users SET role = $1, updated_at = $2 WHERE id = $3",
            &[
                Arg::Text(self.role.as_str()),
                Arg::Int(by.now),
                Arg::Text(id),
            ],
        )
        .await?;
        let changed = require_user(conn, id).await?;
        let entry = Entry::new("user.role_changed", Target::user(id)).with_changes(&user, &changed);
        Ok((changed, entry.into()))
    }
}

/// A user's change of their own profile: not a staff action, not recorded.
pub(super) struct ChangeOwn {
    pub app: Langcamp,
    pub id: String,
    pub change: ProfileChange,
    pub now: i64,
}

impl Write for ChangeOwn {
    type Output = User;

    async fn run<C: WriteConn>(self, conn: &mut C) -> Result<User> {
        let before = find_user(conn, &self.id)
            .await?
            .ok_or(Error::TokenInvalid)?;
        let user = apply_change(conn, &before, self.change, self.now).await?;
        self.app.announce(conn, &Change::User(self.id)).await?;
        Ok(user)
    }
}

/// Staff's change of the user `id` (`action` recorded), allowed only on a user they may
/// manage; 404 when there is no such user.
pub(super) struct ChangeUser {
    pub id: String,
    pub change: ProfileChange,
    pub action: &'static str,
}

impl StaffWrite for ChangeUser {
    type Output = User;

    async fn run<C: WriteConn>(self, conn: &mut C, by: &Staff) -> Result<(User, Entries)> {
        let before = require_user(conn, &self.id).await?;
        may_manage(&by.actor, &before)?;
        let user = apply_change(conn, &before, self.change, by.now).await?;
        let entry = Entry::new(self.action, Target::user(&self.id)).with_changes(&before, &user);
        Ok((user, entry.into()))
    }
}

/// A first sign-in's profile, completed by its user (not recorded); 409 when already
/// complete.
pub(super) struct CompleteRegistration {
    pub app: Langcamp,
    pub id: String,
    pub change: ProfileChange,
    pub now: i64,
    /// The `user.registered` deliveries, queued with it.
    pub announce: Option<Announcement>,
}

impl Write for CompleteRegistration {
    type Output = User;

    async fn run<C: WriteConn>(self, conn: &mut C) -> Result<User> {
        let user = find_user(conn, &self.id)
            .await?
            .ok_or(Error::TokenInvalid)?;
        if user.is_registration_complete {
            return Err(Error::Conflict("registration is already complete".into()));
        }
        apply_change(conn, &user, self.change, self.now).await?;
        conn.exec(
            "UPDATE users SET is_registration_complete = $1 WHERE id = $2",
            &[Arg::Int(bit(true)), Arg::Text(&user.id)],
        )
        .await?;
        let user = require_user(conn, &user.id).await?;
        if let Some(announce) = &self.announce {
            announce.queue(conn, self.now, &user).await?;
        }
        self.app.announce(conn, &Change::User(self.id)).await?;
        Ok(user)
    }
}

/// `DELETE /users/{id}`: the user with their sessions, results and assignments (foreign
/// keys); only a superadmin deletes staff, and the last superadmin stays.
pub(super) struct DeleteUser {
    pub id: String,
}

impl StaffWrite for DeleteUser {
    type Output = ();

    async fn run<C: WriteConn>(self, conn: &mut C, by: &Staff) -> Result<((), Entries)> {
        let id = self.id.as_str();
        let user = require_user(conn, id).await?;
        may_manage(&by.actor, &user)?;
        if user.role == Role::Superadmin && count_superadmins(conn).await? <= 1 {
            return Err(Error::Conflict(
                "the last superadmin cannot be deleted".into(),
            ));
        }
        // Its sign-ins go with it (foreign keys).
        conn.exec("DELETE FROM users WHERE id = $1", &[Arg::Text(id)])
            .await?;
        Ok(((), Entry::new("user.deleted", Target::user(id)).into()))
    }
}

/// A user created directly (operator tools); registration is complete when a name is
/// given; 409 when the address is taken.
pub(super) struct CreateUser {
    pub id: String,
    pub email: Email,
    pub role: Role,
    pub name: Option<String>,
    /// The `user.registered` deliveries, queued when the user is created registered.
    pub announce: Option<Announcement>,
}

impl StaffWrite for CreateUser {
    type Output = User;

    async fn run<C: WriteConn>(self, conn: &mut C, by: &Staff) -> Result<(User, Entries)> {
        if find_user_by_email(conn, self.email.as_str())
            .await?
            .is_some()
        {
            return Err(Error::Conflict(
                "a user with that e-mail address already exists".into(),
            ));
        }
        conn.exec(
            "INSERT INTO users (id, email, name, role, is_registration_complete, locale, created_at, updated_at)
             VALUES ($1, $2, $3, $4, $5, 'en', $6, $6)",
            &[
                Arg::Text(&self.id),
                Arg::Text(self.email.as_str()),
                Arg::OptText(self.name.as_deref()),
                Arg::Text(self.role.as_str()),
                Arg::Int(bit(self.name.is_some())),
                Arg::Int(by.now),
            ],
        )
        .await?;
        let user = require_user(conn, &self.id).await?;
        if let Some(announce) = &self.announce
            && user.is_registration_complete
        {
            announce.queue(conn, by.now, &user).await?;
        }
        Ok((
            user,
            Entry::new("user.created", Target::user(&self.id)).into(),
        ))
    }
}
