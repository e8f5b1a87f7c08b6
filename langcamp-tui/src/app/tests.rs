use langcamp_core::auth::{Factor, FactorKind, FactorList};
use langcamp_core::domain::{Email, Id};
use langcamp_core::settings::Setting;
use langcamp_core::users::User;
use langcamp_core::webhooks::DeliveryStatus;
use langcamp_core::{Page, PageRequest, Role, Timestamp};

use super::*;
use crate::task::{MailPreview, UserFactors};

/// The id and address of [`user`]`(n, _)`, as the jobs about it name the user.
fn key_of(n: i64) -> (Id<User>, String) {
    (Id::from(format!("id-{n}")), format!("u{n}@example.com"))
}

fn user(n: i64, role: Role) -> User {
    let (id, email) = key_of(n);
    User {
        id: id.into_string(),
        email,
        name: Some(format!("User {n}")),
        role,
        is_registration_complete: true,
        age: None,
        gender: None,
        city: None,
        country: None,
        country_code: None,
        phone_number: None,
        locale: "en".into(),
        created_at: Timestamp::from_millis(n),
        updated_at: Timestamp::from_millis(n),
    }
}

/// An app on the Users view showing `users` (answering the load it started).
fn with_users(users: Vec<User>) -> App {
    let mut app = App::new();
    let tasks = app.switch(View::Users);
    let total = i64::try_from(users.len()).unwrap_or(0);
    let page = Page::new(users, PageRequest::default(), total);
    let follow = app.finish(Done {
        id: tasks[0].id,
        outcome: Ok(Data::Users(page)),
    });
    // The selected user's second factors load next: they have none.
    for task in follow {
        let Job::UserFactors { id } = task.job else {
            panic!("expected the selected user's factors, got {:?}", task.job);
        };
        let more = app.finish(factors_answer(task.id, id, factors(&[], 0)));
        assert!(more.is_empty());
    }
    app
}

/// A factor list of `named` factors (kind, name) and `codes` recovery codes left.
fn factors(named: &[(FactorKind, &str)], codes: u32) -> FactorList {
    FactorList {
        factors: named
            .iter()
            .enumerate()
            .map(|(i, (kind, name))| Factor {
                id: format!("factor-{i}"),
                kind: *kind,
                name: (*name).to_owned(),
                created_at: Timestamp::from_millis(0),
                last_used_at: None,
            })
            .collect(),
        recovery_codes_left: codes,
    }
}

/// The answer to task `id` loading the factors of user `user_id`: `list`.
fn factors_answer(id: u64, user_id: Id<User>, list: FactorList) -> Done {
    Done {
        id,
        outcome: Ok(Data::Factors(UserFactors { user_id, list })),
    }
}

fn jobs(tasks: &[Task]) -> Vec<&Job> {
    tasks.iter().map(|t| &t.job).collect()
}

#[test]
fn switching_to_a_view_loads_it_and_says_so() {
    let mut app = App::new();
    let tasks = app.update(Action::SwitchTo(View::Contacts));
    assert_eq!(app.view, View::Contacts);
    assert_eq!(
        jobs(&tasks),
        [&Job::Contacts {
            q: String::new(),
            status: None,
            page: 1
        }]
    );
    assert_eq!(app.activity(), Some("Loading contact requests…"));
    assert!(app.contacts.list.is_loading());
}

#[test]
fn the_answer_to_an_older_load_is_dropped() {
    let mut app = App::new();
    let first = app.update(Action::SwitchTo(View::Users));
    let second = app.update(Action::Reload);
    let page = |n| Page::new(vec![user(n, Role::User)], PageRequest::default(), 1);
    let follow = app.finish(Done {
        id: second[0].id,
        outcome: Ok(Data::Users(page(2))),
    });
    assert!(
        app.finish(Done {
            id: first[0].id,
            outcome: Ok(Data::Users(page(1))),
        })
        .is_empty()
    );
    assert_eq!(app.users.list.items[0].email, "u2@example.com");
    // Only the selected user's factors, asked for by the answer taken, are under way.
    assert_eq!(jobs(&follow), [&Job::UserFactors { id: key_of(2).0 }]);
    assert_eq!(app.busy.keys().collect::<Vec<_>>(), [&follow[0].id]);
    app.finish(factors_answer(follow[0].id, key_of(2).0, factors(&[], 0)));
    assert!(app.busy.is_empty());
    assert_eq!(app.activity(), None);
}

