//! Rendering: reads the [`App`] and draws it; never changes state.
//!
//! The frame is a tab bar, the current view, a status line (the last message, or what is
//! loading) and a footer with the keys that work here. Dialogs draw over the view.

use langcamp_core::Timestamp;
use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, BorderType, Clear, Paragraph, Tabs, Wrap};

use crate::app::{App, Listing, Overlay, Search};
use crate::keymap::{self, Mode};
use crate::view::View;
use crate::views;

/// Draws the whole console.
pub fn render(app: &App, frame: &mut Frame) {
    let footer_lines = footer_lines(app, frame.area().width);
    let [tabs, body, status, footer] = Layout::vertical([
        Constraint::Length(1),
        Constraint::Fill(1),
        Constraint::Length(1),
        Constraint::Length(u16::try_from(footer_lines.len()).unwrap_or(1)),
    ])
    .areas(frame.area());
    render_tabs(app, frame, tabs);
    match app.view {
        View::Dashboard => views::dashboard::render(app, frame, body),
        View::Users => views::users::render(app, frame, body),
        View::Contacts => views::contacts::render(app, frame, body),
        View::Placement => views::placement::render(app, frame, body),
        View::Materials => views::materials::render(app, frame, body),
        View::Courses => views::courses::render(app, frame, body),
        View::Settings => views::settings::render(app, frame, body),
        View::Mail => views::mail::render(app, frame, body),
        View::Audit => views::audit::render(app, frame, body),
        View::Webhooks => views::webhooks::render(app, frame, body),
    }
    render_status(app, frame, status);
    frame.render_widget(Paragraph::new(footer_lines), footer);
    if let Some(overlay) = &app.overlay {
        render_overlay(app, overlay, frame, body);
    }
}

fn render_tabs(app: &App, frame: &mut Frame, area: Rect) {
    // Wide terminals get the name and roomy tabs; narrower ones the tabs alone, then
    // closer together, then with the short titles, and the narrowest every view's number
    // and the current one's name. Each tab starts with its view's number key.
    let named = |v: &View, title: &str| format!("{} {title}", v.key());
    let full: Vec<String> = View::ALL.iter().map(|v| named(v, v.title())).collect();
    let short: Vec<String> = View::ALL
        .iter()
        .map(|v| named(v, v.short_title()))
        .collect();
    let width = |titles: &[String], pad: usize| {
        titles
            .iter()
            .map(|t| t.chars().count() + 2 * pad)
            .sum::<usize>()
            + titles.len()
            - 1
    };
    let room = usize::from(area.width);
    let (titles, pad, show_name) = if width(&full, 1) + 10 <= room {
        (full, " ", true)
    } else if width(&full, 1) <= room {
        (full, " ", false)
    } else if width(&full, 0) <= room {
        (full, "", false)
    } else if width(&short, 0) <= room {
        (short, "", false)
    } else {
        let numbers = View::ALL.iter().map(|v| {
            if *v == app.view {
                named(v, v.title())
            } else {
                v.key().to_string()
            }
        });
        (numbers.collect(), "", false)
    };
    let tabs = Tabs::new(titles)
        .select(app.view.index())
        .style(dim())
        .highlight_style(
            Style::new()
                .fg(Color::Black)
                .bg(Color::Cyan)
                .add_modifier(Modifier::BOLD),
        )
        .divider("│")
        .padding(pad, pad);
    if show_name {
        let [name, rest] =
            Layout::horizontal([Constraint::Length(10), Constraint::Fill(1)]).areas(area);
        frame.render_widget(
            Span::styled(" langcamp", Style::new().add_modifier(Modifier::BOLD)),
            name,
        );
        frame.render_widget(tabs, rest);
    } else {
        frame.render_widget(tabs, area);
    }
}

fn render_status(app: &App, frame: &mut Frame, area: Rect) {
    let line = match (&app.message, app.activity()) {
        (Some(m), _) if m.is_error => Line::from(Span::styled(
            format!(" ✗ {}", m.text),
            Style::new().fg(Color::Red).add_modifier(Modifier::BOLD),
        )),
        (Some(m), _) => Line::from(Span::styled(
            format!(" ✓ {}", m.text),
            Style::new().fg(Color::Green),
        )),
        (None, Some(activity)) => Line::from(Span::styled(
            format!(" ⟳ {activity}"),
            Style::new().fg(Color::Yellow),
        )),
        (None, None) => Line::default(),
    };
    frame.render_widget(line, area);
}

