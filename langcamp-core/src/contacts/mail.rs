//! The mail that carries an admin's reply to the visitor.
//!
//! Everything the visitor typed is escaped in the HTML part, and nothing they typed can
//! reach a mail header (their name appears in the subject only as one sanitized line).

use super::Contact;
use crate::mail::{self, OutgoingMail};

/// Text for a header line: control characters (CR, LF, tab, ...) and runs of white space
/// become one space.
fn one_line(text: &str) -> String {
    let cleaned = mail::header_safe(text);
    cleaned.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Escaped HTML of a text with its line breaks kept.
fn html_paragraph(text: &str) -> String {
    let lines: Vec<String> = text
        .replace("\r\n", "\n")
        .split(['\n', '\r'])
        .map(mail::escape_html)
        .collect();
    format!("<p>{}</p>", lines.join("<br>"))
}

/// The mail that carries an admin's reply to the visitor.
pub(super) fn reply_mail(contact: &Contact, reply: &str) -> OutgoingMail {
    let first_name = one_line(&contact.first_name);
    let full_name = one_line(&format!("{} {}", contact.first_name, contact.last_name));
    let subject = format!("Re: your message to Langcamp, {full_name}");
    let quoted: String = contact
        .message
        .lines()
        .map(|line| format!("> {line}\n"))
        .collect();
    let text = format!(
        "Hello {first_name},\n\n{reply}\n\nYou wrote on {}:\n{quoted}\nLangcamp\n",
        contact.created_at
    );
    let html = mail::html_document(
        &subject,
        &format!(
            "<p>Hello {},</p>{}<p style=\"color:#555\">You wrote on {}:</p>\
             <blockquote style=\"color:#555;border-left:3px solid #ccc;margin:0;padding-left:12px\">{}</blockquote>\
             <p>Langcamp</p>",
            mail::escape_html(&first_name),
            html_paragraph(reply),
            mail::escape_html(&contact.created_at.to_string()),
            html_paragraph(&contact.message),
        ),
    );
    OutgoingMail {
        to: contact.email.clone(),
        subject,
        text,
        html,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::ContactStatus;
    use crate::id::new_id;
    use crate::time::Timestamp;

    #[test]
    fn reply_mails_keep_names_on_one_line_and_escape_html() {
        let contact = Contact {
            id: new_id(),
            first_name: "Eve\r\nBcc: victim@example.com".into(),
            last_name: "<b>Doe</b>".into(),
            email: "eve@example.com".into(),
            phone: None,
            message: "Line one\nLine <two>".into(),
            status: ContactStatus::Replied,
            reply_message: None,
            source: None,
            replied_at: None,
            created_at: Timestamp::from_millis(0),
            updated_at: Timestamp::from_millis(0),
        };
        let mail = reply_mail(&contact, "Fish & <chips>\nsee you");
        assert_eq!(
            mail.subject,
            "Re: your message to Langcamp, Eve Bcc: victim@example.com <b>Doe</b>"
        );
        assert!(!mail.subject.contains(['\r', '\n']));
        assert_eq!(mail.to, "eve@example.com");
        assert!(mail.text.contains("Fish & <chips>\nsee you"));
        assert!(
            mail.html
                .contains("<p>Fish &amp; &lt;chips&gt;<br>see you</p>")
        );
        assert!(mail.html.contains("&lt;b&gt;Doe&lt;/b&gt;"));
        assert!(mail.html.contains("Line one<br>Line &lt;two&gt;"));
        assert!(!mail.html.contains("<chips>"));
    }
}
