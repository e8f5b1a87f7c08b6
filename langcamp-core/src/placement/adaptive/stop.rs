//! When to stop asking: as soon as the level is known, or at the test's `maxQuestions`,
//! whichever comes first.
//!
//! After each answer (and never before [`MIN_QUESTIONS`] answers, so that a lucky first
//! few cannot decide a placement alone) the test ends when either
//!
//! * **the estimate is precise**: its standard error (SE) is at most
//!   [`StopRule::target_error`] ([`TARGET_ERROR`], 0.55 logits by default); or
//! * **the level is clear**: the interval `ability ± level_z × SE` ([`LEVEL_Z`], 1.5 by
//!   default) lies inside a single level's band, so the SE is small enough for the level
//!   even if not for the target. A student far from every cut point stops here, sooner;
//!   one near a cut point goes on to the target, where the extra answers decide between
//!   two levels. With the defaults an inner band (1.5 logits wide) can only be clear at an
//!   SE under 0.5, below the target already, so in practice this rule ends sooner the tests
//!   of students clearly below A2 or above C1, whose bands are open-ended.
//!
//! A test also ends at `max_questions` answers, or when the bank has no question left.
//!
//! The defaults come from the simulation in `docs/BENCHMARKS.md` ("Adaptive placement"):
//! with them, on simulated students who answer as the Rasch model says, issue #34's Rasch
//! engine placed students at their true level as often as a fixed test of 30 questions
//! (about 73 %) with half as many questions on average (14.7); without the level rule the
//! same agreement took 15.6 questions. With the guessing floor and a calibrated slope
//! (issue #44), on students who guess as the three-parameter model says, the same rule
//! places about 75 % exactly with 12.5 questions, against 72.5 % for the fixed test. The
//! standard error is the posterior's, so the rule reads it the same way whatever the
//! model: a floor makes each answer tell less and the test longer, a steeper slope the
//! opposite. An SE of 0.55 is about a third of a level's width (`levels::LEVEL_WIDTH`).

use super::estimate::Estimate;
use super::levels;

/// The standard error, in logits, at which a test stops by default.
pub const TARGET_ERROR: f64 = 0.55;
/// How many standard errors from the nearest cut point make a level clear.
pub const LEVEL_Z: f64 = 1.5;
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
    /// Also stop once `ability ± level_z × SE` lies inside one level's band (0: never).
    pub level_z: f64,
}

impl StopRule {
    /// The default rule with a test's own `maxQuestions`.
    pub fn with_max(max_questions: usize) -> StopRule {
        StopRule {
            target_error: TARGET_ERROR,
            min_questions: MIN_QUESTIONS,
            max_questions,
            level_z: LEVEL_Z,
        }
    }

    /// Why the test stops after `answered` answers with `estimate`, or `None` to go on.
    /// `bank_left` is how many questions have not been asked yet.
    pub fn check(&self, estimate: Estimate, answered: usize, bank_left: usize) -> Option<Stop> {
        if answered >= self.max_questions {
            Some(Stop::MaxQuestions)
        } else if bank_left == 0 {
            Some(Stop::BankExhausted)
        } else if answered < self.min_questions {
            None
        } else if estimate.standard_error <= self.target_error {
            Some(Stop::Precise)
        } else if self.level_z > 0.0 && self.level_is_clear(estimate) {
            Some(Stop::LevelClear)
        } else {
            None
        }
    }
}

impl StopRule {
    /// Whether `ability ± level_z × SE` lies inside a single level's band.
    fn level_is_clear(&self, estimate: Estimate) -> bool {
        let margin = self.level_z * estimate.standard_error;
        levels::level_for(estimate.ability - margin) == levels::level_for(estimate.ability + margin)
    }
}

/// Why a test stopped.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stop {
    /// The standard error reached the target.
    Precise,
    /// The ability is far enough from every cut point for its error.
    LevelClear,
    /// `maxQuestions` answers were given.
    MaxQuestions,
    /// Every question of the bank was asked.
    BankExhausted,
    /// The test's time limit passed (decided by the attempt, not by this rule).
    TimeLimit,
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
    fn a_level_that_is_clear_stops_the_test_before_the_target() {
        let rule = StopRule::with_max(20);
        let at = |ability, standard_error| Estimate {
            ability,
            standard_error,
        };
        // Deep in A1 (below -3): -5.5 ± 1.5 × 0.9 stays below -3.
        assert_eq!(rule.check(at(-5.5, 0.9), 8, 50), Some(Stop::LevelClear));
        assert_eq!(
            rule.check(at(-5.5, 0.9), 4, 50),
            None,
            "not before the minimum"
        );
        // Just below A1's cut point, the same error leaves the level open.
        assert_eq!(rule.check(at(-3.5, 0.9), 8, 50), None);
        // In the middle of B1 (-1.5 to 0) an error of 0.6 spans both cut points.
        assert_eq!(rule.check(at(-0.75, 0.6), 8, 50), None);
        // Switched off, only the target counts.
        let off = StopRule {
            level_z: 0.0,
            ..rule
        };
        assert_eq!(off.check(at(-5.5, 0.9), 8, 50), None);
    }

    #[test]
    fn max_questions_and_an_empty_bank_stop_whatever_the_error() {
        let rule = StopRule::with_max(20);
        assert_eq!(rule.check(at(1.5), 20, 50), Some(Stop::MaxQuestions));
        assert_eq!(rule.check(at(1.5), 12, 0), Some(Stop::BankExhausted));
        assert_eq!(rule.check(at(1.5), 2, 0), Some(Stop::BankExhausted));
    }
}