/// The keys that work here, on one line or, when they do not fit, on two.
fn footer_lines(app: &App, width: u16) -> Vec<Line<'static>> {
    let width = usize::from(width);
    let mut lines = vec![Line::default()];
    let mut used = 0;
    for b in keymap::bindings(app.key_context())
        .into_iter()
        .filter(|b| b.footer)
    {
        let help = format!(" {}  ", b.help);
        let len = b.label.chars().count() + help.chars().count();
        if used + len > width && used > 0 && lines.len() < 2 {
            lines.push(Line::default());
            used = 0;
        }
        used += len;
        if let Some(line) = lines.last_mut() {
            line.push_span(Span::styled(b.label, key_style()));
            line.push_span(Span::raw(help));
        }
    }
    lines
}

fn render_overlay(app: &App, overlay: &Overlay, frame: &mut Frame, area: Rect) {
    match overlay {
        Overlay::Help => render_help(app, frame, area),
        Overlay::NotSaved { what, problems, .. } => {
            render_not_saved(what, problems, frame, area);
        }
        Overlay::Picker { picker, awaiting } => {
            views::materials::render_picker(picker, awaiting.is_some(), frame, area);
        }
        Overlay::Confirm { question, .. } => {
            // Room for the question wrapped at words (with some slack), a blank line and
            // the keys.
            let width = 60u16.min(area.width);
            let per_line = usize::from(width.saturating_sub(8).max(1));
            let lines = question.chars().count().div_ceil(per_line);
            let height = u16::try_from(lines).unwrap_or(1).saturating_add(4);
            let popup = centered(area, width, height);
            frame.render_widget(Clear, popup);
            frame.render_widget(
                Paragraph::new(vec![
                    Line::from(question.clone()),
                    Line::default(),
                    Line::from(vec![
                        Span::styled(" y ", key_style()),
                        Span::raw(" yes   "),
                        Span::styled(" n ", key_style()),
                        Span::raw(" no"),
                    ]),
                ])
                .wrap(Wrap { trim: false })
                .block(popup_block(" Confirm ")),
                popup,
            );
        }
        Overlay::Choice {
            title,
            options,
            selected,
            ..
        } => {
            let height = u16::try_from(options.len()).unwrap_or(10) + 2;
            let popup = centered(area, 50, height);
            frame.render_widget(Clear, popup);
            let lines: Vec<Line> = options
                .iter()
                .enumerate()
                .map(|(i, o)| {
                    if i == *selected {
                        Line::from(Span::styled(format!("▶ {o}"), selected_style()))
                    } else {
                        Line::from(format!("  {o}"))
                    }
                })
                .collect();
            frame.render_widget(
                Paragraph::new(lines).block(popup_block(&format!(" {title} "))),
                popup,
            );
        }
        Overlay::Prompt {
            title,
            input,
            awaiting,
            ..
        } => {
            let popup = centered(area, 70, 3);
            frame.render_widget(Clear, popup);
            let title = if awaiting.is_some() {
                format!(" {title} (saving…) ")
            } else {
                format!(" {title} ")
            };
            let inner = popup_block(&title).inner(popup);
            frame.render_widget(popup_block(&title), popup);
            frame.render_widget(Span::styled(input.text().to_owned(), input_style()), inner);
            let x = inner.x + u16::try_from(input.cursor()).unwrap_or(0);
            if x < inner.right() {
                frame.set_cursor_position((x, inner.y));
            }
        }
        Overlay::Editor {
            title,
            context,
            editor,
            awaiting,
            ..
        } => {
            let popup = centered(area, area.width.saturating_sub(4), area.height);
            frame.render_widget(Clear, popup);
            let title = if awaiting.is_some() {
                format!(" {title} (sending…) ")
            } else {
                format!(" {title} ")
            };
            let outer = popup_block(&title);
            let inner = outer.inner(popup);
            frame.render_widget(outer, popup);
            let context_height = u16::try_from(context.len())
                .unwrap_or(u16::MAX)
                .min(inner.height / 2);
            let [top, text] =
                Layout::vertical([Constraint::Length(context_height), Constraint::Fill(1)])
                    .areas(inner);
            frame.render_widget(
                Paragraph::new(
                    context
                        .iter()
                        .map(|l| Line::from(l.clone()))
                        .collect::<Vec<_>>(),
                )
                .style(dim()),
                top,
            );
            let text_block = Block::bordered().border_type(BorderType::Plain);
            let text_inner = text_block.inner(text);
            frame.render_widget(text_block, text);
            let (rows, (row, col)) = editor.wrapped(usize::from(text_inner.width));
            let height = usize::from(text_inner.height.max(1));
            let scroll = row.saturating_sub(height - 1);
            let visible: Vec<Line> = rows
                .into_iter()
                .skip(scroll)
                .take(height)
                .map(Line::from)
                .collect();
            frame.render_widget(Paragraph::new(visible).style(input_style()), text_inner);
            let x = text_inner.x + u16::try_from(col).unwrap_or(0);
            let y = text_inner.y + u16::try_from(row - scroll).unwrap_or(0);
            if x < text_inner.right() && y < text_inner.bottom() {
                frame.set_cursor_position((x, y));
            }
        }
    }
}

