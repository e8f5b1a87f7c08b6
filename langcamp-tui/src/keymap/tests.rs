use super::*;

fn press(code: KeyCode) -> KeyEvent {
    KeyEvent::new(code, KeyModifiers::NONE)
}

fn normal(view: View) -> KeyContext {
    in_mode(Mode::Normal, view)
}

/// `view` in `mode`, the main panel focused.
fn in_mode(mode: Mode, view: View) -> KeyContext {
    KeyContext {
        mode,
        view,
        focus: Focus::Main,
    }
}

#[test]
fn number_keys_and_tab_switch_views_in_normal_mode() {
    let cx = normal(View::Users);
    assert_eq!(
        map_key(cx, press(Char('1'))),
        Some(Action::SwitchTo(View::ALL[0]))
    );
    assert_eq!(
        map_key(cx, press(Char('0'))),
        Some(Action::SwitchTo(View::ALL[9]))
    );
    assert_eq!(map_key(cx, press(Tab)), Some(Action::NextView));
    assert_eq!(
        map_key(cx, KeyEvent::new(BackTab, KeyModifiers::SHIFT)),
        Some(Action::PrevView)
    );
}

#[test]
fn q_quits_in_normal_mode_but_is_typed_in_a_text_field() {
    assert_eq!(
        map_key(normal(View::Users), press(Char('q'))),
        Some(Action::Quit)
    );
    for mode in [Mode::Line, Mode::Editor] {
        let cx = in_mode(mode, View::Users);
        assert_eq!(map_key(cx, press(Char('q'))), Some(Action::Type('q')));
        assert_eq!(map_key(cx, press(Char('1'))), Some(Action::Type('1')));
    }
}

#[test]
fn ctrl_c_quits_in_every_mode() {
    for mode in [
        Mode::Normal,
        Mode::Help,
        Mode::Confirm,
        Mode::Choice,
        Mode::Line,
        Mode::Editor,
        Mode::Picker,
        Mode::NotSaved,
    ] {
        let cx = in_mode(mode, View::Users);
        assert_eq!(
            map_key(cx, KeyEvent::new(Char('c'), KeyModifiers::CONTROL)),
            Some(Action::Quit),
            "{mode:?}"
        );
    }
}

#[test]
fn the_editor_sends_with_ctrl_s_and_breaks_lines_with_enter() {
    let cx = in_mode(Mode::Editor, View::Users);
    assert_eq!(
        map_key(cx, KeyEvent::new(Char('s'), KeyModifiers::CONTROL)),
        Some(Action::Submit)
    );
    assert_eq!(map_key(cx, press(Enter)), Some(Action::Newline));
    assert_eq!(map_key(cx, press(Char('s'))), Some(Action::Type('s')));
    assert_eq!(map_key(cx, press(Esc)), Some(Action::Back));
}

#[test]
fn user_view_keys_map_to_their_actions() {
    let cx = normal(View::Users);
    for (code, action) in [
        (Char('j'), Action::Down),
        (Down, Action::Down),
        (Char('k'), Action::Up),
        (Char(']'), Action::NextPage),
        (PageUp, Action::PrevPage),
        (Char('/'), Action::Search),
        (Char('f'), Action::CycleFilter),
        (Char('c'), Action::CycleFilter2),
        (Char('s'), Action::SetRole),
        (Char('e'), Action::EditEmail),
        (Char('d'), Action::Delete),
        (Char('F'), Action::ResetFactors),
        (Char('x'), Action::Export),
        (Char('r'), Action::Reload),
        (Char('?'), Action::ToggleHelp),
    ] {
        assert_eq!(map_key(cx, press(code)), Some(action), "{code:?}");
    }
    assert_eq!(map_key(cx, press(Char('z'))), None);
    // Shift-f, as a terminal reports it; factors are reset on the users view only.
    assert_eq!(
        map_key(cx, KeyEvent::new(Char('F'), KeyModifiers::SHIFT)),
        Some(Action::ResetFactors)
    );
    for view in View::ALL.into_iter().filter(|v| *v != View::Users) {
        assert_eq!(map_key(normal(view), press(Char('F'))), None, "{view:?}");
    }
    // Export on the lists that have it, not elsewhere.
    for view in [View::Contacts, View::Placement] {
        assert_eq!(
            map_key(normal(view), press(Char('x'))),
            Some(Action::Export)
        );
    }
    for view in [View::Courses, View::Materials, View::Dashboard] {
        assert_eq!(map_key(normal(view), press(Char('x'))), None, "{view:?}");
    }
}