#[test]
fn a_failed_load_shows_the_error_and_keeps_the_screen_usable() {
    let mut app = with_users(vec![user(1, Role::User), user(2, Role::User)]);
    let tasks = app.update(Action::Reload);
    app.finish(Done {
        id: tasks[0].id,
        outcome: Err("the database is not answering".into()),
    });
    assert_eq!(
        app.message,
        Some(Message {
            text: "the database is not answering".into(),
            is_error: true
        })
    );
    assert!(!app.users.list.is_loading());
    assert_eq!(app.users.list.items.len(), 2, "what was shown stays");
    app.update(Action::Down);
    assert_eq!(app.users.list.selected, 1);
    assert_eq!(app.message, None, "the next key clears the message");
    assert_eq!(app.update(Action::Reload).len(), 1);
}

#[test]
fn delete_asks_first_and_only_yes_deletes() {
    let mut app = with_users(vec![user(1, Role::User), user(2, Role::Admin)]);
    app.update(Action::Down);
    assert!(app.update(Action::Delete).is_empty());
    assert_eq!(app.mode(), Mode::Confirm);
    assert!(app.update(Action::Delete).is_empty(), "other keys wait");
    assert!(app.update(Action::No).is_empty());
    assert_eq!(app.mode(), Mode::Normal);

    app.update(Action::Delete);
    let tasks = app.update(Action::Yes);
    let (id, email) = key_of(2);
    assert_eq!(jobs(&tasks), [&Job::DeleteUser { id, email }]);
    assert_eq!(app.activity(), Some("Deleting…"));
}

#[test]
fn a_successful_write_reports_and_reloads_its_view() {
    let mut app = with_users(vec![user(1, Role::User)]);
    app.update(Action::Delete);
    let tasks = app.update(Action::Yes);
    let reload = app.finish(Done {
        id: tasks[0].id,
        outcome: Ok(Data::Written("deleted u1@example.com".into())),
    });
    assert_eq!(
        app.message,
        Some(Message {
            text: "deleted u1@example.com".into(),
            is_error: false
        })
    );
    assert!(matches!(jobs(&reload)[..], [Job::Users { .. }]));
}

#[test]
fn an_emptied_last_page_loads_the_page_before() {
    let mut app = with_users(vec![user(1, Role::User)]);
    app.users.list.page = 2;
    let tasks = app.update(Action::Reload);
    let empty = Page::new(Vec::new(), PageRequest { page: 2, limit: 15 }, 15);
    let follow = app.finish(Done {
        id: tasks[0].id,
        outcome: Ok(Data::Users(empty)),
    });
    assert!(matches!(jobs(&follow)[..], [Job::Users { page: 1, .. }]));
}

/// Replaces the e-mail prompt's "example.com" (of `u1@example.com`) with `domain`.
fn type_domain(app: &mut App, domain: &str) {
    for _ in 0.."example.com".len() {
        app.update(Action::Backspace);
    }
    for c in domain.chars() {
        app.update(Action::Type(c));
    }
}

#[test]
fn a_prompt_stays_open_with_its_text_when_saving_fails() {
    let mut app = with_users(vec![user(1, Role::User)]);
    app.update(Action::EditEmail);
    assert_eq!(app.mode(), Mode::Line);
    type_domain(&mut app, "taken.example");
    let tasks = app.update(Action::Submit);
    let email = Email::parse("email", "u1@taken.example").expect("an address");
    assert_eq!(
        jobs(&tasks),
        [&Job::SetEmail {
            id: "id-1".into(),
            email
        }]
    );
    assert!(app.update(Action::Submit).is_empty(), "one save at a time");
    app.finish(Done {
        id: tasks[0].id,
        outcome: Err("a user with that e-mail address already exists".into()),
    });
    assert_eq!(app.mode(), Mode::Line);
    assert!(app.message.as_ref().is_some_and(|m| m.is_error));
    match &app.overlay {
        Some(Overlay::Prompt {
            input, awaiting, ..
        }) => {
            assert_eq!(input.text(), "u1@taken.example");
            assert_eq!(*awaiting, None);
        }
        other => panic!("expected the prompt, got {other:?}"),
    }
    assert_eq!(app.update(Action::Submit).len(), 1, "it can be sent again");
}

