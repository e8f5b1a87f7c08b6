//! CONTRACT §16: every mail in its reader's language, from templates staff edit.

use langcamp_core::mail_templates::TemplateKind;
use serde_json::{Value, json};

use crate::helpers::{
    Case, Client, Session, TestApp, assert_role_matrix, extract_code, fresh_client,
};
use crate::smtp::ReceivedMail;

/// Asks for a code for `email` with `accept_language` and returns the mail that carries it.
async fn code_mail(app: &TestApp, email: &str, accept_language: Option<&str>) -> ReceivedMail {
    let before = app.mail_to(email, 0).await.len();
    let mut call = app.otp_request(&fresh_client(), email);
    if let Some(language) = accept_language {
        call = call.header("accept-language", language);
    }
    call.send().await.expect(200);
    let mut mails = app.mail_to(email, before + 1).await;
    assert_eq!(mails.len(), before + 1, "one more mail to {email}");
    mails.remove(before)
}

/// The subject and both parts of a mail, for assertions on its language.
fn parts(mail: &ReceivedMail) -> (String, String, String) {
    (
        mail.header("subject").unwrap_or_default(),
        mail.text_body(),
        mail.html_body().unwrap_or_default(),
    )
}

fn template_path(kind: &str, locale: &str) -> String {
    format!("/admin/mail-templates/{kind}/{locale}")
}

#[tokio::test]
async fn a_code_mail_to_a_new_address_is_in_the_language_of_the_request() {
    let app = TestApp::spawn().await;

    let german = code_mail(&app, "neu@example.com", Some("de-AT,de;q=0.9,en;q=0.5")).await;
    let (subject, text, html) = parts(&german);
    assert_eq!(subject, "Ihr Anmeldecode für Langcamp");
    assert!(
        text.starts_with("Ihr Anmeldecode für Langcamp lautet: "),
        "{text}"
    );
    assert!(text.contains("Minuten gültig"), "{text}");
    assert!(
        html.contains("Ihr Anmeldecode für Langcamp lautet:"),
        "{html}"
    );
    let code = extract_code(&text).expect("a code");
    assert!(html.contains(&format!("<b>{code}</b>")), "{html}");

    // pt-BR has no template of its own: its language's is used.
    let (subject, text, _) = parts(&code_mail(&app, "novo@example.com", Some("pt-BR")).await);
    assert!(subject.starts_with("O seu código de acesso"), "{subject}");
    assert!(text.contains("minutos"), "{text}");

    // A language without templates, and no header at all: the school's default, English.
    for header in [Some("ja-JP"), None] {
        let email = format!("{}@example.com", fresh_client());
        let (subject, text, _) = parts(&code_mail(&app, &email, header).await);
        assert_eq!(subject, "Your Langcamp sign-in code", "{header:?}");
        assert!(text.starts_with("Your Langcamp sign-in code is "), "{text}");
    }
}

#[tokio::test]
async fn the_school_default_and_name_come_from_the_settings() {
    let (app, admin) = TestApp::with_admin().await;
    admin
        .put(
            "/settings",
            &json!({ "key": "mail.default_locale", "value": "fr" }),
        )
        .await;
    admin
        .put(
            "/settings",
            &json!({ "key": "school_name", "value": "Escola Lisboa" }),
        )
        .await;
    let (subject, text, _) = parts(&code_mail(&app, "visitor@example.com", Some("ja")).await);
    assert_eq!(subject, "Votre code de connexion Escola Lisboa");
    assert!(text.contains("Escola Lisboa"), "{text}");
    // The exact tag, then its language, still come before the default.
    let (subject, _, _) = parts(&code_mail(&app, "gast@example.com", Some("de")).await);
    assert_eq!(subject, "Ihr Anmeldecode für Escola Lisboa");
}

#[tokio::test]
async fn a_known_user_gets_mail_in_their_stored_locale_whatever_the_header() {
    let app = TestApp::spawn().await;
    let code =
        extract_code(&code_mail(&app, "ana@example.com", None).await.text_body()).expect("a code");
    app.post("/auth/otp/verify")
        .header("x-forwarded-for", &fresh_client())
        .header("accept-language", "es-ES")
        .json(&json!({ "email": "ana@example.com", "code": code }))
        .send()
        .await
        .expect(200);
    let (subject, text, _) = parts(&code_mail(&app, "ana@example.com", Some("de-DE")).await);
    assert!(subject.starts_with("Su código"), "{subject}");
    assert!(text.contains("minutos"), "{text}");
}

