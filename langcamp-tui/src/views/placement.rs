//! Placement: the tests with their level ranges, and results per test (the selected one)
//! or per user (picked by e-mail). Activate / deactivate a test; delete a result.

use langcamp_core::Page;
use langcamp_core::domain::Email;
use langcamp_core::placement::{ProficiencyTest, TestMode, TestResult};
use ratatui::Frame;
use ratatui::layout::Constraint::{Fill, Length};
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

use crate::app::{App, Listing, Overlay, PromptPurpose};
use crate::input::LineInput;
use crate::keymap::{Action, Focus};
use crate::table::{Column, ListTable, optional};
use crate::task::{ExportList, Job, ResultScope, Task};
use crate::ui;
use crate::view::View;

#[derive(Clone, Debug, Default)]
pub struct PlacementState {
    pub tests: Listing<ProficiencyTest>,
    pub results: Listing<TestResult>,
    /// Whose results are shown: the selected test's, or a user's.
    pub scope: Option<ResultScope>,
    /// The results pane has the keys (otherwise the tests).
    pub results_focused: bool,
}

impl PlacementState {
    pub fn focus(&self) -> Focus {
        if self.results_focused {
            Focus::Secondary
        } else {
            Focus::Main
        }
    }
}

pub(crate) fn load(app: &mut App) -> Vec<Task> {
    let job = Job::Tests {
        page: app.placement.tests.page,
    };
    let task = app.task(View::Placement, "Loading tests…", job);
    let mut tasks = app.placement.tests.loading(task);
    tasks.extend(load_results(app));
    tasks
}

fn load_results(app: &mut App) -> Vec<Task> {
    let Some(scope) = app.placement.scope.clone() else {
        return Vec::new();
    };
    let job = Job::Results {
        scope,
        page: app.placement.results.page,
    };
    let task = app.task(View::Placement, "Loading results…", job);
    app.placement.results.loading(task)
}

/// Shows the results of `scope` from its first page.
fn show_results(app: &mut App, scope: ResultScope) -> Vec<Task> {
    let s = &mut app.placement;
    s.scope = Some(scope);
    s.results = Listing::default();
    load_results(app)
}

/// After the test selection moved: the results follow it (unless a user's are shown and
/// the selection did not move).
fn follow_selection(app: &mut App) -> Vec<Task> {
    let s = &app.placement;
    let Some(test) = s.tests.selected() else {
        return Vec::new();
    };
    let scope = ResultScope::Test {
        id: test.typed_id(),
        title: test.title.clone(),
    };
    if s.scope.as_ref() == Some(&scope) {
        return Vec::new();
    }
    show_results(app, scope)
}

pub(crate) fn tests_loaded(app: &mut App, id: u64, page: Page<ProficiencyTest>) -> Vec<Task> {
    let s = &mut app.placement;
    if s.tests.load_id != Some(id) {
        return Vec::new();
    }
    if s.tests.fill_page(page) {
        return load(app);
    }
    if s.scope.is_none() {
        return follow_selection(app);
    }
    Vec::new()
}

pub(crate) fn results_loaded(app: &mut App, id: u64, page: Page<TestResult>) -> Vec<Task> {
    if app.placement.results.answer_page(id, page) {
        return load_results(app);
    }
    Vec::new()
}

pub(crate) fn action(app: &mut App, action: Action) -> Vec<Task> {
    if app.placement.results_focused {
        results_action(app, action)
    } else {
        tests_action(app, action)
    }
}

/// The results shown (the selected test's or a user's) as a CSV file.
fn export_results(app: &mut App) -> Vec<Task> {
    match app.placement.scope.clone() {
        Some(scope) => {
            let job = Job::Export(ExportList::Results(scope));
            vec![app.task(View::Placement, "Exporting results…", job)]
        }
        None => {
            app.info("no results shown: select a test, or u for a user's results");
            Vec::new()
        }
    }
}

