//! Dashboard: the school at a glance: the overview numbers, a monthly trend chart, the
//! level and language distributions of placement results, and recent activity. `+`/`-`
//! change the number of months of the trend.

use langcamp_core::dashboard::Dashboard;
use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Color, Modifier, Style};
use ratatui::symbols::Marker;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Axis, Block, Cell, Chart, Dataset, GraphType, Paragraph, Row, Table};

use crate::app::App;
use crate::keymap::Action;
use crate::task::{Job, Task};
use crate::ui;
use crate::view::View;

pub const DEFAULT_MONTHS: u32 = 6;
pub const MAX_MONTHS: u32 = 24;

#[derive(Clone, Debug)]
pub struct DashboardState {
    /// Calendar months of the trend, 1 to 24.
    pub months: u32,
    pub data: Option<Dashboard>,
    pub load_id: Option<u64>,
}

impl Default for DashboardState {
    fn default() -> Self {
        DashboardState {
            months: DEFAULT_MONTHS,
            data: None,
            load_id: None,
        }
    }
}

pub(crate) fn load(app: &mut App) -> Vec<Task> {
    let job = Job::Dashboard {
        months: app.dashboard.months,
    };
    let task = app.task(View::Dashboard, "Loading the dashboard…", job);
    app.dashboard.load_id = Some(task.id);
    vec![task]
}

pub(crate) fn loaded(app: &mut App, id: u64, data: Dashboard) -> Vec<Task> {
    if app.dashboard.load_id == Some(id) {
        app.dashboard.data = Some(data);
        app.dashboard.load_id = None;
    }
    Vec::new()
}

pub(crate) fn action(app: &mut App, action: Action) -> Vec<Task> {
    let s = &mut app.dashboard;
    let months = match action {
        Action::MoreMonths => (s.months + 1).min(MAX_MONTHS),
        Action::FewerMonths => s.months.saturating_sub(1).max(1),
        _ => return Vec::new(),
    };
    if months == s.months {
        return Vec::new();
    }
    s.months = months;
    load(app)
}

pub fn render(app: &App, frame: &mut Frame, area: Rect) {
    let s = &app.dashboard;
    let title = match &s.data {
        Some(d) => format!(
            " Dashboard · last {} {} · generated {} UTC ",
            s.months,
            if s.months == 1 { "month" } else { "months" },
            ui::date_time(d.generated_at)
        ),
        None => format!(" Dashboard · last {} months ", s.months),
    };
    let outer = ui::block(&title);
    let inner = outer.inner(area);
    frame.render_widget(outer, area);
    let Some(d) = &s.data else {
        frame.render_widget(Span::styled("Loading…", ui::dim()), inner);
        return;
    };
    let [overview, middle, recent] = Layout::vertical([
        Constraint::Length(6),
        Constraint::Fill(1),
        Constraint::Length(7),
    ])
    .areas(inner);
    render_overview(d, frame, overview);
    let [trend, shares] =
        Layout::horizontal([Constraint::Percentage(58), Constraint::Percentage(42)]).areas(middle);
    render_trend(d, frame, trend);
    render_distributions(d, frame, shares);
    let [contacts, results] =
        Layout::horizontal([Constraint::Percentage(50), Constraint::Percentage(50)]).areas(recent);
    render_recent(d, frame, contacts, results);
}

/// `label      value` in `width` columns: the value right-aligned and whole, the label
/// shortened when both do not fit.
fn stat(label: &str, value: String, width: usize) -> Line<'static> {
    let room = width.saturating_sub(value.chars().count() + 1);
    let label: String = label.chars().take(room).collect();
    let pad = width
        .saturating_sub(label.chars().count() + value.chars().count())
        .max(1);
    Line::from(vec![
        Span::styled(label, ui::dim()),
        Span::raw(" ".repeat(pad)),
        Span::raw(value),
    ])
}

fn growth(rate: f64) -> String {
    format!("{rate:+.1}%")
}

