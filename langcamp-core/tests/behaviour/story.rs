//! One term at the school, told through core's operations as the HTTP handlers, the console
//! and the CLI call them: staff and a student, a placement test taken and scored, a material
//! assigned, a question at the contact desk answered, and a student who leaves. Each step
//! checks who may do it; the same story runs on SQLite and on PostgreSQL.

use langcamp_core::contacts::{ContactInput, ContactStatus, NewContact, ReplyInput, ReplyText};
use langcamp_core::domain::Id;
use langcamp_core::domain::validate::Patch;
use langcamp_core::materials::{Assignment, MaterialInput, NewMaterial};
use langcamp_core::placement::{NewTest, ResultQuery, SubmitInput, TestInput};
use langcamp_core::{Actor, Error, PageRequest, Role};
use serde::de::DeserializeOwned;
use serde_json::{Value, json};

use crate::harness::TestCore;

/// A request body as a client sends it, read into its wire type.
fn body<T: DeserializeOwned>(value: Value) -> T {
    serde_json::from_value(value).expect("a well-formed body")
}

/// The id of the signed-in user behind `actor`.
fn id_of(actor: &Actor) -> String {
    actor.caller().expect("a signed-in user").user_id.clone()
}

/// A two-question German test: A1 for 0 or 1 points, A2 for 2.
fn german_test() -> NewTest {
    let question = |text: &str| {
        json!({
            "text": text, "points": 1, "correctOptionIndex": 0,
            "options": [{ "text": "right" }, { "text": "wrong" }],
        })
    };
    NewTest::try_from(body::<TestInput>(json!({
        "title": "Deutsch: Einstufung",
        "targetLanguage": "de",
        "timeLimitMinutes": 10,
        "isActive": true,
        "questions": [question("Ich ___ Ana."), question("Wir ___ aus Lissabon.")],
        "levelRanges": [
            { "level": "A1", "minScore": 0, "maxScore": 1, "message": "Start with A1." },
            { "level": "A2", "minScore": 2, "maxScore": 2, "message": "Join an A2 course." },
        ],
    })))
    .expect("a valid test")
}

#[tokio::test]
async fn a_term_at_the_school() {
    let school = TestCore::start().await;
    let core = &school.core;
    let root = school.user("director@school.test", Role::Superadmin).await;
    let office = school.user("office@school.test", Role::Admin).await;
    let ana = school.user("ana@example.com", Role::User).await;

    // The office writes a placement test; a student may not.
    assert!(matches!(
        core.create_test(&ana, german_test()).await,
        Err(Error::Forbidden(_))
    ));
    assert!(matches!(
        core.create_test(&Actor::Anonymous, german_test()).await,
        Err(Error::Unauthorized)
    ));
    let test = core
        .create_test(&office, german_test())
        .await
        .expect("create the test");

    // Ana takes it, one answer right: A1, with the range's message.
    let answers = json!([
        { "questionIndex": 0, "selectedOptionIndex": 0 },
        { "questionIndex": 1, "selectedOptionIndex": 1 },
    ]);
    let submission = SubmitInput {
        answers: Patch::Value(answers),
    };
    let result = core
        .submit_test(&ana, &test.typed_id(), submission)
        .await
        .expect("submit the test");
    assert_eq!(
        (result.total_score, result.max_score, result.level.as_str()),
        (1, 2, "A1")
    );
    assert_eq!(result.message, "Start with A1.");
    let mine = core.my_test_results(&ana).await.expect("Ana's results");
    assert_eq!(mine, vec![result.clone()]);
    let all = core
        .list_test_results(&office, &ResultQuery::default(), PageRequest::default())
        .await
        .expect("the office's list of results");
    assert_eq!(all.pagination.total_items, 1);
    assert!(matches!(
        core.list_test_results(&ana, &ResultQuery::default(), PageRequest::default())
            .await,
        Err(Error::Forbidden(_))
    ));

    // A material for A1 learners, assigned to Ana.
    let material = NewMaterial::try_from(body::<MaterialInput>(json!({
        "title": "Erste Schritte",
        "targetLanguage": "de",
        "level": "A1",
        "videos": [{ "title": "Begrüßung", "url": "https://videos.school.test/hallo.mp4" }],
    })))
    .expect("a valid material");
    let material = core
        .create_material(&office, material, Vec::new())
        .await
        .expect("create the material");
    let to_ana = Assignment::new(vec![Id::from(id_of(&ana))]).expect("one user");
    assert!(matches!(
        core.assign_material(&ana, &material.typed_id(), &to_ana)
            .await,
        Err(Error::Forbidden(_))
    ));
    let assigned = core
        .assign_material(&office, &material.typed_id(), &to_ana)
        .await
        .expect("assign the material");
    assert_eq!(assigned.assigned, 1);
    let materials = core.my_materials(&ana).await.expect("Ana's materials");
    assert_eq!(materials.len(), 1);
    assert_eq!(materials[0].material.title, "Erste Schritte");

    // A visitor asks at the contact desk; the office answers.
    let question = NewContact::try_from(body::<ContactInput>(json!({
        "firstName": "Bruno", "lastName": "Costa", "email": "bruno@example.org",
        "message": "Do you teach German in the evening?",
    })))
    .expect("a valid contact form");
    let contact = core
        .create_contact(&Actor::Anonymous, question)
        .await
        .expect("send the form");
    assert_eq!(contact.status, ContactStatus::Pending);
    let reply = ReplyText::try_from(ReplyInput {
        reply_message: Some("Yes, on Tuesdays and Thursdays.".to_owned()),
    })
    .expect("a valid reply");
    assert!(matches!(
        core.reply_to_contact(&ana, &contact.typed_id(), &reply)
            .await,
        Err(Error::Forbidden(_))
    ));
    let replied = core
        .reply_to_contact(&office, &contact.typed_id(), &reply)
        .await
        .expect("reply");
    assert_eq!(replied.status, ContactStatus::Replied);

    // Staff rules: an admin may not remove a superadmin, and the last superadmin stays.
    let root_id = Id::from(id_of(&root));
    assert!(matches!(
        core.delete_user(&office, &root_id).await,
        Err(Error::Forbidden(_))
    ));
    assert!(matches!(
        core.set_role(&root, &root_id, Role::Admin).await,
        Err(Error::Conflict(_))
    ));
    assert!(matches!(
        core.delete_user(&root, &root_id).await,
        Err(Error::Conflict(_))
    ));

    // Ana leaves: her result and her assignment go with her; the test and material stay.
    core.delete_user(&office, &Id::from(id_of(&ana)))
        .await
        .expect("delete Ana");
    let results = core
        .list_test_results(&office, &ResultQuery::default(), PageRequest::default())
        .await
        .expect("the list of results");
    assert_eq!(results.pagination.total_items, 0);
    let material = core
        .get_material(&office, &material.typed_id())
        .await
        .expect("the material stays");
    assert_eq!(material.title, "Erste Schritte");
    assert!(core.get_test(&office, &test.typed_id()).await.is_ok());
}