fn render_help(app: &App, frame: &mut Frame, area: Rect) {
    let popup = centered(area, 72, area.height);
    frame.render_widget(Clear, popup);
    let mut lines = vec![Line::from(Span::styled(
        format!("{} view", app.view.title()),
        Style::new().add_modifier(Modifier::BOLD),
    ))];
    let context = keymap::KeyContext {
        mode: Mode::Normal,
        ..app.key_context()
    };
    for b in keymap::bindings(context) {
        lines.push(Line::from(vec![
            Span::styled(format!("  {:<12}", b.label), key_style()),
            Span::raw(b.help),
        ]));
    }
    lines.push(Line::default());
    lines.push(Line::from(Span::styled(
        "In text fields: Enter done, Esc cancel; in the editor Ctrl-S sends.",
        dim(),
    )));
    if app.view == View::Mail {
        lines.push(Line::from(Span::styled(
            "A template opens in $VISUAL or $EDITOR (else vi); it is saved when the editor \
             closes, if it checks out.",
            dim(),
        )));
    }
    if app.view == View::Audit {
        lines.push(Line::from(Span::styled(
            "The trail is read-only: no key edits or deletes an entry. Filters match \
             exactly and combine; an empty one is cleared. Since takes an RFC 3339 time \
             (2026-05-04T09:00:00Z).",
            dim(),
        )));
    }
    if app.view == View::Webhooks {
        lines.push(Line::from(Span::styled(
            "Read-only: a superadmin adds and changes endpoints over the API \
             (/admin/webhooks, with step-up), which shows each secret once. The counts \
             cover the delivery log's 30 days; f shows the deliveries of one status.",
            dim(),
        )));
    }
    frame.render_widget(
        Paragraph::new(lines)
            .wrap(Wrap { trim: false })
            .block(popup_block(" Help (Esc closes) ")),
        popup,
    );
}

/// Why a text edited in the user's editor was not saved, each problem on its own.
fn render_not_saved(what: &str, problems: &[String], frame: &mut Frame, area: Rect) {
    let width = 76u16.min(area.width);
    let per_line = usize::from(width.saturating_sub(6).max(1));
    let mut lines = Vec::new();
    let mut rows = 0;
    for problem in problems {
        rows += (problem.chars().count() + 2).div_ceil(per_line).max(1);
        lines.push(Line::from(vec![
            Span::styled("• ", dim()),
            Span::raw(problem.clone()),
        ]));
    }
    lines.push(Line::default());
    lines.push(Line::from(vec![
        Span::styled(" e ", key_style()),
        Span::raw(" edit again   "),
        Span::styled(" Esc ", key_style()),
        Span::raw(" discard the changes"),
    ]));
    let height = u16::try_from(rows + 4).unwrap_or(u16::MAX);
    let title = format!(" Not saved: {what} ");
    let popup = centered(area, width, height);
    frame.render_widget(Clear, popup);
    frame.render_widget(
        Paragraph::new(lines)
            .wrap(Wrap { trim: false })
            .block(popup_block(&title)),
        popup,
    );
}

