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
    /// The webhook endpoints and their recent deliveries (CONTRACT §24), read-only.
    Webhooks,
}

impl View {
    /// Every view, in tab order; view `n` is switched to with the key `n`, the tenth with
    /// `0`.
    pub const ALL: [View; 10] = [
        View::Dashboard,
        View::Users,
        View::Contacts,
        View::Placement,
        View::Materials,
        View::Courses,
        View::Settings,
        View::Mail,
        View::Audit,
        View::Webhooks,
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
            View::Webhooks => "Webhooks",
        }
    }

    /// The title where room is short (the tab bar of a terminal 100 columns wide).
    pub fn short_title(self) -> &'static str {
        match self {
            View::Webhooks => "Hooks",
            other => other.title(),
        }
    }

    /// The number key that switches to this view: `1` to `9`, then `0`.
    pub fn key(self) -> char {
        let n = u32::try_from((self.index() + 1) % 10).unwrap_or(0);
        char::from_digit(n, 10).unwrap_or('0')
    }

    /// The view switched to with the number key `key`.
    pub fn of_key(key: char) -> Option<View> {
        View::ALL.into_iter().find(|v| v.key() == key)
    }

    /// The number keys of the views as the footer shows them: `1-9`, or `0-9` for ten.
    pub fn keys_label() -> String {
        match View::ALL.len() {
            n if n >= 10 => "0-9".to_owned(),
            n => format!("1-{n}"),
        }
    }

    /// Position in the tab bar (0-based).
    pub fn index(self) -> usize {
        View::ALL.iter().position(|v| *v == self).unwrap_or(0)
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
    }

    #[test]
    fn each_view_has_its_own_number_key_the_tenth_zero() {
        let keys: Vec<char> = View::ALL.iter().map(|v| v.key()).collect();
        assert_eq!(keys, ['1', '2', '3', '4', '5', '6', '7', '8', '9', '0']);
        for view in View::ALL {
            assert_eq!(View::of_key(view.key()), Some(view));
        }
        assert_eq!(View::of_key('a'), None);
        assert_eq!(View::keys_label(), "0-9");
    }
}