#[test]
fn eight_switches_to_the_mail_templates() {
    assert_eq!(
        map_key(normal(View::Users), press(Char('8'))),
        Some(Action::SwitchTo(View::Mail))
    );
    assert_eq!(View::Mail.next(), View::Audit);
}

#[test]
fn nine_switches_to_the_audit_trail() {
    assert_eq!(
        map_key(normal(View::Users), press(Char('9'))),
        Some(Action::SwitchTo(View::Audit))
    );
    assert_eq!(View::Audit.next(), View::Webhooks);
}

#[test]
fn zero_switches_to_the_webhooks_the_last_view() {
    assert_eq!(
        map_key(normal(View::Users), press(Char('0'))),
        Some(Action::SwitchTo(View::Webhooks))
    );
    assert_eq!(View::Dashboard.prev(), View::Webhooks);
    assert_eq!(View::Webhooks.next(), View::Dashboard);
    let tab = bindings(normal(View::Users))
        .into_iter()
        .find(|b| b.action == Action::NextView)
        .map(|b| b.label);
    assert_eq!(tab.as_deref(), Some("0-9/Tab"));
}

#[test]
fn webhook_keys_follow_the_pane_that_has_the_focus_and_none_writes() {
    let endpoints = normal(View::Webhooks);
    let deliveries = KeyContext {
        focus: Focus::Secondary,
        ..endpoints
    };
    for (cx, code, action) in [
        (endpoints, Down, Action::Down),
        (endpoints, Char('k'), Action::Up),
        (endpoints, Enter, Action::Open),
        (endpoints, Char('f'), Action::CycleFilter),
        (endpoints, Char('r'), Action::Reload),
        (deliveries, Down, Action::Down),
        (deliveries, Char(']'), Action::NextPage),
        (deliveries, PageUp, Action::PrevPage),
        (deliveries, Char('f'), Action::CycleFilter),
        (deliveries, Esc, Action::Back),
    ] {
        assert_eq!(map_key(cx, press(code)), Some(action), "{code:?}");
    }
    // Every endpoint comes in one piece: no pages.
    assert_eq!(map_key(endpoints, press(Char(']'))), None);
    let writes = [
        Action::Delete,
        Action::EditEmail,
        Action::SetRole,
        Action::SetStatus,
        Action::New,
        Action::Assign,
        Action::Unassign,
        Action::Duplicate,
        Action::TogglePublish,
        Action::ToggleActive,
        Action::Export,
    ];
    for cx in [endpoints, deliveries] {
        assert!(
            bindings(cx).iter().all(|b| !writes.contains(&b.action)),
            "a write key in the webhooks view"
        );
    }
}

#[test]
fn audit_view_keys_filter_and_none_writes() {
    let cx = normal(View::Audit);
    for (code, action) in [
        (Down, Action::Down),
        (Char('k'), Action::Up),
        (Char(']'), Action::NextPage),
        (PageUp, Action::PrevPage),
        (Char('u'), Action::FilterActor),
        (Char('a'), Action::FilterAction),
        (Char('f'), Action::CycleFilter),
        (Enter, Action::Open),
        (Char('i'), Action::FilterTargetId),
        (Char('s'), Action::FilterSince),
        (Char('x'), Action::ClearFilters),
        (Char('r'), Action::Reload),
        (Char('?'), Action::ToggleHelp),
        (Esc, Action::Back),
    ] {
        assert_eq!(map_key(cx, press(code)), Some(action), "{code:?}");
    }
    // Read-only: no key deletes, edits or adds an entry.
    for code in [Char('d'), Char('e'), Char('n'), Delete] {
        assert_eq!(map_key(cx, press(code)), None, "{code:?}");
    }
    let writes = [
        Action::Delete,
        Action::EditEmail,
        Action::SetRole,
        Action::SetStatus,
        Action::New,
        Action::Assign,
        Action::Unassign,
        Action::Duplicate,
        Action::TogglePublish,
        Action::ToggleActive,
    ];
    assert!(
        bindings(cx).iter().all(|b| !writes.contains(&b.action)),
        "a write key in the audit view"
    );
    // The audit filter keys are the audit view's own (`x` exports a list elsewhere).
    assert_eq!(map_key(normal(View::Courses), press(Char('x'))), None);
    assert_eq!(
        map_key(normal(View::Users), press(Char('x'))),
        Some(Action::Export)
    );
    assert_eq!(map_key(normal(View::Courses), press(Char('i'))), None);
    // At a filter prompt the keys are typed.
    let line = in_mode(Mode::Line, View::Audit);
    assert_eq!(map_key(line, press(Char('x'))), Some(Action::Type('x')));
    assert_eq!(map_key(line, press(Char('9'))), Some(Action::Type('9')));
}

