//! Pagination shared by every list: `page` (1-based, default 1) and `limit`
//! (default 10, 1..=100), answered as `{ list, pagination }`.

use serde::Serialize;
use utoipa::ToSchema;

use crate::domain::error::{Error, Result};

pub const DEFAULT_LIMIT: u32 = 10;
pub const MAX_LIMIT: u32 = 100;
/// Lists that are small by nature are still capped, so no query is unbounded.
pub const UNPAGED_CAP: i64 = 1000;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PageRequest {
    pub page: u32,
    pub limit: u32,
}

impl Default for PageRequest {
    fn default() -> Self {
        PageRequest {
            page: 1,
            limit: DEFAULT_LIMIT,
        }
    }
}

impl PageRequest {
    /// Parses the raw query values; each bad one yields its own message.
    pub fn parse(page: Option<&str>, limit: Option<&str>) -> Result<PageRequest> {
        let mut problems = Vec::new();
        let page = match page {
            None => 1,
            Some(text) => match text.trim().parse::<u32>() {
                Ok(n) if (1..=1_000_000).contains(&n) => n,
                _ => {
                    problems.push("page must be a whole number from 1".to_owned());
                    1
                }
            },
        };
        let limit = match limit {
            None => DEFAULT_LIMIT,
            Some(text) => match text.trim().parse::<u32>() {
                Ok(n) if (1..=MAX_LIMIT).contains(&n) => n,
                _ => {
                    problems.push(format!(
                        "limit must be a whole number from 1 to {MAX_LIMIT}"
                    ));
                    DEFAULT_LIMIT
                }
            },
        };
        if problems.is_empty() {
            Ok(PageRequest { page, limit })
        } else {
            Err(Error::Validation(problems))
        }
    }

    pub fn offset(&self) -> i64 {
        (i64::from(self.page) - 1) * i64::from(self.limit)
    }

    pub fn limit(&self) -> i64 {
        i64::from(self.limit)
    }
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Pagination {
    pub current_page: u32,
    pub total_pages: u32,
    pub total_items: u64,
    pub items_per_page: u32,
    pub has_next_page: bool,
    pub has_prev_page: bool,
}

impl Pagination {
    pub fn new(request: PageRequest, total_items: u64) -> Pagination {
        let total_pages = total_items.div_ceil(u64::from(request.limit));
        let total_pages = u32::try_from(total_pages).unwrap_or(u32::MAX);
        Pagination {
            current_page: request.page,
            total_pages,
            total_items,
            items_per_page: request.limit,
            has_next_page: request.page < total_pages,
            has_prev_page: request.page > 1,
        }
    }
}

#[derive(Clone, Debug, Serialize, ToSchema)]
pub struct Page<T> {
    pub list: Vec<T>,
    pub pagination: Pagination,
}

impl<T> Page<T> {
    pub fn new(list: Vec<T>, request: PageRequest, total_items: i64) -> Page<T> {
        Page {
            list,
            pagination: Pagination::new(request, u64::try_from(total_items).unwrap_or(0)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn page_requests_default_and_reject_out_of_range_values() {
        assert_eq!(
            PageRequest::parse(None, None).ok(),
            Some(PageRequest { page: 1, limit: 10 })
        );
        assert_eq!(
            PageRequest::parse(Some("3"), Some("100")).ok(),
            Some(PageRequest {
                page: 3,
                limit: 100
            })
        );
        for (page, limit) in [
            (Some("0"), None),
            (Some("x"), None),
            (None, Some("0")),
            (None, Some("101")),
            (Some("-1"), Some("2.5")),
        ] {
            assert!(matches!(
                PageRequest::parse(page, limit),
                Err(Error::Validation(_))
            ));
        }
        match PageRequest::parse(Some("0"), Some("0")) {
            Err(Error::Validation(messages)) => assert_eq!(messages.len(), 2),
            other => panic!("expected two messages, got {other:?}"),
        }
    }

    #[test]
    fn pagination_counts_pages_and_neighbours() {
        let p = Pagination::new(PageRequest { page: 2, limit: 10 }, 25);
        assert_eq!(
            (p.total_pages, p.has_next_page, p.has_prev_page),
            (3, true, true)
        );
        let empty = Pagination::new(PageRequest::default(), 0);
        assert_eq!(
            (empty.total_pages, empty.has_next_page, empty.has_prev_page),
            (0, false, false)
        );
        let past = Pagination::new(PageRequest { page: 9, limit: 10 }, 25);
        assert_eq!((past.current_page, past.has_next_page), (9, false));
    }
}
