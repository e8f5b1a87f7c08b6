//! The mail a user gets when a material is assigned to them.

use crate::mail::{self, OutgoingMail};
use crate::users::User;

/// The mail telling `user` that a material was assigned to them.
pub(super) fn assignment_mail(user: &User, title: &str, link: &str) -> OutgoingMail {
    let greeting = match user.name.as_deref() {
        Some(name) => format!("Hello {name},"),
        None => "Hello,".to_owned(),
    };
    let subject = mail::header_safe(&format!("New learning material: {title}"));
    OutgoingMail {
        to: user.email.clone(),
        text: format!(
            "{greeting}\n\nA new learning material has been assigned to you: {title}\n\n\
             Open it here: {link}\n\nHappy learning!\nLangcamp"
        ),
        html: mail::html_document(
            &subject,
            &format!(
                "<p>{}</p><p>A new learning material has been assigned to you: <b>{}</b></p>\
                 <p><a href=\"{}\">Open the material</a></p><p>Happy learning!<br>Langcamp</p>",
                mail::escape_html(&greeting),
                mail::escape_html(title),
                mail::escape_html(link),
            ),
        ),
        subject,
    }
}
