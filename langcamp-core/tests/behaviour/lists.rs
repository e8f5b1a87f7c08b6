//! Issue #54: every admin list's total is exact whatever its filters, though it comes from
//! the counts the triggers keep (users, results, contacts, the trail by day and action) or
//! from an index, and its pages are the list's rows in order. On a small school every
//! combination of filters is asked for, and each answer's total is held against the rows
//! the list itself gives (all on one page) and against a second, deep page.

use chrono::{TimeDelta, TimeZone, Utc};
use langcamp_core::audit::AuditQuery;
use langcamp_core::contacts::{ContactInput, ContactSearch, ContactStatus, NewContact};
use langcamp_core::domain::Id;
use langcamp_core::domain::validate::Patch;
use langcamp_core::placement::{NewTest, ResultQuery, SubmitInput, TestInput};
use langcamp_core::settings::NewSetting;
use langcamp_core::users::{NewUser, UserQuery};
use langcamp_core::{Actor, Page, PageRequest, Role};
use serde_json::json;

use crate::harness::TestCore;

/// Every page of `list` at `limit` a page: the rows in order, and whether each page's
/// total was the number of rows there are.
async fn every_row<T: Clone + std::fmt::Debug, F, Fut>(list: F, what: &str) -> Vec<T>
where
    F: Fn(PageRequest) -> Fut,
    Fut: std::future::Future<Output = langcamp_core::Result<Page<T>>>,
{
    let whole = list(PageRequest {
        page: 1,
        limit: 100,
    })
    .await
    .unwrap_or_else(|e| panic!("{what}: {e}"));
    assert_eq!(
        whole.pagination.total_items,
        whole.list.len() as u64,
        "{what}: the total counts the rows"
    );
    // Page 2 of pages of 2: the rows at offset 2 and 3, and the same total.
    let deep = list(PageRequest { page: 2, limit: 2 })
        .await
        .unwrap_or_else(|e| panic!("{what}: {e}"));
    assert_eq!(
        deep.pagination.total_items, whole.pagination.total_items,
        "{what}"
    );
    let expected: Vec<String> = whole
        .list
        .iter()
        .skip(2)
        .take(2)
        .map(|r| format!("{r:?}"))
        .collect();
    let got: Vec<String> = deep.list.iter().map(|r| format!("{r:?}")).collect();
    assert_eq!(got, expected, "{what}: page 2 of pages of 2");
    whole.list
}

fn test_of(language: &str) -> NewTest {
    let question = |text: &str| {
        json!({
            "text": text, "points": 1, "correctOptionIndex": 0,
            "options": [{ "text": "right" }, { "text": "wrong" }],
        })
    };
    let input: TestInput = serde_json::from_value(json!({
        "title": format!("Placement {language}"),
        "targetLanguage": language,
        "timeLimitMinutes": 10,
        "isActive": true,
        "questions": [question("one"), question("two")],
        "levelRanges": [
            { "level": "A1", "minScore": 0, "maxScore": 1, "message": "A1" },
            { "level": "A2", "minScore": 2, "maxScore": 2, "message": "A2" },
        ],
    }))
    .expect("a test body");
    NewTest::try_from(input).expect("a valid test")
}