#[test]
fn mail_view_keys_map_to_their_actions() {
    let cx = normal(View::Mail);
    for (code, action) in [
        (Down, Action::Down),
        (Char('k'), Action::Up),
        (Enter, Action::Open),
        (Char('e'), Action::Open),
        (Char('p'), Action::TogglePreview),
        (Char('n'), Action::New),
        (Char('d'), Action::Delete),
        (Char('r'), Action::Reload),
        (Esc, Action::Back),
    ] {
        assert_eq!(map_key(cx, press(code)), Some(action), "{code:?}");
    }
    // No pages: every template is on one.
    assert_eq!(map_key(cx, press(Char(']'))), None);
    // The mail keys are the mail view's own.
    assert_eq!(map_key(normal(View::Courses), press(Char('n'))), None);
    assert_eq!(map_key(normal(View::Settings), press(Char('p'))), None);
}

#[test]
fn a_refused_edit_is_edited_again_or_dropped() {
    let cx = in_mode(Mode::NotSaved, View::Mail);
    assert_eq!(map_key(cx, press(Char('e'))), Some(Action::Open));
    assert_eq!(map_key(cx, press(Enter)), Some(Action::Open));
    assert_eq!(map_key(cx, press(Esc)), Some(Action::Back));
    assert_eq!(map_key(cx, press(Char('q'))), None);
    assert_eq!(map_key(cx, press(Char('8'))), None);
}

#[test]
fn plus_and_minus_change_the_dashboard_months_only_on_the_dashboard() {
    let cx = normal(View::Dashboard);
    assert_eq!(map_key(cx, press(Char('+'))), Some(Action::MoreMonths));
    assert_eq!(map_key(cx, press(Char('='))), Some(Action::MoreMonths));
    assert_eq!(map_key(cx, press(Char('-'))), Some(Action::FewerMonths));
    assert_eq!(map_key(normal(View::Users), press(Char('+'))), None);
}

#[test]
fn placement_keys_follow_the_pane_that_has_the_focus() {
    let tests = normal(View::Placement);
    let results = KeyContext {
        focus: Focus::Secondary,
        ..tests
    };
    assert_eq!(map_key(tests, press(Char('a'))), Some(Action::ToggleActive));
    assert_eq!(map_key(tests, press(Enter)), Some(Action::Open));
    assert_eq!(map_key(tests, press(Char('d'))), None);
    assert_eq!(map_key(results, press(Char('d'))), Some(Action::Delete));
    assert_eq!(map_key(results, press(Char('a'))), None);
    assert_eq!(map_key(results, press(Esc)), Some(Action::Back));
}

#[test]
fn the_picker_types_letters_and_marks_with_space() {
    let cx = in_mode(Mode::Picker, View::Materials);
    assert_eq!(map_key(cx, press(Char('j'))), Some(Action::Type('j')));
    assert_eq!(map_key(cx, press(Char(' '))), Some(Action::Toggle));
    assert_eq!(map_key(cx, press(Down)), Some(Action::Down));
    assert_eq!(map_key(cx, press(Enter)), Some(Action::Submit));
}

#[test]
fn confirmation_takes_only_yes_or_no() {
    let cx = in_mode(Mode::Confirm, View::Users);
    assert_eq!(map_key(cx, press(Char('y'))), Some(Action::Yes));
    assert_eq!(map_key(cx, press(Esc)), Some(Action::No));
    assert_eq!(map_key(cx, press(Char('d'))), None);
    assert_eq!(map_key(cx, press(Char('q'))), None);
}

#[test]
fn key_releases_are_ignored() {
    let mut event = press(Char('q'));
    event.kind = KeyEventKind::Release;
    assert_eq!(map_key(normal(View::Users), event), None);
}

#[test]
fn every_footer_key_of_every_view_is_bound_once() {
    for view in View::ALL {
        for focus in [Focus::Main, Focus::Secondary] {
            let list = bindings(KeyContext {
                focus,
                ..normal(view)
            });
            for (i, a) in list.iter().enumerate() {
                for b in &list[i + 1..] {
                    for k in &a.keys {
                        assert!(!b.keys.contains(k), "{view:?}: {k:?} bound twice");
                    }
                }
            }
        }
    }
}
