//! A snapshot of every view on the seeded school, and each view at 80x24.

use crossterm::event::KeyCode;
use langcamp_tui::view::View;

use crate::harness::{Console, assert_snapshot};

/// The number key of `view`.
pub fn key_of(view: View) -> KeyCode {
    KeyCode::Char(view.key())
}

pub async fn open(view: View) -> Console {
    let mut console = Console::seeded().await;
    console.press(key_of(view)).await;
    assert_eq!(console.app.view, view);
    console
}

#[tokio::test]
async fn the_dashboard_opens_first_with_numbers_trend_distributions_and_activity() {
    let console = Console::seeded().await;
    assert_eq!(console.app.view, View::Dashboard);
    assert_snapshot(&console, "dashboard");
}

#[tokio::test]
async fn plus_and_minus_change_the_months_of_the_dashboard_trend() {
    let mut console = Console::seeded().await;
    console.press(KeyCode::Char('-')).await;
    console.press(KeyCode::Char('-')).await;
    let data = console.app.dashboard.data.as_ref().expect("loaded");
    assert_eq!((console.app.dashboard.months, data.months), (4, 4));
    assert_eq!(data.trends.len(), 4);
    for _ in 0..30 {
        console.press(KeyCode::Char('+')).await;
    }
    let data = console.app.dashboard.data.as_ref().expect("loaded");
    assert_eq!((console.app.dashboard.months, data.months), (24, 24));
    for _ in 0..30 {
        console.press(KeyCode::Char('-')).await;
    }
    assert_eq!(console.app.dashboard.months, 1);
    assert_snapshot(&console, "dashboard-one-month");
}

/// Each list view, its selection moved down some rows, against its snapshot.
#[tokio::test]
async fn every_list_view_shows_its_items_and_the_selected_one_in_detail() {
    for (view, downs, snapshot) in [
        // Users newest first.
        (View::Users, 2, "users"),
        // Requests and the selected message.
        (View::Contacts, 1, "contacts"),
        // Tests with their level ranges and the selected test's results.
        (View::Placement, 1, "placement"),
        // Materials with their PDFs and videos.
        (View::Materials, 1, "materials"),
        // Published and unpublished courses.
        (View::Courses, 0, "courses"),
        // Keys, and the selected value as JSON.
        (View::Settings, 2, "settings"),
    ] {
        let mut console = open(view).await;
        for _ in 0..downs {
            console.press(KeyCode::Down).await;
        }
        assert_snapshot(&console, snapshot);
    }
}

#[tokio::test]
async fn the_help_screen_lists_every_key_of_the_view() {
    let mut console = open(View::Users).await;
    console.press(KeyCode::Char('?')).await;
    assert_snapshot(&console, "help-users");
    console.press(KeyCode::Esc).await;
    assert!(console.app.overlay.is_none());
}

#[tokio::test]
async fn every_view_still_shows_its_title_and_keys_at_80x24() {
    let mut console = Console::seeded().await;
    for view in View::ALL {
        console.press(key_of(view)).await;
        let screen = console.screen(80, 24);
        assert!(
            screen.contains(&format!("┌ {} ·", view.title())),
            "{view:?} at 80x24:\n{screen}"
        );
        assert!(screen.contains("? help"), "{view:?} at 80x24:\n{screen}");
        assert_eq!(screen.lines().count(), 24);
        // The tab bar names the current view and numbers every view with its key.
        let tabs = screen.lines().next().unwrap_or_default();
        let current = format!("{} {}", view.key(), view.title());
        assert!(tabs.contains(&current), "{view:?} at 80x24: {tabs}");
        for other in View::ALL {
            assert!(tabs.contains(other.key()), "{other:?}: {tabs}");
        }
    }
}

#[tokio::test]
async fn tab_and_shift_tab_walk_through_every_view() {
    let mut console = Console::seeded().await;
    let mut seen = vec![console.app.view];
    for _ in 1..View::ALL.len() {
        console.press(KeyCode::Tab).await;
        seen.push(console.app.view);
    }
    assert_eq!(seen, View::ALL);
    console.press(KeyCode::Tab).await;
    assert_eq!(console.app.view, View::ALL[0]);
    console.press(KeyCode::BackTab).await;
    assert_eq!(console.app.view, View::ALL[View::ALL.len() - 1]);
}

#[tokio::test]
#[ignore = "prints every view at 80x24 for a human to look at"]
async fn print_every_view_at_80x24() {
    let mut console = Console::seeded().await;
    for view in View::ALL {
        console.press(key_of(view)).await;
        println!("{}", console.screen(80, 24));
    }
}

#[tokio::test]
async fn a_view_says_it_is_loading_until_its_data_arrives() {
    let mut console = Console::empty().await;
    let tasks = console.app.start();
    let screen = console.screen(100, 30);
    let title = View::ALL[0].title();
    assert!(screen.contains(&format!("┌ {title} ·")), "{screen}");
    assert!(screen.contains("│Loading…"), "{screen}");
    assert!(screen.contains(" ⟳ Loading"), "{screen}");
    langcamp_tui::task::settle(&mut console.app, &console.core, tasks).await;
    let screen = console.screen(100, 30);
    assert!(!screen.contains("Loading"), "{screen}");
}

#[tokio::test]
async fn tiny_terminals_do_not_break_any_screen_or_dialog() {
    let mut console = Console::seeded().await;
    for view in View::ALL {
        console.press(key_of(view)).await;
        for (w, h) in [(1, 1), (20, 6), (40, 10)] {
            console.screen(w, h);
        }
        for key in [
            KeyCode::Char('?'),
            KeyCode::Enter,
            KeyCode::Char('d'),
            KeyCode::Char('a'),
            KeyCode::Char('s'),
            KeyCode::Char('n'),
            KeyCode::Char('p'),
        ] {
            console.press(key).await;
            for (w, h) in [(1, 1), (20, 6), (40, 10)] {
                console.screen(w, h);
            }
            console.press(KeyCode::Esc).await;
        }
    }
}