#[tokio::test]
async fn every_lists_total_is_its_rows_whatever_its_filters() {
    let start = Utc
        .with_ymd_and_hms(2026, 11, 30, 22, 0, 0)
        .single()
        .expect("a time");
    let school = TestCore::at(start).await;
    let core = &school.core;
    let office = school.user("office@school.test", Role::Admin).await;
    let root = school.user("root@school.test", Role::Superadmin).await;

    // Users: complete and not, of every role; one name with a `%` in it.
    let mut students = Vec::new();
    for (n, (email, name)) in [
        ("ana@example.com", Some("Ana Silva")),
        ("ben@example.org", None),
        ("carla@example.com", Some("Carla 50% Off")),
        ("dan@school.test", None),
    ]
    .into_iter()
    .enumerate()
    {
        let user = core
            .create_user(
                &Actor::Operator,
                NewUser::new(email, Role::User, name).expect("a user"),
            )
            .await
            .expect("created");
        students.push(
            core.act_as(&Actor::Operator, &user.typed_id())
                .await
                .expect("as them"),
        );
        school.clock.advance(TimeDelta::minutes(n as i64 + 1));
    }
    core.create_user(
        &Actor::Operator,
        NewUser::new("eve@school.test", Role::Admin, None).expect("a user"),
    )
    .await
    .expect("created");

    for role in [
        None,
        Some(Role::User),
        Some(Role::Admin),
        Some(Role::Superadmin),
    ] {
        for complete in [None, Some(true), Some(false)] {
            for text in [
                None,
                Some("ana"),
                Some("example"),
                Some("50%"),
                Some("a"),
                Some("nobody"),
            ] {
                let query = UserQuery {
                    role,
                    is_registration_complete: complete,
                    text: text.map(str::to_owned),
                };
                let what = format!("users {query:?}");
                let rows = every_row(|page| core.list_users(&root, &query, page), &what).await;
                for user in &rows {
                    assert!(role.is_none_or(|r| user.role == r), "{what}");
                    assert!(
                        complete.is_none_or(|c| user.is_registration_complete == c),
                        "{what}"
                    );
                }
            }
        }
    }

    // Results of two tests, four students; then one test deleted (its results keep no test).
    let german = core
        .create_test(&office, test_of("de"))
        .await
        .expect("a test");
    let french = core
        .create_test(&office, test_of("fr"))
        .await
        .expect("a test");
    for (n, student) in students.iter().enumerate() {
        for test in [&german, &french] {
            let right = if n % 2 == 0 { 0 } else { 1 };
            let answers = json!([
                { "questionIndex": 0, "selectedOptionIndex": 0 },
                { "questionIndex": 1, "selectedOptionIndex": right },
            ]);
            core.submit_test(
                student,
                &test.typed_id(),
                SubmitInput {
                    answers: Patch::Value(answers),
                },
            )
            .await
            .expect("submitted");
            school.clock.advance(TimeDelta::minutes(1));
        }
    }
    core.delete_test(&office, &french.typed_id())
        .await
        .expect("deleted");
    let ana = Id::from(students[0].caller().expect("ana").user_id.as_str());
    for test_id in [None, Some(german.typed_id()), Some(french.typed_id())] {
        for user_id in [None, Some(ana.clone())] {
            for level in [None, Some("A1"), Some("A2")] {
                for language in [None, Some("de"), Some("fr")] {
                    let query = ResultQuery {
                        test_id: test_id.clone(),
                        user_id: user_id.clone(),
                        level: level.map(str::to_owned),
                        target_language: language.map(|l| {
                            langcamp_core::domain::LanguageTag::parse("targetLanguage", l)
                                .expect("a tag")
                        }),
                    };
                    let what = format!("results {query:?}");
                    every_row(|page| core.list_test_results(&office, &query, page), &what).await;
                }
            }
        }
    }

    // Contact requests in every status, one searched by a fragment with `_`.
    for (n, (first, email)) in [
        ("Maria", "maria@example.com"),
        ("Jo_e", "joe@example.org"),
        ("Lin", "lin@example.com"),
    ]
    .into_iter()
    .enumerate()
    {
        let input: ContactInput = serde_json::from_value(json!({
            "firstName": first, "lastName": "Person", "email": email, "message": "Hello",
        }))
        .expect("a contact body");
        let contact = core
            .create_contact(
                &Actor::Anonymous,
                NewContact::try_from(input).expect("valid"),
            )
            .await
            .expect("sent");
        let status = [
            ContactStatus::InProgress,
            ContactStatus::Closed,
            ContactStatus::Pending,
        ][n];
        core.set_contact_status(&office, &contact.typed_id(), status)
            .await
            .expect("set");
        school.clock.advance(TimeDelta::minutes(1));
    }
    for status in [
        None,
        Some(ContactStatus::Pending),
        Some(ContactStatus::InProgress),
        Some(ContactStatus::Replied),
    ] {
        for text in [
            None,
            Some("example"),
            Some("jo_e"),
            Some("ma"),
            Some("nobody"),
        ] {
            let search = ContactSearch {
                status,
                text: text.map(str::to_owned),
            };
            let what = format!("contacts {search:?}");
            every_row(|page| core.list_contacts(&office, &search, page), &what).await;
        }
    }

    // The trail over three days (the school's clock crosses midnight twice), two actions.
    for day in 0..3 {
        for n in 0..3 {
            let key = if n == 0 {
                "school_name"
            } else {
                "landing_video_url"
            };
            core.put_setting(
                &office,
                NewSetting::new(key, json!(format!("v{day}{n}"))).expect("a setting"),
            )
            .await
            .expect("put");
            school.clock.advance(TimeDelta::hours(3));
        }
        school.clock.advance(TimeDelta::hours(15));
    }
    let at = |hours: i64| (start + TimeDelta::hours(hours)).timestamp_millis();
    let times = [
        None,
        Some(at(0)),
        Some(at(1)),
        Some(at(26)),
        Some(at(49)),
        Some(at(80)),
    ];
    for from in times {
        for to in times {
            for action in [None, Some("setting.put"), Some("contact.status_changed")] {
                for actor in [None, Some(office.caller().expect("office").user_id.clone())] {
                    let query = AuditQuery {
                        actor_id: actor.clone(),
                        action: action.map(str::to_owned),
                        from,
                        to,
                        ..AuditQuery::default()
                    };
                    let what = format!("audit {query:?}");
                    let rows = every_row(|page| core.list_audit(&root, &query, page), &what).await;
                    for entry in &rows {
                        let ms = entry.at.millis();
                        assert!(
                            from.is_none_or(|f| ms >= f) && to.is_none_or(|t| ms < t),
                            "{what}"
                        );
                    }
                }
            }
        }
    }

    // And the counts behind all of that agree with a recount.
    assert_eq!(
        core.check_dashboard_rollups(&root).await.expect("checked"),
        Vec::new()
    );
}