#[test]
fn an_address_that_is_not_one_is_refused_at_the_prompt() {
    let mut app = with_users(vec![user(1, Role::User)]);
    app.update(Action::EditEmail);
    type_domain(&mut app, "bad");
    assert!(app.update(Action::Submit).is_empty(), "nothing is sent");
    assert_eq!(app.mode(), Mode::Line);
    let message = app.message.as_ref().expect("a message");
    assert!(message.is_error);
    assert_eq!(message.text, "email must be a valid e-mail address");
    match &app.overlay {
        Some(Overlay::Prompt { input, .. }) => assert_eq!(input.text(), "u1@bad"),
        other => panic!("expected the prompt, got {other:?}"),
    }
}

#[test]
fn typing_a_search_reloads_the_first_page_and_esc_clears_it() {
    let mut app = with_users(vec![user(1, Role::User)]);
    app.users.list.page = 3;
    app.update(Action::Search);
    assert_eq!(app.mode(), Mode::Line);
    let tasks = app.update(Action::Type('a'));
    assert_eq!(
        jobs(&tasks),
        [&Job::Users {
            q: "a".into(),
            role: None,
            complete: None,
            page: 1
        }]
    );
    assert!(app.update(Action::Left).is_empty(), "no change, no load");
    app.update(Action::Submit);
    assert_eq!(app.mode(), Mode::Normal);
    assert_eq!(app.users.search.query.text(), "a");
    app.update(Action::Search);
    let tasks = app.update(Action::Back);
    assert!(matches!(&jobs(&tasks)[..], [Job::Users { q, .. }] if q.is_empty()));
}

#[test]
fn the_filters_cycle_and_start_again_at_page_one() {
    let mut app = with_users(vec![user(1, Role::User)]);
    let roles: Vec<Option<Role>> = (0..4)
        .map(|_| {
            app.update(Action::CycleFilter);
            app.users.role
        })
        .collect();
    assert_eq!(
        roles,
        [
            Some(Role::User),
            Some(Role::Admin),
            Some(Role::Superadmin),
            None
        ]
    );
    let tasks = app.update(Action::CycleFilter2);
    assert!(matches!(
        jobs(&tasks)[..],
        [Job::Users {
            complete: Some(true),
            page: 1,
            ..
        }]
    ));
}

#[test]
fn choosing_the_current_role_changes_nothing() {
    let mut app = with_users(vec![user(1, Role::Admin)]);
    app.update(Action::SetRole);
    assert!(app.update(Action::Submit).is_empty());
    assert_eq!(app.mode(), Mode::Normal);
    app.update(Action::SetRole);
    app.update(Action::Down);
    let tasks = app.update(Action::Submit);
    let (id, email) = key_of(1);
    let role = Role::Superadmin;
    assert_eq!(jobs(&tasks), [&Job::SetRole { id, email, role }]);
}

#[test]
fn a_setting_value_that_is_not_json_is_not_sent() {
    let mut app = App::new();
    let tasks = app.update(Action::SwitchTo(View::Settings));
    app.finish(Done {
        id: tasks[0].id,
        outcome: Ok(Data::Settings(vec![Setting {
            key: "max_class_size".into(),
            value: serde_json::json!(12),
            updated_at: Timestamp::from_millis(0),
        }])),
    });
    app.update(Action::Open);
    assert_eq!(app.mode(), Mode::Editor);
    app.update(Action::Type('x'));
    assert!(app.update(Action::Submit).is_empty());
    assert!(
        app.message
            .as_ref()
            .is_some_and(|m| m.is_error && m.text.starts_with("not valid JSON"))
    );
    assert_eq!(app.mode(), Mode::Editor);
    app.update(Action::Backspace);
    app.update(Action::Backspace);
    app.update(Action::Backspace);
    for c in "null".chars() {
        app.update(Action::Type(c));
    }
    assert!(app.update(Action::Submit).is_empty());
    for _ in 0..4 {
        app.update(Action::Backspace);
    }
    app.update(Action::Type('9'));
    let tasks = app.update(Action::Submit);
    assert_eq!(
        jobs(&tasks),
        [&Job::PutSetting {
            key: "max_class_size".into(),
            value: serde_json::json!(9)
        }]
    );
}

