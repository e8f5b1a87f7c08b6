//! The mail that carries a sign-in code.

use crate::mail::{self, OutgoingMail};

pub(super) fn otp_mail(to: &str, code: &str, minutes: u64) -> OutgoingMail {
    OutgoingMail {
        to: to.to_owned(),
        subject: "Your Langcamp sign-in code".into(),
        text: format!(
            "Your Langcamp sign-in code is {code}\n\nIt is valid for {minutes} minutes and can be used once.\n\
             If you did not ask for it, ignore this mail."
        ),
        html: mail::html_document(
            "Your Langcamp sign-in code",
            &format!(
                "<p>Your Langcamp sign-in code is</p><p style=\"font-size:28px;letter-spacing:4px\"><b>{code}</b></p>\
                 <p>It is valid for {minutes} minutes and can be used once. If you did not ask for it, ignore this mail.</p>"
            ),
        ),
    }
}
