//! Table panes over a [`Listing`]: the engine that draws one ([`TablePane`]), and a list
//! view's table declared once as data ([`ListTable`]: its columns, each with its own cell).

use ratatui::Frame;
use ratatui::layout::{Constraint, Rect};
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Cell, Paragraph, Row, Table, TableState};

use crate::app::Listing;
use crate::ui::{block, dim, list_and_detail, page_summary, render_detail, selected_style};

/// A column of a [`TablePane`]: its header and its width.
pub type Header = (&'static str, Constraint);

/// A table pane over a [`Listing`]: its title, its columns and what it says when the list
/// is empty. Rows come from a closure, for a table whose cells depend on more than the item
/// (the user picker's marks); a view's ordinary list is a [`ListTable`].
pub struct TablePane<'a> {
    pub title: &'a str,
    pub columns: &'a [Header],
    pub empty: &'a str,
}

impl TablePane<'_> {
    /// Draws `list`, a row per item, or the placeholder when it is empty. A pane of a view
    /// with two: the `focused` one (it has the keys) has a bright border and shows its
    /// selection; the other shows a dim selection.
    pub fn render<'r, T>(
        &self,
        frame: &mut Frame,
        area: Rect,
        list: &'r Listing<T>,
        row: impl Fn(&'r T) -> Row<'r>,
        focused: bool,
    ) {
        let block = if focused {
            block(self.title)
        } else {
            block(self.title).border_style(dim())
        };
        if list.items.is_empty() {
            let text = if list.loaded {
                self.empty
            } else {
                "Loading…"
            };
            frame.render_widget(
                Paragraph::new(Span::styled(text.to_owned(), dim())).block(block),
                area,
            );
            return;
        }
        let header = Row::new(self.columns.iter().map(|(name, _)| *name));
        let widths = self.columns.iter().map(|(_, width)| *width);
        let table = Table::new(list.items.iter().map(row), widths)
            .header(header.style(Style::new().add_modifier(Modifier::BOLD)))
            .block(block)
            .row_highlight_style(if focused {
                selected_style()
            } else {
                Style::new().add_modifier(Modifier::BOLD)
            })
            .highlight_symbol(if focused { "▶ " } else { "› " });
        let mut state = TableState::default().with_selected(Some(list.selected));
        frame.render_stateful_widget(table, area, &mut state);
    }
}

/// A column of a [`ListTable`]: its header, its width, and what its cell shows of an item.
pub struct Column<T> {
    header: &'static str,
    width: Constraint,
    cell: fn(&T) -> Cell<'_>,
}

impl<T> Column<T> {
    pub const fn new(header: &'static str, width: Constraint, cell: fn(&T) -> Cell<'_>) -> Self {
        Column {
            header,
            width,
            cell,
        }
    }
}

/// A list view's table, declared once: the pane's name (its title adds the page summary,
/// `Courses · page 1 of 3 · 42 courses`), the noun it counts, its columns and what it says
/// when the list is empty.
pub struct ListTable<T: 'static> {
    pub name: &'static str,
    /// The noun of the summary: one, many.
    pub noun: (&'static str, &'static str),
    pub columns: &'static [Column<T>],
    pub empty: &'static str,
}

impl<T> ListTable<T> {
    /// Draws `list` in a pane that has the keys.
    pub fn render(&self, frame: &mut Frame, area: Rect, list: &Listing<T>) {
        self.render_named(frame, area, list, self.name, true);
    }

    /// The same under another `name` (a list of results names whose they are), focused or
    /// not (see [`TablePane::render`]).
    pub fn render_named(
        &self,
        frame: &mut Frame,
        area: Rect,
        list: &Listing<T>,
        name: &str,
        focused: bool,
    ) {
        let (one, many) = self.noun;
        let title = format!(" {name} · {} ", page_summary(list, one, many));
        let headers: Vec<Header> = self.columns.iter().map(|c| (c.header, c.width)).collect();
        let pane = TablePane {
            title: &title,
            columns: &headers,
            empty: self.empty,
        };
        let row = |item| Row::new(self.columns.iter().map(|c| (c.cell)(item)));
        pane.render(frame, area, list, row, focused);
    }

    /// Draws `list` in the left `table_percent` of `area` and, beside it, the selected
    /// item's `detail` lines in a pane titled `detail_title` (empty with no selection).
    pub fn render_with_detail(
        &self,
        frame: &mut Frame,
        area: Rect,
        list: &Listing<T>,
        table_percent: u16,
        detail_title: &str,
        detail: impl FnOnce(&T) -> Vec<Line<'static>>,
    ) {
        let [table_area, detail_area] = list_and_detail(area, table_percent);
        self.render(frame, table_area, list);
        let lines = list.selected().map(detail).unwrap_or_default();
        render_detail(frame, detail_area, detail_title, lines);
    }
}

/// The cell of an optional text: empty when absent.
pub fn optional(value: &Option<String>) -> Cell<'_> {
    Cell::from(value.as_deref().unwrap_or_default())
}