/// A rectangle of at most `width` x `height` in the middle of `area`.
pub fn centered(area: Rect, width: u16, height: u16) -> Rect {
    let width = width.min(area.width);
    let height = height.min(area.height);
    Rect {
        x: area.x + (area.width - width) / 2,
        y: area.y + (area.height - height) / 2,
        width,
        height,
    }
}

/// The bordered block of a pane.
pub fn block(title: &str) -> Block<'_> {
    Block::bordered()
        .border_type(BorderType::Plain)
        .title(title)
}

pub fn popup_block(title: &str) -> Block<'_> {
    Block::bordered()
        .border_type(BorderType::Double)
        .border_style(Style::new().fg(Color::Cyan))
        .title(title)
}

pub fn dim() -> Style {
    Style::new().fg(Color::DarkGray)
}

pub fn input_style() -> Style {
    Style::new().fg(Color::Yellow)
}

pub fn key_style() -> Style {
    Style::new().fg(Color::Cyan).add_modifier(Modifier::BOLD)
}

pub fn selected_style() -> Style {
    Style::new()
        .fg(Color::Black)
        .bg(Color::Cyan)
        .add_modifier(Modifier::BOLD)
}

/// `Search: text` for a filter bar, placing the cursor while the box is typed in.
pub fn search_spans(search: &Search, frame: &mut Frame, area: Rect) -> Vec<Span<'static>> {
    let mut spans = vec![Span::styled("Search: ", dim())];
    if search.active {
        spans.push(Span::styled(search.query.text().to_owned(), input_style()));
        let cursor = u16::try_from(search.query.cursor()).unwrap_or(u16::MAX);
        let x = area.x.saturating_add(8).saturating_add(cursor);
        if x < area.right() {
            frame.set_cursor_position((x, area.y));
        }
    } else if search.query.text().is_empty() {
        spans.push(Span::styled("(press /)", dim()));
    } else {
        spans.push(Span::raw(search.query.text().to_owned()));
    }
    spans
}

/// A `Label: value` line of a detail pane.
pub fn field(label: &str, value: impl Into<String>) -> Line<'static> {
    Line::from(vec![
        Span::styled(format!("{label:<11}"), dim()),
        Span::raw(value.into()),
    ])
}

/// `2026-11-22 10:00` (UTC).
pub fn date_time(t: Timestamp) -> String {
    t.0.format("%Y-%m-%d %H:%M").to_string()
}

/// `2026-11-22`.
pub fn date(t: Timestamp) -> String {
    t.0.format("%Y-%m-%d").to_string()
}

/// `page 1 of 3 · 42 users`, or `loading…` before the first answer.
pub fn page_summary<T>(list: &Listing<T>, one: &str, many: &str) -> String {
    match &list.pagination {
        Some(p) => format!(
            "page {} of {} · {} {}",
            p.current_page,
            p.total_pages.max(1),
            p.total_items,
            if p.total_items == 1 { one } else { many }
        ),
        None if list.loaded => format!(
            "{} {}",
            list.items.len(),
            if list.items.len() == 1 { one } else { many }
        ),
        None => "loading…".into(),
    }
}

/// A view's list beside the selected item's details: `table_percent` of the width for
/// the list.
pub fn list_and_detail(area: Rect, table_percent: u16) -> [Rect; 2] {
    Layout::horizontal([
        Constraint::Percentage(table_percent),
        Constraint::Percentage(100 - table_percent),
    ])
    .areas(area)
}

/// The detail pane: `lines` wrapped at the pane's width.
pub fn render_detail(frame: &mut Frame, area: Rect, title: &str, lines: Vec<Line<'static>>) {
    frame.render_widget(
        Paragraph::new(lines)
            .wrap(Wrap { trim: false })
            .block(block(title)),
        area,
    );
}

/// A filter of a view's bar: `   Label: value`.
pub fn filter_spans(label: &str, value: &str) -> [Span<'static>; 2] {
    [
        Span::styled(format!("   {label}: "), dim()),
        Span::raw(value.to_owned()),
    ]
}

/// An optional text of a detail pane, `—` when absent.
pub fn or_dash(value: &Option<String>) -> String {
    value.clone().unwrap_or_else(|| "—".into())
}

/// `yes` or `no`.
pub fn yes_no(value: bool) -> &'static str {
    if value { "yes" } else { "no" }
}