#[tokio::test]
async fn a_stored_template_is_used_by_the_next_mail_and_deleting_it_restores_the_built_in_one() {
    let (app, admin) = TestApp::with_admin().await;
    let stored = admin
        .put(
            &template_path("otp", "en"),
            &json!({
                "subject": "{{ schoolName }}: your code",
                "text": "Code: {{ code }} ({{ minutes }} min)",
            }),
        )
        .await;
    assert_eq!(stored["kind"], "otp");
    assert_eq!(stored["locale"], "en");
    assert_eq!(stored["builtIn"], false);
    assert_eq!(stored["html"], Value::Null);
    assert!(stored["updatedAt"].is_string());

    let mail = code_mail(&app, "first@example.com", None).await;
    let (subject, text, html) = parts(&mail);
    assert_eq!(subject, "Langcamp: your code");
    let code = extract_code(&text).expect("a code");
    assert_eq!(text, format!("Code: {code} (10 min)"));
    // No html part in the template: the text, escaped, in a paragraph.
    assert!(
        html.contains(&format!("<p>Code: {code} (10 min)</p>")),
        "{html}"
    );

    let list = admin.get("/admin/mail-templates").await;
    let entries = list.as_array().expect("a list");
    assert_eq!(entries.len(), 24, "4 kinds in 6 locales");
    let otp_en: Vec<&Value> = entries
        .iter()
        .filter(|t| t["kind"] == "otp" && t["locale"] == "en")
        .collect();
    assert_eq!(otp_en.len(), 1);
    assert_eq!(otp_en[0]["builtIn"], false);
    let kinds: Vec<&str> = entries.iter().filter_map(|t| t["kind"].as_str()).collect();
    let mut sorted = kinds.clone();
    sorted.sort();
    assert_eq!(kinds, sorted, "by kind then locale");

    let deleted = admin.delete(&template_path("otp", "en")).await;
    assert_eq!(
        deleted,
        json!({ "kind": "otp", "locale": "en", "deleted": true })
    );
    let (subject, _, _) = parts(&code_mail(&app, "second@example.com", None).await);
    assert_eq!(subject, "Your Langcamp sign-in code");
    admin
        .delete(&template_path("otp", "en"))
        .fails(404, "NOT_FOUND")
        .await;
    assert_eq!(app.rows("mail_templates").await, 0);
}

#[tokio::test]
async fn a_template_for_a_new_locale_serves_that_locale_and_its_regional_tags() {
    let (app, admin) = TestApp::with_admin().await;
    admin
        .put(
            &template_path("otp", "NL"),
            &json!({
                "subject": "Uw inlogcode voor {{ schoolName }}",
                "text": "Uw inlogcode is {{ code }}.",
                "html": "<p>Uw inlogcode is <b>{{ code }}</b>.</p>",
            }),
        )
        .await;
    let (subject, _, html) = parts(&code_mail(&app, "jan@example.com", Some("nl-BE")).await);
    assert_eq!(subject, "Uw inlogcode voor Langcamp");
    assert!(html.contains("Uw inlogcode is <b>"), "{html}");
    let listed = admin.get("/admin/mail-templates").await;
    assert!(
        listed
            .as_array()
            .expect("a list")
            .iter()
            .any(|t| t["locale"] == "nl" && t["builtIn"] == false),
        "the tag is stored normalized: {listed}"
    );
}

