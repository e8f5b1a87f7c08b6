//! The console's screens, in the order of their number keys.

/// One screen of the console.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum View {
    Dashboard,
    Users,
    Contacts,
    Placement,
    Materials,
    Courses,
    Settings,
    /// The mail templates (CONTRACT §16).
    Mail,
    /// The audit trail (CONTRACT §17), read-only.
    Audit,
}

impl View {
    /// Every view, in tab order; view `n` is switched to with the key `n`.
    pub const ALL: [View; 9] = [
        View::Dashboard,
        View::Users,
        View::Contacts,
        View::Placement,
        View::Materials,
        View::Courses,
        View::Settings,
        View::Mail,
        View::Audit,
    ];

    pub fn title(self) -> &'static str {
        match self {
            View::Dashboard => "Dashboard",
            View::Users => "Users",
            View::Contacts => "Contacts",
            View::Placement => "Placement",
            View::Materials => "Materials",
            View::Courses => "Courses",
            View::Settings => "Settings",
            View::Mail => "Mail",
            View::Audit => "Audit",
        }
    }

    /// Position in the tab bar (0-based).
    pub fn index(self) -> usize {
        View::ALL.iter().position(|v| *v == self).unwrap_or(0)
    }

    /// The view with the number key `n` (1-based).
    pub fn numbered(n: usize) -> Option<View> {
        n.checked_sub(1).and_then(|i| View::ALL.get(i).copied())
    }

    pub fn next(self) -> View {
        View::ALL[(self.index() + 1) % View::ALL.len()]
    }

    pub fn prev(self) -> View {
        View::ALL[(self.index() + View::ALL.len() - 1) % View::ALL.len()]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn views_cycle_forwards_and_backwards_through_all_of_them() {
        let mut v = View::ALL[0];
        for _ in 0..View::ALL.len() {
            v = v.next();
        }
        assert_eq!(v, View::ALL[0]);
        assert_eq!(View::ALL[0].prev(), View::ALL[View::ALL.len() - 1]);
        assert_eq!(View::numbered(1), Some(View::ALL[0]));
        assert_eq!(View::numbered(0), None);
        assert_eq!(View::numbered(View::ALL.len() + 1), None);
    }
}