#[test]
fn quit_works_with_a_dialog_open_and_help_toggles() {
    let mut app = App::new();
    app.update(Action::ToggleHelp);
    assert_eq!(app.mode(), Mode::Help);
    app.update(Action::Down);
    assert_eq!(app.mode(), Mode::Help, "help stays until closed");
    app.update(Action::ToggleHelp);
    assert_eq!(app.mode(), Mode::Normal);
    app.update(Action::ToggleHelp);
    app.update(Action::Quit);
    assert!(!app.running);
}

/// An app on the Mail view listing the `otp` templates in `locales`, built-in.
fn with_otp_templates(locales: &[&str]) -> App {
    use langcamp_core::mail_templates::{MailTemplate, TemplateKind};
    let mut app = App::new();
    let tasks = app.update(Action::SwitchTo(View::Mail));
    let list = locales
        .iter()
        .map(|locale| MailTemplate {
            kind: TemplateKind::Otp,
            locale: (*locale).to_owned(),
            subject: format!("Code ({locale})"),
            text: "Your code: {{ code }}".into(),
            html: None,
            built_in: true,
            updated_at: None,
        })
        .collect();
    let follow = app.finish(Done {
        id: tasks[0].id,
        outcome: Ok(Data::MailTemplates(list)),
    });
    assert!(follow.is_empty());
    app
}

#[test]
fn a_save_that_fails_offers_the_edited_text_again() {
    let mut app = with_otp_templates(&["de", "en"]);
    assert!(app.update(Action::Open).is_empty());
    let request = app.take_edit().expect("a text to edit");
    assert_eq!(request.file_name, "otp.de.mail");
    let edited = request.text.replace("Your code", "Ihr Code");
    let tasks = app.edited_outside(request, Ok(edited.clone()));
    assert!(matches!(jobs(&tasks)[..], [Job::PutMailTemplate { .. }]));
    assert_eq!(app.activity(), Some("Saving…"));

    app.finish(Done {
        id: tasks[0].id,
        outcome: Err("the database is not answering; try again (r reloads)".into()),
    });
    let Some(Overlay::NotSaved { problems, .. }) = &app.overlay else {
        panic!("no problems shown: {:?}", app.overlay);
    };
    assert_eq!(
        problems,
        &["the database is not answering; try again (r reloads)".to_owned()]
    );
    assert_eq!(app.mode(), Mode::NotSaved);
    assert!(app.update(Action::Open).is_empty());
    assert_eq!(app.mode(), Mode::Normal);
    let again = app.take_edit().expect("the text again");
    assert_eq!(again.text, edited);
    assert!(app.take_edit().is_none());
}

#[test]
fn the_preview_follows_the_selection_and_drops_older_answers() {
    use langcamp_core::mail_templates::{RenderedMail, TemplateKind};
    let mut app = with_otp_templates(&["de", "en", "fr"]);
    let first = app.update(Action::TogglePreview);
    assert!(matches!(
        jobs(&first)[..],
        [Job::PreviewMailTemplate {
            kind: TemplateKind::Otp,
            ..
        }]
    ));
    let second = app.update(Action::Down);
    assert_eq!(second.len(), 1);
    let preview = |locale: &str| MailPreview {
        kind: TemplateKind::Otp,
        locale: locale.into(),
        mail: RenderedMail {
            subject: format!("Code ({locale})"),
            text: "Your code: 428517".into(),
            html: String::new(),
        },
    };
    app.finish(Done {
        id: first[0].id,
        outcome: Ok(Data::MailPreview(preview("de"))),
    });
    assert!(app.mail.preview.is_none(), "an older answer is dropped");
    app.finish(Done {
        id: second[0].id,
        outcome: Ok(Data::MailPreview(preview("en"))),
    });
    let shown = app.mail.selected_preview().expect("the preview of en");
    assert_eq!(shown.mail.subject, "Code (en)");
    // The next one renders too; with the preview hidden, moving renders nothing.
    assert_eq!(app.update(Action::Down).len(), 1);
    assert!(app.update(Action::TogglePreview).is_empty());
    assert!(app.update(Action::Up).is_empty());
}