#[tokio::test]
async fn a_broken_template_is_refused_with_its_problem_and_nothing_changes() {
    let (app, admin) = TestApp::with_admin().await;
    let refuse = |path: String, body: Value| {
        let admin = &admin;
        async move {
            admin
                .put(&path, &body)
                .fails(400, "VALIDATION_FAILED")
                .await
        }
    };
    let otp = template_path("otp", "en");

    let unknown = refuse(
        otp.clone(),
        json!({ "subject": "Hi {{ nickname }}", "text": "{{ code }}" }),
    )
    .await;
    assert_eq!(
        unknown.errors(),
        ["subject: unknown variable `nickname`; otp templates know schoolName, code, minutes"]
    );

    let syntax = refuse(
        otp.clone(),
        json!({ "subject": "Code", "text": "Your code:\n  {{ code }\n" }),
    )
    .await;
    let message = &syntax.errors()[0];
    assert!(
        message.starts_with("text: syntax error") && message.contains("at line 2, column"),
        "{message}"
    );

    let two_lines = refuse(
        template_path("contact_reply", "en"),
        json!({ "subject": "Re: {{ reply }}", "text": "{{ reply }}" }),
    )
    .await;
    assert_eq!(two_lines.errors(), ["subject must render to one line"]);

    let no_code = refuse(
        otp.clone(),
        json!({ "subject": "Code", "text": "{{ code }}", "html": "<p>Your code is coming.</p>" }),
    )
    .await;
    assert_eq!(
        no_code.errors(),
        ["html: an otp template must show the code with {{ code }}"]
    );

    let bad_address = refuse(
        template_path("newsletter", "english!"),
        json!({ "subject": "x", "text": "y" }),
    )
    .await;
    assert_eq!(bad_address.errors().len(), 2, "{:?}", bad_address.errors());

    let empty = refuse(otp.clone(), json!({ "subject": " ", "extra": 1 })).await;
    assert_eq!(
        empty.errors(),
        [
            "unknown field `extra`, expected one of `subject`, `text`, `html`",
            "subject must not be empty",
            "text is required",
        ]
    );

    assert_eq!(app.rows("mail_templates").await, 0, "nothing was stored");
    let (subject, _, _) = parts(&code_mail(&app, "after@example.com", None).await);
    assert_eq!(subject, "Your Langcamp sign-in code");
}

#[tokio::test]
async fn a_preview_renders_the_body_or_the_template_in_effect_with_sample_values() {
    let (app, admin) = TestApp::with_admin().await;
    let preview = admin
        .post(
            &format!("{}/preview", template_path("material_assigned", "en")),
            &json!({
                "subject": "For {{ name }}: {{ materialTitle }}",
                "text": "{{ link }}",
                "html": "<a href=\"{{ link }}\">{{ materialTitle }}</a>",
            }),
        )
        .await;
    assert_eq!(preview["subject"], "For Ana Silva: Everyday German, unit 1");
    assert_eq!(
        preview["text"],
        "https://school.example.com/materials/0190c6b0"
    );
    assert!(
        preview["html"].as_str().is_some_and(
            |h| h.contains("<a href=\"https://school.example.com/materials/0190c6b0\">")
        ),
        "{preview}"
    );

    let in_effect = admin
        .post_empty(&format!("{}/preview", template_path("contact_reply", "it")))
        .await;
    assert!(
        in_effect["text"]
            .as_str()
            .is_some_and(|t| t.starts_with("Gentile Ana,")),
        "{in_effect}"
    );
    admin
        .post(
            &format!("{}/preview", template_path("otp", "en")),
            &json!({ "subject": "x", "text": "no code" }),
        )
        .fails(400, "VALIDATION_FAILED")
        .await;
    assert_eq!(
        app.rows("mail_templates").await,
        0,
        "a preview stores nothing"
    );
}

#[tokio::test]
async fn a_contact_reply_is_written_in_the_contacts_locale_and_escapes_html_only() {
    let (app, admin) = TestApp::with_admin().await;
    let send = |body: Value, language: Option<&'static str>| {
        let app = &app;
        async move {
            let mut call = app
                .post("/contact")
                .header("x-forwarded-for", &fresh_client())
                .json(&body);
            if let Some(language) = language {
                call = call.header("accept-language", language);
            }
            call.send().await.expect(201).data()
        }
    };
    let form = |email: &str| {
        json!({ "firstName": "Léa", "lastName": "Dubois", "email": email,
                "message": "Bonjour <b>!</b>\nMerci." })
    };
    let mut french = form("lea@example.com");
    french["locale"] = json!("fr-FR");
    let by_body = send(french, Some("it")).await;
    assert_eq!(by_body["locale"], "fr-FR");
    let by_header = send(form("lea.it@example.com"), Some("it-CH, en;q=0.5")).await;
    assert_eq!(by_header["locale"], "it-CH");
    let neither = send(form("lea.en@example.com"), None).await;
    assert_eq!(neither["locale"], Value::Null);

    let reply = "<script>alert('x')</script>\nÀ bientôt & merci";
    for contact in [&by_body, &by_header, &neither] {
        admin
            .post(
                &format!(
                    "/contact/admin/{}/reply",
                    contact["id"].as_str().expect("id")
                ),
                &json!({ "replyMessage": reply }),
            )
            .await;
    }
    let mail = |email: &'static str| {
        let app = &app;
        async move { app.mail_to(email, 1).await.remove(0) }
    };
    let (subject, text, html) = parts(&mail("lea@example.com").await);
    assert_eq!(subject, "Re : votre message à Langcamp");
    assert!(text.starts_with("Bonjour Léa,"), "{text}");
    assert!(text.contains(reply), "the text part is untouched: {text}");
    assert!(text.contains("> Bonjour <b>!</b>\n> Merci."), "{text}");
    assert!(
        html.contains("&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;<br>À bientôt &amp; merci"),
        "{html}"
    );
    assert!(!html.contains("<script>"), "{html}");
    assert!(!html.contains("<b>!</b>"), "{html}");

    let (_, text, _) = parts(&mail("lea.it@example.com").await);
    assert!(text.starts_with("Gentile Léa,"), "{text}");
    let (_, text, _) = parts(&mail("lea.en@example.com").await);
    assert!(text.starts_with("Hello Léa,"), "{text}");

    let mut bad = form("bad@example.com");
    bad["locale"] = json!("français");
    app.post("/contact")
        .header("x-forwarded-for", &fresh_client())
        .json(&bad)
        .send()
        .await
        .fails(400, "VALIDATION_FAILED");
}

