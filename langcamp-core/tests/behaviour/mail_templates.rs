//! Mail templates as core keeps them: an import (`langcamp mail-templates import`) is one
//! piece of write work with its entries, so it stores every template or none.

use langcamp_core::domain::LanguageTag;
use langcamp_core::mail_templates::{MailTemplateInput, NewMailTemplate, TemplateKind};
use langcamp_core::platform::db::Backend;
use langcamp_core::{Actor, Error};

use crate::harness::TestCore;

fn otp(locale: &str, text: &str) -> NewMailTemplate {
    NewMailTemplate::new(
        TemplateKind::Otp,
        LanguageTag::parse("locale", locale).expect("a tag"),
        MailTemplateInput {
            subject: Some("Code".into()),
            text: Some(text.into()),
            html: None,
        },
    )
    .expect("a valid template")
}

#[tokio::test]
async fn an_import_whose_last_template_fails_stores_none_and_records_nothing() {
    let school = TestCore::start().await;
    let core = &school.core;
    if core.db().backend() == Backend::Postgres {
        school
            .sql(
                "CREATE FUNCTION refuse_template() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN
                     IF NEW.locale = 'sv' THEN RAISE EXCEPTION 'no template'; END IF;
                     RETURN NEW; END $$",
            )
            .await;
        school
            .sql("CREATE TRIGGER refuse_template BEFORE INSERT ON mail_templates FOR EACH ROW EXECUTE FUNCTION refuse_template()")
            .await;
    } else {
        school
            .sql(
                "CREATE TRIGGER refuse_template BEFORE INSERT ON mail_templates WHEN NEW.locale = 'sv'
                 BEGIN SELECT RAISE(ABORT, 'no template'); END",
            )
            .await;
    }
    let entries = "SELECT COUNT(*) FROM audit_events WHERE action = 'mail_template.put'";
    let refused = core
        .import_mail_templates(
            &Actor::Operator,
            vec![
                otp("nl", "Je code: {{ code }}"),
                otp("sv", "Din kod: {{ code }}"),
            ],
        )
        .await;
    assert!(matches!(refused, Err(Error::Internal(_))), "{refused:?}");
    assert_eq!(school.count("SELECT COUNT(*) FROM mail_templates").await, 0);
    assert_eq!(school.count(entries).await, 0);

    // Without the failing one, the same import stores its template with its entry.
    let imported = core
        .import_mail_templates(&Actor::Operator, vec![otp("nl", "Je code: {{ code }}")])
        .await
        .expect("the import");
    assert_eq!(imported.stored, ["otp.nl"]);
    assert_eq!(school.count("SELECT COUNT(*) FROM mail_templates").await, 1);
    assert_eq!(school.count(entries).await, 1);
}