#[test]
fn the_selected_users_factors_load_after_the_list_and_follow_the_selection() {
    let mut app = App::new();
    let tasks = app.switch(View::Users);
    let users = vec![user(1, Role::User), user(2, Role::Admin)];
    let page = Page::new(users, PageRequest::default(), 2);
    let first = app.finish(Done {
        id: tasks[0].id,
        outcome: Ok(Data::Users(page)),
    });
    let ((id1, _), (id2, _)) = (key_of(1), key_of(2));
    assert_eq!(jobs(&first), [&Job::UserFactors { id: id1.clone() }]);
    assert_eq!(app.activity(), Some("Loading second factors…"));
    let second = app.update(Action::Down);
    assert_eq!(jobs(&second), [&Job::UserFactors { id: id2.clone() }]);
    assert!(
        app.update(Action::Down).is_empty(),
        "on the last row the selection stays and nothing loads"
    );

    app.finish(factors_answer(first[0].id, id1, factors(&[], 0)));
    assert!(app.users.factors.is_none(), "an older answer is dropped");
    let totp = factors(&[(FactorKind::Totp, "Phone app")], 10);
    app.finish(factors_answer(second[0].id, id2, totp.clone()));
    assert_eq!(app.users.factors_id, None);
    let selected = app.users.list.selected().expect("user 2");
    assert_eq!(app.users.factors_of(selected), Some(&totp));

    // Back on user 1, user 2's factors are not shown as theirs while theirs load.
    assert_eq!(app.update(Action::Up).len(), 1);
    let selected = app.users.list.selected().expect("user 1");
    assert_eq!(app.users.factors_of(selected), None);
}

#[test]
fn a_failed_factor_load_shows_the_error_and_stops_loading() {
    let mut app = with_users(vec![user(1, Role::User), user(2, Role::User)]);
    let tasks = app.update(Action::Down);
    app.finish(Done {
        id: tasks[0].id,
        outcome: Err("the database is not answering".into()),
    });
    assert!(app.message.as_ref().is_some_and(|m| m.is_error));
    assert_eq!(app.users.factors_id, None);
    assert_eq!(app.activity(), None);
    assert_eq!(app.users.list.items.len(), 2, "the list stays");
}

#[test]
fn reset_factors_asks_first_then_resets_reloads_and_says_so() {
    let users = || vec![user(1, Role::User), user(2, Role::Admin)];
    let mut app = with_users(users());
    let load = app.update(Action::Down);
    let (id, email) = key_of(2);
    let list = factors(
        &[
            (FactorKind::Totp, "Phone app"),
            (FactorKind::Passkey, "MacBook"),
        ],
        9,
    );
    app.finish(factors_answer(load[0].id, id.clone(), list));

    assert!(app.update(Action::ResetFactors).is_empty());
    assert_eq!(app.mode(), Mode::Confirm);
    assert!(
        app.update(Action::ResetFactors).is_empty(),
        "other keys wait"
    );
    assert!(app.update(Action::No).is_empty());
    assert_eq!(app.mode(), Mode::Normal);

    app.update(Action::ResetFactors);
    let tasks = app.update(Action::Yes);
    assert_eq!(
        jobs(&tasks),
        [&Job::ResetFactors {
            id: id.clone(),
            email: email.clone()
        }]
    );
    assert_eq!(app.activity(), Some("Resetting…"));
    let done = format!("reset the second factors of {email}; their sign-ins ended");
    let reload = app.finish(Done {
        id: tasks[0].id,
        outcome: Ok(Data::Written(done.clone())),
    });
    assert_eq!(
        app.message,
        Some(Message {
            text: done,
            is_error: false
        })
    );
    assert!(matches!(jobs(&reload)[..], [Job::Users { .. }]));
    // The reloaded list loads the selected user's factors again.
    let again = app.finish(Done {
        id: reload[0].id,
        outcome: Ok(Data::Users(Page::new(users(), PageRequest::default(), 2))),
    });
    assert_eq!(jobs(&again), [&Job::UserFactors { id }]);
}

