//! When to stop asking: as soon as the ability is known precisely enough, or at the
//! test's `maxQuestions`, whichever comes first.
//!
//! After each answer the estimate's standard error (SE) is compared with
//! [`StopRule::target_error`]: at or below it, the test ends. A test also ends at
//! `max_questions` answers, or when the bank has no question left to ask. It never ends
//! before `min_questions`, so a lucky first few answers cannot decide a placement alone.
//!
//! The default target (0.6 logits, [`TARGET_ERROR`]) was chosen with the simulation in
//! `docs/BENCHMARKS.md` ("Adaptive placement"): it is the largest error at which the
//! adaptive test still places students at their true level as often as a fixed test of 30
//! questions does. An error of 0.6 is 0.4 of a level's width (`levels::LEVEL_WIDTH`).

use super::estimate::Estimate;

/// The standard error, in logits, at which a test stops by default.
pub const TARGET_ERROR: f64 = 0.6;
/// The fewest answers before a test may stop for precision.
pub const MIN_QUESTIONS: usize = 5;
/// A test's `maxQuestions` when its author gives none.
pub const DEFAULT_MAX_QUESTIONS: usize = 20;

/// When a test stops.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct StopRule {
    /// Stop once the standard error is at or below this (logits).
    pub target_error: f64,
    /// Never stop for precision before this many answers.
    pub min_questions: usize,
    /// Always stop at this many answers (the test's `maxQuestions`).
    pub max_questions: usize,
}

impl StopRule {
    /// The default rule with a test's own `maxQuestions`.
    pub fn with_max(max_questions: usize) -> StopRule {
        StopRule {
            target_error: TARGET_ERROR,
            min_questions: MIN_QUESTIONS,
            max_questions,
        }
    }

    /// Why the test stops after `answered` answers with `estimate`, or `None` to go on.
    /// `bank_left` is how many questions have not been asked yet.
    pub fn check(&self, estimate: Estimate, answered: usize, bank_left: usize) -> Option<Stop> {
        if answered >= self.max_questions {
            Some(Stop::MaxQuestions)
        } else if bank_left == 0 {
            Some(Stop::BankExhausted)
        } else if answered >= self.min_questions && estimate.standard_error <= self.target_error {
            Some(Stop::Precise)
        } else {
            None
        }
    }
}

/// Why a test stopped.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stop {
    /// The standard error reached the target.
    Precise,
    /// `maxQuestions` answers were given.
    MaxQuestions,
    /// Every question of the bank was asked.
    BankExhausted,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(standard_error: f64) -> Estimate {
        Estimate {
            ability: 0.0,
            standard_error,
        }
    }

    #[test]
    fn a_precise_enough_estimate_stops_the_test_but_not_before_the_minimum() {
        let rule = StopRule::with_max(20);
        assert_eq!(rule.check(at(0.5), 4, 50), None);
        assert_eq!(rule.check(at(0.5), 5, 50), Some(Stop::Precise));
        assert_eq!(rule.check(at(TARGET_ERROR), 9, 50), Some(Stop::Precise));
        assert_eq!(rule.check(at(0.61), 9, 50), None);
    }

    #[test]
    fn max_questions_and_an_empty_bank_stop_whatever_the_error() {
        let rule = StopRule::with_max(20);
        assert_eq!(rule.check(at(1.5), 20, 50), Some(Stop::MaxQuestions));
        assert_eq!(rule.check(at(1.5), 12, 0), Some(Stop::BankExhausted));
        assert_eq!(rule.check(at(1.5), 2, 0), Some(Stop::BankExhausted));
    }
}