fn tests_action(app: &mut App, action: Action) -> Vec<Task> {
    if action == Action::Export {
        return export_results(app);
    }
    let s = &mut app.placement;
    match action {
        Action::Up | Action::Down => {
            s.tests.move_selection(action);
            return follow_selection(app);
        }
        Action::NextPage | Action::PrevPage if s.tests.turn_page(action) => return load(app),
        Action::Open if s.scope.is_some() => s.results_focused = true,
        Action::ToggleActive => {
            if let Some(t) = s.tests.selected() {
                let job = Job::SetTestActive {
                    id: t.typed_id(),
                    title: t.title.clone(),
                    active: !t.is_active,
                };
                return vec![app.task(View::Placement, "Saving…", job)];
            }
        }
        Action::ResultsByUser => {
            app.overlay = Some(Overlay::Prompt {
                title: "Results of the user with the e-mail address".into(),
                input: LineInput::default(),
                purpose: PromptPurpose::ResultsOf,
                awaiting: None,
            });
        }
        _ => {}
    }
    Vec::new()
}

fn results_action(app: &mut App, action: Action) -> Vec<Task> {
    if action == Action::Export {
        return export_results(app);
    }
    let s = &mut app.placement;
    match action {
        Action::Up | Action::Down => s.results.move_selection(action),
        Action::NextPage | Action::PrevPage if s.results.turn_page(action) => {
            return load_results(app);
        }
        Action::Back => s.results_focused = false,
        Action::Delete => {
            if let Some(r) = s.results.selected() {
                app.overlay = Some(Overlay::Confirm {
                    question: format!(
                        "Delete the result of {} in \"{}\" ({} {}/{}, {})?",
                        r.user.email,
                        r.test.title,
                        r.level,
                        r.total_score,
                        r.max_score,
                        ui::date(r.completed_at)
                    ),
                    job: Job::DeleteResult {
                        id: r.typed_id(),
                        who: r.user.email.clone(),
                    },
                    view: View::Placement,
                });
            }
        }
        _ => {}
    }
    Vec::new()
}

/// The e-mail address was entered: show that user's results.
pub(crate) fn results_of_user(app: &mut App, email: &str) -> Vec<Task> {
    if email.trim().is_empty() {
        return Vec::new();
    }
    let email = match Email::parse("email", email) {
        Ok(email) => email,
        Err(problem) => {
            app.error(problem);
            return Vec::new();
        }
    };
    app.placement.results_focused = true;
    show_results(app, ResultScope::User { email })
}

pub fn render(app: &App, frame: &mut Frame, area: Rect) {
    let s = &app.placement;
    let [top, bottom] = Layout::vertical([Constraint::Fill(1), Constraint::Fill(1)]).areas(area);
    let [tests_area, levels_area] = ui::list_and_detail(top, 60);

    TESTS.render_named(frame, tests_area, &s.tests, TESTS.name, !s.results_focused);
    let selected = s.tests.selected();
    let levels = selected.map(levels).unwrap_or_default();
    let title = match selected.map(|t| t.mode) {
        Some(TestMode::Adaptive) => " Levels ",
        _ => " Level ranges ",
    };
    frame.render_widget(Paragraph::new(levels).block(ui::block(title)), levels_area);

    let whose = match &s.scope {
        Some(ResultScope::Test { title, .. }) => format!("\"{title}\""),
        Some(ResultScope::User { email }) => email.to_string(),
        None => "…".into(),
    };
    let name = format!("Results of {whose}");
    // An adaptive result, selected: its ability, error and the path of levels asked.
    match s.results.selected().filter(|r| r.ability.is_some()) {
        Some(result) if s.results_focused => {
            let [list_area, detail_area] = ui::list_and_detail(bottom, 60);
            RESULTS.render_named(frame, list_area, &s.results, &name, true);
            ui::render_detail(
                frame,
                detail_area,
                " Adaptive result ",
                adaptive_detail(result),
            );
        }
        _ => RESULTS.render_named(frame, bottom, &s.results, &name, s.results_focused),
    }
}

/// The detail of an adaptive result.
fn adaptive_detail(r: &TestResult) -> Vec<Line<'static>> {
    let logits = |x: Option<f64>| x.map_or("–".to_owned(), |x| format!("{x:.2}"));
    let path: Vec<&str> = r
        .answers
        .iter()
        .map(|a| a.level.as_deref().unwrap_or("?"))
        .collect();
    vec![
        Line::from(vec![
            Span::styled("Level     ", ui::dim()),
            Span::styled(r.level.clone(), ui::key_style()),
        ]),
        Line::from(vec![
            Span::styled("Ability   ", ui::dim()),
            Span::raw(format!(
                "{} ± {} logits",
                logits(r.ability),
                logits(r.standard_error)
            )),
        ]),
        Line::from(vec![
            Span::styled("Right     ", ui::dim()),
            Span::raw(format!("{} of {} asked", r.total_score, r.max_score)),
        ]),
        Line::from(Span::styled("Levels asked, in order:", ui::dim())),
        Line::from(path.join(" → ")),
    ]
}

