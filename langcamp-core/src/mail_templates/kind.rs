//! The kinds of mail, the variables each template may use, and the values a mail of each
//! kind is rendered with.

use std::fmt;

use minijinja::{Value, context};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

/// A kind of mail; every kind has a template per locale.
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, ToSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum TemplateKind {
    /// The sign-in code.
    Otp,
    /// Staff's reply to a contact request.
    ContactReply,
    /// A material assigned to a student.
    MaterialAssigned,
    /// A change to the security of the reader's account: a second factor added or
    /// removed, recovery codes made or used, factors reset (CONTRACT §20).
    SecurityNotice,
}

impl TemplateKind {
    pub const ALL: [TemplateKind; 4] = [
        TemplateKind::Otp,
        TemplateKind::ContactReply,
        TemplateKind::MaterialAssigned,
        TemplateKind::SecurityNotice,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            TemplateKind::Otp => "otp",
            TemplateKind::ContactReply => "contact_reply",
            TemplateKind::MaterialAssigned => "material_assigned",
            TemplateKind::SecurityNotice => "security_notice",
        }
    }

    /// A kind by its name; the message lists the kinds.
    pub fn parse(raw: &str) -> Result<TemplateKind, String> {
        TemplateKind::ALL
            .into_iter()
            .find(|kind| kind.as_str() == raw.trim())
            .ok_or_else(|| {
                format!("unknown template kind {raw:?}: the kinds are otp, contact_reply, material_assigned and security_notice")
            })
    }

    /// The variables a template of this kind may use (every kind has `schoolName`).
    pub fn variables(self) -> &'static [&'static str] {
        match self {
            TemplateKind::Otp => &["schoolName", "code", "minutes"],
            TemplateKind::ContactReply => &["schoolName", "firstName", "reply", "originalMessage"],
            TemplateKind::MaterialAssigned => &["schoolName", "name", "materialTitle", "link"],
            TemplateKind::SecurityNotice => &["schoolName", "event", "factorName", "at"],
        }
    }

    /// Values a template is checked and previewed with: every variable set, the
    /// multi-line ones on two lines (so a subject that uses one is seen to break).
    pub fn sample(self) -> MailValues {
        match self {
            TemplateKind::Otp => MailValues::Otp {
                code: SAMPLE_CODE.into(),
                minutes: 10,
            },
            TemplateKind::ContactReply => MailValues::ContactReply {
                first_name: "Ana".into(),
                reply: "Yes: Tuesdays and Thursdays at 18:30.\nSee you soon!".into(),
                original_message: "Do you have evening classes in German?\nThank you.".into(),
            },
            TemplateKind::MaterialAssigned => MailValues::MaterialAssigned {
                name: "Ana Silva".into(),
                material_title: "Everyday German, unit 1".into(),
                link: "https://school.example.com/materials/0190c6b0".into(),
            },
            TemplateKind::SecurityNotice => MailValues::SecurityNotice {
                event: SecurityEvent::FactorAdded,
                factor_name: "Phone".into(),
                at: "2026-11-28 09:30 UTC".into(),
            },
        }
    }
}

impl fmt::Display for TemplateKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The code in [`TemplateKind::sample`]: an `otp` template must show it.
pub(super) const SAMPLE_CODE: &str = "428517";

/// What one mail says, by kind: the values of its template's variables (`schoolName`
/// aside, which the school's settings give).
#[derive(Clone, Debug, PartialEq)]
pub enum MailValues {
    Otp {
        code: String,
        minutes: u64,
    },
    ContactReply {
        first_name: String,
        reply: String,
        original_message: String,
    },
    MaterialAssigned {
        /// Empty when the student has not given a name.
        name: String,
        material_title: String,
        link: String,
    },
    SecurityNotice {
        event: SecurityEvent,
        /// The factor's name; empty for events about no single factor.
        factor_name: String,
        /// When it happened, for people (`2026-11-28 09:30 UTC`).
        at: String,
    },
}

/// What a security notice tells (`{{ event }}` in its template: the template words it in
/// the reader's language).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SecurityEvent {
    FactorAdded,
    FactorRemoved,
    RecoveryCodesCreated,
    RecoveryCodeUsed,
    FactorsReset,
    /// Ten wrong second-factor answers in a row locked the account's second step.
    Locked,
}

impl SecurityEvent {
    pub fn as_str(self) -> &'static str {
        match self {
            SecurityEvent::FactorAdded => "factor_added",
            SecurityEvent::FactorRemoved => "factor_removed",
            SecurityEvent::RecoveryCodesCreated => "recovery_codes_created",
            SecurityEvent::RecoveryCodeUsed => "recovery_code_used",
            SecurityEvent::FactorsReset => "factors_reset",
            SecurityEvent::Locked => "locked",
        }
    }
}

impl MailValues {
    pub fn kind(&self) -> TemplateKind {
        match self {
            MailValues::Otp { .. } => TemplateKind::Otp,
            MailValues::ContactReply { .. } => TemplateKind::ContactReply,
            MailValues::MaterialAssigned { .. } => TemplateKind::MaterialAssigned,
            MailValues::SecurityNotice { .. } => TemplateKind::SecurityNotice,
        }
    }

    /// The template context: exactly the kind's [`TemplateKind::variables`].
    pub(super) fn context(&self, school_name: &str) -> Value {
        match self {
            MailValues::Otp { code, minutes } => context! {
                schoolName => school_name,
                code => code,
                minutes => *minutes,
            },
            MailValues::ContactReply {
                first_name,
                reply,
                original_message,
            } => context! {
                schoolName => school_name,
                firstName => first_name,
                reply => reply,
                originalMessage => original_message,
            },
            MailValues::MaterialAssigned {
                name,
                material_title,
                link,
            } => context! {
                schoolName => school_name,
                name => name,
                materialTitle => material_title,
                link => link,
            },
            MailValues::SecurityNotice {
                event,
                factor_name,
                at,
            } => context! {
                schoolName => school_name,
                event => event.as_str(),
                factorName => factor_name,
                at => at,
            },
        }
    }
}