#[tokio::test]
async fn an_assignment_mail_is_in_the_students_locale() {
    let (app, admin) = TestApp::with_admin().await;
    let student = app.student("giulia@example.com").await;
    student
        .patch("/me/profile", &json!({ "locale": "it-IT" }))
        .await;
    let material = admin
        .post(
            "/education-materials",
            &json!({ "title": "Verbi irregolari", "locale": "it", "targetLanguage": "it", "level": "A2" }),
        )
        .expect(201)
        .await
        .data();
    admin
        .post(
            &format!(
                "/education-materials/{}/assign",
                material["id"].as_str().expect("id")
            ),
            &json!({ "userIds": [student.user_id] }),
        )
        .await;
    let (subject, text, _) = parts(&app.mail_to("giulia@example.com", 1).await.remove(0));
    assert_eq!(subject, "Nuovo materiale didattico: Verbi irregolari");
    assert!(text.starts_with("Gentile Test Person,"), "{text}");
}

#[tokio::test]
async fn only_admins_read_or_change_mail_templates() {
    let (app, admin) = TestApp::with_admin().await;
    let student: Session = app.student("student@example.com").await;
    let callers: [(&str, &Client); 2] = [("anonymous", app.anon()), ("user", &student)];
    const REFUSED: &[u16] = &[401, 403];
    let body = json!({ "subject": "x", "text": "{{ code }}" });
    let cases = [
        Case::new("GET", "/admin/mail-templates", REFUSED),
        Case::new("PUT", template_path("otp", "en"), REFUSED).body(body.clone()),
        Case::new("DELETE", template_path("otp", "en"), REFUSED),
        Case::new(
            "POST",
            format!("{}/preview", template_path("otp", "en")),
            REFUSED,
        )
        .body(body),
    ];
    assert_role_matrix(&callers, &cases).await;
    assert_eq!(app.rows("mail_templates").await, 0);
    admin.get("/admin/mail-templates").await;
}

/// The document gives each kind its own example body, for saving and for previewing (a
/// template may use only its kind's variables): each example is accepted for its kind.
#[tokio::test]
async fn each_documented_example_is_accepted_for_its_kind() {
    let (app, admin) = TestApp::with_admin().await;
    let doc = app.get("/swagger/json").expect(200).await.json();
    // Every kind there is, in the document's (alphabetical) order.
    let mut kinds: Vec<&str> = TemplateKind::ALL.iter().map(|k| k.as_str()).collect();
    kinds.sort_unstable();
    for (path, method) in [
        ("/admin/mail-templates/{kind}/{locale}/preview", "post"),
        ("/admin/mail-templates/{kind}/{locale}", "put"),
    ] {
        let examples =
            doc["paths"][path][method]["requestBody"]["content"]["application/json"]["examples"]
                .as_object()
                .unwrap_or_else(|| panic!("no examples for {method} {path}"));
        let named: Vec<&str> = examples.keys().map(String::as_str).collect();
        assert_eq!(named, kinds, "one example per kind: {method} {path}");
        for (kind, example) in examples {
            let concrete = path.replace("{kind}", kind).replace("{locale}", "de");
            let body = &example["value"];
            let answer = match method {
                "post" => admin.post(&concrete, body).send().await,
                _ => admin.put(&concrete, body).send().await,
            };
            assert_eq!(answer.status, 200, "{method} {concrete}: {}", answer.text());
        }
    }
}
