//! The state a view keeps for a list: its rows, page and selection, and its search box.

use langcamp_core::{Page, Pagination};

use crate::input::LineInput;
use crate::keymap::Action;
use crate::task::Task;

/// A view's search box.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Search {
    pub query: LineInput,
    /// The box has the keyboard.
    pub active: bool,
}

/// A list filter's next setting when its key is pressed: from all (`None`) to each of
/// `values` in turn, then back to all.
pub fn next_filter<T: Copy + PartialEq>(current: Option<T>, values: &[T]) -> Option<T> {
    match current {
        None => values.first().copied(),
        Some(current) => values
            .iter()
            .position(|v| *v == current)
            .and_then(|i| values.get(i + 1).copied()),
    }
}

/// A list shown as a table, page by page, with a selected row.
#[derive(Clone, Debug)]
pub struct Listing<T> {
    pub items: Vec<T>,
    /// `None` for lists that come in one piece.
    pub pagination: Option<Pagination>,
    /// True once the first answer came.
    pub loaded: bool,
    pub selected: usize,
    /// The page to ask for (1-based).
    pub page: u32,
    /// The load under way; answers of older loads are dropped.
    pub load_id: Option<u64>,
}

impl<T> Default for Listing<T> {
    fn default() -> Self {
        Listing {
            items: Vec::new(),
            pagination: None,
            loaded: false,
            selected: 0,
            page: 1,
            load_id: None,
        }
    }
}

impl<T> Listing<T> {
    pub fn selected(&self) -> Option<&T> {
        self.items.get(self.selected)
    }

    pub fn is_loading(&self) -> bool {
        self.load_id.is_some()
    }

    pub fn up(&mut self) {
        self.selected = self.selected.saturating_sub(1);
    }

    pub fn down(&mut self) {
        if self.selected + 1 < self.items.len() {
            self.selected += 1;
        }
    }

    /// Moves to the next page if there is one.
    pub fn next_page(&mut self) -> bool {
        let has_next = self.pagination.as_ref().is_some_and(|p| p.has_next_page);
        if has_next {
            self.page += 1;
            self.selected = 0;
        }
        has_next
    }

    pub fn prev_page(&mut self) -> bool {
        if self.page > 1 {
            self.page -= 1;
            self.selected = 0;
            true
        } else {
            false
        }
    }

    /// `Up` or `Down`: moves the selection a row (any other action does nothing).
    pub fn move_selection(&mut self, action: Action) {
        match action {
            Action::Up => self.up(),
            Action::Down => self.down(),
            _ => {}
        }
    }

    /// `NextPage` or `PrevPage`: turns to that page if there is one. True when it turned
    /// (the caller loads the page).
    pub fn turn_page(&mut self, action: Action) -> bool {
        match action {
            Action::NextPage => self.next_page(),
            Action::PrevPage => self.prev_page(),
            _ => false,
        }
    }

    /// Back to page 1, e.g. after the filter changed.
    pub fn first_page(&mut self) {
        self.page = 1;
        self.selected = 0;
    }

    /// Makes `task` the load under way (answers of older loads are then dropped), and
    /// returns it to run.
    pub fn loading(&mut self, task: Task) -> Vec<Task> {
        self.load_id = Some(task.id);
        vec![task]
    }

    /// Takes the answer of load `id` when it is the one under way. Returns true when the
    /// page is now past the end and the previous one should be loaded.
    pub fn answer_page(&mut self, id: u64, page: Page<T>) -> bool {
        self.load_id == Some(id) && self.fill_page(page)
    }

    /// Takes the whole list of load `id` when it is the one under way.
    pub fn answer(&mut self, id: u64, items: Vec<T>) {
        if self.load_id == Some(id) {
            self.fill(items);
        }
    }

    /// Takes a page of answers. Returns true when the page is now past the end (after a
    /// delete emptied the last page) and the previous one should be loaded.
    pub fn fill_page(&mut self, page: Page<T>) -> bool {
        let past_end = page.list.is_empty() && self.page > 1;
        self.fill(page.list);
        self.pagination = Some(page.pagination);
        if past_end {
            self.page -= 1;
        }
        past_end
    }

    /// Takes the whole list.
    pub fn fill(&mut self, items: Vec<T>) {
        self.items = items;
        self.loaded = true;
        self.load_id = None;
        self.selected = self.selected.min(self.items.len().saturating_sub(1));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_filter_goes_from_all_through_each_value_and_back_to_all() {
        let mut filter = None;
        let mut seen = Vec::new();
        for _ in 0..4 {
            filter = next_filter(filter, &[1, 2, 3]);
            seen.push(filter);
        }
        assert_eq!(seen, [Some(1), Some(2), Some(3), None]);
    }
}