/// A search matching more rows than its keys are read at once (1,000) is counted instead,
/// and its pages are still the rows in order: the total, a full page and the last one.
#[tokio::test]
async fn a_broad_search_is_counted_and_paged_in_order() {
    let school = TestCore::at(Utc::now()).await;
    let core = &school.core;
    let office = school.user("office@school.test", Role::Admin).await;
    for n in 0..1_001 {
        let input: ContactInput = serde_json::from_value(json!({
            "firstName": "Many", "lastName": format!("Writer{n:04}"),
            "email": format!("writer{n}@bulk.test"), "message": "Hello",
        }))
        .expect("a contact body");
        core.create_contact(
            &Actor::Anonymous,
            NewContact::try_from(input).expect("valid"),
        )
        .await
        .expect("sent");
        school.clock.advance(TimeDelta::seconds(1));
    }
    let search = |text: &str| ContactSearch {
        status: None,
        text: Some(text.to_owned()),
    };
    let last_name = |page: &Page<langcamp_core::contacts::Contact>| -> Vec<String> {
        page.list.iter().map(|c| c.last_name.clone()).collect()
    };
    // Every one matches: counted, newest first.
    let first = core
        .list_contacts(
            &office,
            &search("bulk"),
            PageRequest {
                page: 1,
                limit: 100,
            },
        )
        .await
        .expect("listed");
    assert_eq!(first.pagination.total_items, 1_001);
    assert_eq!(first.list.len(), 100);
    assert_eq!(last_name(&first)[0], "Writer1000");
    let last = core
        .list_contacts(
            &office,
            &search("bulk"),
            PageRequest {
                page: 11,
                limit: 100,
            },
        )
        .await
        .expect("listed");
    assert_eq!(last_name(&last), ["Writer0000"]);
    // 112 match (writer1, writer10 to writer19, writer100 to writer199 and writer1000):
    // from their keys alone.
    let some = core
        .list_contacts(
            &office,
            &search("writer1"),
            PageRequest {
                page: 2,
                limit: 100,
            },
        )
        .await
        .expect("listed");
    assert_eq!(some.pagination.total_items, 112);
    assert_eq!(
        last_name(&some).first().map(String::as_str),
        Some("Writer0100")
    );
    assert_eq!(some.list.len(), 12);
    assert_eq!(last_name(&some)[11], "Writer0001");
}

