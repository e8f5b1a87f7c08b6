//! An injectable clock, so expiry, rate windows and trends are tested without sleeping.

use std::sync::{Arc, Mutex};

use chrono::{DateTime, TimeDelta, Utc};

#[derive(Clone, Debug, Default)]
pub enum Clock {
    /// The system's wall clock.
    #[default]
    System,
    /// A clock that only moves when told to; shared by every clone.
    Manual(Arc<Mutex<DateTime<Utc>>>),
}

impl Clock {
    pub fn manual(start: DateTime<Utc>) -> Clock {
        Clock::Manual(Arc::new(Mutex::new(start)))
    }

    pub fn now(&self) -> DateTime<Utc> {
        match self {
            Clock::System => Utc::now(),
            Clock::Manual(now) => *now.lock().unwrap_or_else(|poisoned| poisoned.into_inner()),
        }
    }

    /// Milliseconds since the Unix epoch, the unit every `*_at` column stores.
    pub fn now_ms(&self) -> i64 {
        self.now().timestamp_millis()
    }

    /// Moves a manual clock forward; does nothing to the system clock.
    pub fn advance(&self, by: TimeDelta) {
        if let Clock::Manual(now) = self {
            let mut now = now.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
            *now += by;
        }
    }

    /// Sets a manual clock; does nothing to the system clock.
    pub fn set(&self, to: DateTime<Utc>) {
        if let Clock::Manual(now) = self {
            *now.lock().unwrap_or_else(|poisoned| poisoned.into_inner()) = to;
        }
    }
}