const TESTS: ListTable<ProficiencyTest> = ListTable {
    name: "Placement",
    noun: ("test", "tests"),
    columns: &[
        Column::new("TEST", Fill(1), |t| t.title.as_str().into()),
        Column::new("LANG", Length(5), |t| optional(&t.target_language)),
        Column::new("QS", Length(3), |t| t.question_count.to_string().into()),
        Column::new("MAX", Length(4), |t| t.max_score.to_string().into()),
        Column::new("MODE", Length(8), |t| t.mode.as_str().into()),
        Column::new("ACTIVE", Length(6), |t| ui::yes_no(t.is_active).into()),
    ],
    empty: "No tests yet.",
};

const RESULTS: ListTable<TestResult> = ListTable {
    name: "Results",
    noun: ("result", "results"),
    columns: &[
        Column::new("USER", Fill(3), |r| r.user.email.as_str().into()),
        Column::new("TEST", Fill(2), |r| r.test.title.as_str().into()),
        Column::new("LEVEL", Length(5), |r| r.level.as_str().into()),
        Column::new("SCORE", Length(7), |r| {
            format!("{}/{}", r.total_score, r.max_score).into()
        }),
        Column::new("COMPLETED", Length(16), |r| {
            ui::date_time(r.completed_at).into()
        }),
    ],
    empty: "No results.",
};

fn levels(t: &ProficiencyTest) -> Vec<Line<'static>> {
    if t.mode == TestMode::Adaptive {
        return adaptive_levels(t);
    }
    let mut lines = vec![Line::from(Span::styled(
        format!(
            "{} questions · max {} · {}",
            t.question_count,
            t.max_score,
            t.time_limit_minutes
                .map_or("no time limit".into(), |m| format!("{m} min"))
        ),
        ui::dim(),
    ))];
    for r in &t.level_ranges {
        lines.push(Line::from(vec![
            Span::styled(format!("{:<4}", r.level), ui::key_style()),
            Span::raw(format!("{:>3}–{:<3} ", r.min_score, r.max_score)),
            Span::styled(r.message.clone(), ui::dim()),
        ]));
    }
    lines
}

/// An adaptive test: its bound, and per level the questions (`q`), their difficulties (`b`,
/// in logits: the level's default until calibrated), how many are calibrated (`cal.`),
/// their answers (`ans.`) and the level's message.
fn adaptive_levels(t: &ProficiencyTest) -> Vec<Line<'static>> {
    let mut lines = vec![Line::from(Span::styled(
        format!(
            "adaptive · {} q · at most {} asked · {}",
            t.question_count,
            t.max_questions.unwrap_or_default(),
            t.time_limit_minutes
                .map_or("no time limit".into(), |m| format!("{m} min"))
        ),
        ui::dim(),
    ))];
    for level in ["A1", "A2", "B1", "B2", "C1", "C2"] {
        let of_level: Vec<_> = t
            .questions
            .iter()
            .filter(|q| q.level.as_deref() == Some(level))
            .collect();
        let calibrated = of_level
            .iter()
            .filter(|q| q.calibrated == Some(true))
            .count();
        let answers: i64 = of_level.iter().filter_map(|q| q.answer_count).sum();
        let message = t
            .level_messages
            .as_ref()
            .and_then(|m| m.get(level).cloned())
            .unwrap_or_default();
        let difficulties: Vec<f64> = of_level.iter().filter_map(|q| q.difficulty).collect();
        let low = difficulties.iter().copied().fold(f64::INFINITY, f64::min);
        let high = difficulties
            .iter()
            .copied()
            .fold(f64::NEG_INFINITY, f64::max);
        let range = if difficulties.is_empty() {
            "–".to_owned()
        } else if (high - low).abs() < 0.005 {
            format!("{low:.2}")
        } else {
            format!("{low:.2}…{high:.2}")
        };
        lines.push(Line::from(vec![
            Span::styled(format!("{level:<4}"), ui::key_style()),
            Span::raw(format!(
                "{:>3} q · b {range} · {calibrated} cal. · {answers} ans. ",
                of_level.len()
            )),
            Span::styled(message, ui::dim()),
        ]));
    }
    lines
}