/// SQLite indexes rows for search in the background (migration 0190): a search finds a
/// row before the indexer reaches it, after, once the row at the indexer's mark is
/// deleted, and after a copy renumbered the rows under the mark (PostgreSQL, whose index
/// the server keeps, answers the same).
#[tokio::test]
async fn a_search_finds_every_row_whether_it_is_indexed_yet_or_not() {
    let school = TestCore::at(Utc::now()).await;
    let core = &school.core;
    let root = school.user("root@school.test", Role::Superadmin).await;
    let sqlite = core.db().backend() == langcamp_core::platform::db::Backend::Sqlite;
    let clock = &school.clock;
    let send = |first: &'static str, last: &'static str| async move {
        let input: ContactInput = serde_json::from_value(json!({
            "firstName": first, "lastName": last,
            "email": format!("{}@mail.test", first.to_lowercase()), "message": "Hello",
        }))
        .expect("a contact body");
        clock.advance(TimeDelta::seconds(1));
        core.create_contact(
            &Actor::Anonymous,
            NewContact::try_from(input).expect("valid"),
        )
        .await
        .expect("sent")
    };
    let found = |text: &'static str| {
        let root = &root;
        async move {
            let search = ContactSearch {
                status: None,
                text: Some(text.to_owned()),
            };
            every_row(
                |page| core.list_contacts(root, &search, page),
                &format!("contacts matching {text:?}"),
            )
            .await
            .iter()
            .map(|c| c.first_name.clone())
            .collect::<Vec<_>>()
        }
    };

    send("Anna", "Alpha").await;
    let bruno = send("Bruno", "Beta").await;
    assert_eq!(found("alpha").await, ["Anna"], "before the indexer");
    let indexed = core.index_searches().await.expect("indexed");
    assert_eq!(indexed, if sqlite { 3 } else { 0 }, "two contacts and root");
    assert_eq!(found("alpha").await, ["Anna"], "from the index");
    assert_eq!(found("beta").await, ["Bruno"]);
    assert_eq!(found("mail.test").await, ["Bruno", "Anna"]);

    // Bruno is the newest indexed row: the mark is his. Deleted, the next row must still
    // be read though it may take his place.
    core.delete_contact(&root, &bruno.typed_id())
        .await
        .expect("deleted");
    send("Carla", "Gamma").await;
    assert_eq!(found("beta").await, Vec::<String>::new());
    assert_eq!(found("gamma").await, ["Carla"], "after the mark's row went");
    assert_eq!(found("mail.test").await, ["Carla", "Anna"]);
    core.index_searches().await.expect("indexed");
    assert_eq!(found("gamma").await, ["Carla"]);

    if sqlite {
        // A copy that renumbered rowids no longer has the mark's row at the mark: every row
        // is read until the indexer walked the table again, and nothing is indexed twice.
        school
            .sql("UPDATE search_marks SET upto_id = 'renumbered' WHERE name = 'contacts'")
            .await;
        send("Dora", "Delta").await;
        assert_eq!(found("mail.test").await, ["Dora", "Carla", "Anna"]);
        assert_eq!(
            core.index_searches().await.expect("indexed"),
            3,
            "walked again"
        );
        assert_eq!(found("mail.test").await, ["Dora", "Carla", "Anna"]);
        assert_eq!(found("delta").await, ["Dora"]);
    }
}