#[test]
fn a_user_without_a_factor_has_none_to_reset() {
    let mut app = with_users(vec![user(1, Role::User)]);
    assert!(app.update(Action::ResetFactors).is_empty());
    assert_eq!(app.mode(), Mode::Normal);
    assert_eq!(
        app.message,
        Some(Message {
            text: "u1@example.com has no second factor: nothing to reset".into(),
            is_error: true
        })
    );
}

/// An endpoint standing `n`, hearing `contact.created`, with nothing delivered yet.
fn standing(n: i64) -> langcamp_core::webhooks::EndpointStanding {
    use langcamp_core::webhooks::{Endpoint, EndpointStanding, Event};
    EndpointStanding {
        endpoint: Endpoint {
            id: format!("endpoint-{n}"),
            url: format!("https://hooks.example.com/{n}"),
            events: vec![Event::ContactCreated],
            description: None,
            enabled: true,
            created_at: Timestamp::from_millis(n),
            updated_at: Timestamp::from_millis(n),
            secret: None,
        },
        pending: 0,
        failed: 0,
        delivered: 0,
        last_delivered_at: None,
        failing_rounds: 0,
        resting_until: None,
    }
}

/// The endpoint id and status filter of a deliveries load; a failure for any other job.
fn deliveries_of(task: &Task) -> (String, Option<DeliveryStatus>, u32) {
    match &task.job {
        Job::WebhookDeliveries { id, status, page } => (id.as_str().to_owned(), *status, *page),
        other => panic!("expected a deliveries load, got {other:?}"),
    }
}

#[test]
fn the_deliveries_follow_the_selected_endpoint_and_older_answers_are_dropped() {
    let mut app = App::new();
    let tasks = app.switch(View::Webhooks);
    assert_eq!(jobs(&tasks), [&Job::WebhookStandings]);
    let follow = app.finish(Done {
        id: tasks[0].id,
        outcome: Ok(Data::WebhookStandings(vec![standing(1), standing(2)])),
    });
    assert_eq!(follow.len(), 1);
    assert_eq!(deliveries_of(&follow[0]), ("endpoint-1".into(), None, 1));
    let first = follow[0].id;

    // Down: the second endpoint's deliveries; the first's answer, late, is dropped.
    let tasks = app.update(Action::Down);
    assert_eq!(deliveries_of(&tasks[0]), ("endpoint-2".into(), None, 1));
    let empty = Page::new(Vec::new(), PageRequest::default(), 0);
    assert!(
        app.finish(Done {
            id: first,
            outcome: Ok(Data::WebhookDeliveries(empty)),
        })
        .is_empty()
    );
    assert!(!app.webhooks.deliveries.loaded);

    // f filters them by status, Enter gives them the keys, Esc gives them back.
    let tasks = app.update(Action::CycleFilter);
    let pending = Some(DeliveryStatus::Pending);
    assert_eq!(deliveries_of(&tasks[0]), ("endpoint-2".into(), pending, 1));
    app.update(Action::Open);
    assert_eq!(app.key_context().focus, Focus::Secondary);
    assert!(app.update(Action::Down).is_empty(), "no endpoint move");
    assert_eq!(app.webhooks.endpoints.selected, 1);
    app.update(Action::Back);
    assert_eq!(app.key_context().focus, Focus::Main);

    // r reloads the endpoints, then the deliveries of the one still selected.
    let tasks = app.update(Action::Reload);
    assert_eq!(jobs(&tasks), [&Job::WebhookStandings]);
    let follow = app.finish(Done {
        id: tasks[0].id,
        outcome: Ok(Data::WebhookStandings(vec![standing(1), standing(2)])),
    });
    assert_eq!(deliveries_of(&follow[0]), ("endpoint-2".into(), pending, 1));
}

#[test]
fn without_endpoints_no_deliveries_load_and_enter_does_nothing() {
    let mut app = App::new();
    let tasks = app.switch(View::Webhooks);
    let follow = app.finish(Done {
        id: tasks[0].id,
        outcome: Ok(Data::WebhookStandings(Vec::new())),
    });
    assert!(follow.is_empty());
    assert!(app.webhooks.deliveries.loaded);
    app.update(Action::Open);
    assert_eq!(app.key_context().focus, Focus::Main);
}