fn percent(rate: f64) -> String {
    format!("{rate:.0}%")
}

fn two_places(x: f64) -> String {
    format!("{x:.2}")
}

/// A heading, its number, and `label value` lines.
type OverviewColumn<'d> = (&'static str, i64, Vec<(&'d str, String)>);

fn render_overview(d: &Dashboard, frame: &mut Frame, area: Rect) {
    let o = &d.overview;
    let count = |n: i64| n.to_string();
    let mut roles = vec![("", String::new()), ("Roles", String::new())];
    roles.extend(
        d.distributions
            .roles
            .iter()
            .map(|r| (r.key.as_str(), count(r.count))),
    );
    let columns: [OverviewColumn; 5] = [
        (
            "Users",
            o.users.total,
            vec![
                ("admins", count(o.users.admins)),
                ("registered", count(o.users.registration_completed)),
                ("completion", percent(o.users.completion_rate)),
                ("new 30 days", count(o.users.new_last30_days)),
                ("growth", growth(o.users.monthly_growth_rate)),
            ],
        ),
        (
            "Tests",
            o.tests.total_tests,
            vec![
                ("taken", count(o.tests.total_submissions)),
                ("avg score", two_places(o.tests.average_score)),
                ("last 30 days", count(o.tests.submissions_last30_days)),
                ("growth", growth(o.tests.monthly_growth_rate)),
            ],
        ),
        (
            "Contacts",
            o.contacts.total,
            vec![
                ("pending", count(o.contacts.pending)),
                ("replied", count(o.contacts.replied)),
                ("reply rate", percent(o.contacts.reply_rate)),
                ("new 30 days", count(o.contacts.new_last30_days)),
            ],
        ),
        (
            "Materials",
            o.materials.total,
            vec![
                ("assigned", count(o.materials.assignments)),
                ("to users", count(o.materials.assigned_users)),
                ("per user", two_places(o.materials.avg_assignments_per_user)),
                ("last 30 days", count(o.materials.assignments_last30_days)),
            ],
        ),
        ("Courses", o.courses.total, roles),
    ];
    let areas = Layout::horizontal([Constraint::Fill(1); 5])
        .spacing(2)
        .split(area);
    for ((heading, total, stats), column) in columns.into_iter().zip(areas.iter()) {
        let width = usize::from(column.width);
        let mut lines = vec![Line::from(vec![
            Span::styled(heading, Style::new().add_modifier(Modifier::BOLD)),
            Span::raw(" "),
            Span::styled(total.to_string(), Style::new().fg(Color::Cyan)),
        ])];
        lines.extend(
            stats
                .into_iter()
                .map(|(label, value)| stat(label, value, width)),
        );
        frame.render_widget(Paragraph::new(lines), *column);
    }
}

const SERIES: [(&str, Color); 4] = [
    ("users", Color::Cyan),
    ("tests", Color::Green),
    ("contacts", Color::Yellow),
    ("materials", Color::Magenta),
];

fn render_trend(d: &Dashboard, frame: &mut Frame, area: Rect) {
    // The legend is the title: the chart keeps all its room.
    let mut title = vec![Span::raw(" Monthly trend ")];
    for (name, color) in SERIES {
        title.push(Span::styled(format!("━ {name} "), Style::new().fg(color)));
    }
    let block = Block::bordered().title(Line::from(title));
    let series: [Vec<(f64, f64)>; 4] = [
        points(d, |p| p.users),
        points(d, |p| p.test_submissions),
        points(d, |p| p.contacts),
        points(d, |p| p.material_assignments),
    ];
    let top = series
        .iter()
        .flatten()
        .map(|(_, y)| *y)
        .fold(1.0_f64, f64::max);
    let datasets = series
        .iter()
        .zip(SERIES)
        .map(|(data, (name, color))| {
            Dataset::default()
                .name(name)
                .marker(Marker::Braille)
                .graph_type(GraphType::Line)
                .style(Style::new().fg(color))
                .data(data)
        })
        .collect();
    let last = d.trends.len().saturating_sub(1);
    let x_labels: Vec<Line> = match (d.trends.first(), d.trends.last()) {
        (Some(first), Some(end)) if last > 0 => vec![
            Line::from(first.label.clone()),
            Line::from(end.label.clone()),
        ],
        (Some(only), _) => vec![Line::from(only.label.clone())],
        _ => Vec::new(),
    };
    let chart = Chart::new(datasets)
        .block(block)
        .legend_position(None)
        .x_axis(
            Axis::default()
                .bounds([0.0, last.max(1) as f64])
                .labels(x_labels)
                .style(ui::dim()),
        )
        .y_axis(
            Axis::default()
                .bounds([0.0, top])
                .labels(vec![Line::from("0"), Line::from(format!("{top:.0}"))])
                .style(ui::dim()),
        );
    frame.render_widget(chart, area);
}

fn points(
    d: &Dashboard,
    value: impl Fn(&langcamp_core::dashboard::TrendPoint) -> i64,
) -> Vec<(f64, f64)> {
    d.trends
        .iter()
        .enumerate()
        .map(|(i, p)| (i as f64, value(p) as f64))
        .collect()
}

fn render_distributions(d: &Dashboard, frame: &mut Frame, area: Rect) {
    let block = ui::block(" Results by level and language ");
    let inner = block.inner(area);
    frame.render_widget(block, area);
    let [levels, languages] = Layout::horizontal([Constraint::Fill(1), Constraint::Fill(1)])
        .spacing(1)
        .areas(inner);
    let width = usize::from(levels.width);
    let mut lines = vec![Line::from(Span::styled("level  n  share", ui::dim()))];
    if d.distributions.levels.is_empty() {
        lines.push(Line::from(Span::styled("no results yet", ui::dim())));
    }
    for l in &d.distributions.levels {
        let bar_room = width.saturating_sub(14);
        let bar = "█".repeat(((l.percentage / 100.0) * bar_room as f64).round() as usize);
        lines.push(Line::from(vec![
            Span::styled(format!("{:<4}", l.label), ui::key_style()),
            Span::raw(format!("{:>3} {:>4.0}% ", l.count, l.percentage)),
            Span::styled(bar, Style::new().fg(Color::Green)),
        ]));
    }
    frame.render_widget(Paragraph::new(lines), levels);
    let width = usize::from(languages.width);
    let mut lines = vec![Line::from(Span::styled("language   n   avg", ui::dim()))];
    for l in &d.distributions.languages {
        let value = format!("{:>3} {:>5.2}", l.submissions, l.average_score);
        lines.push(stat(&l.label, value, width));
    }
    frame.render_widget(Paragraph::new(lines), languages);
}

fn render_recent(d: &Dashboard, frame: &mut Frame, contacts: Rect, results: Rect) {
    let rows = d.recent_activity.contacts.iter().map(|c| {
        Row::new([
            Cell::from(c.full_name.clone()),
            Cell::from(c.status.clone()),
            Cell::from(ui::date(c.created_at)),
        ])
    });
    let table = Table::new(
        rows,
        [
            Constraint::Fill(1),
            Constraint::Length(11),
            Constraint::Length(10),
        ],
    )
    .block(ui::block(" Recent contacts "));
    frame.render_widget(table, contacts);
    let rows = d.recent_activity.test_results.iter().map(|r| {
        Row::new([
            Cell::from(r.user_name.clone().unwrap_or_else(|| r.user_email.clone())),
            Cell::from(r.level.clone()),
            Cell::from(r.total_score.to_string()),
            Cell::from(r.target_language.clone().unwrap_or_default()),
            Cell::from(ui::date(r.completed_at)),
        ])
    });
    let table = Table::new(
        rows,
        [
            Constraint::Fill(1),
            Constraint::Length(4),
            Constraint::Length(3),
            Constraint::Length(4),
            Constraint::Length(10),
        ],
    )
    .block(ui::block(" Recent results "));
    frame.render_widget(table, results);
}
