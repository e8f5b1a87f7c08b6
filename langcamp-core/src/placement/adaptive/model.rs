//! The item-response model: how likely a student of a given ability is to answer a
//! question right, and how much one answer tells about the ability.
//!
//! The model is the three-parameter logistic ("3PL") model with a fixed guessing floor and
//! a slope common to a test's questions. Ability `θ` and difficulty `b` live on one scale,
//! in *logits*:
//!
//! ```text
//! P(correct | θ) = c + (1 - c) / (1 + e^-a(θ - b))
//! ```
//!
//! * `b`, the **difficulty**, is the question's own: its level's default until
//!   calibration gives it one (`levels.rs`, `calibrate.rs`). A student of ability `b`
//!   *knows* the answer half of the time.
//! * `c`, the **floor**, is the chance of a right answer by luck: every answer is a
//!   choice among the question's options, and a student who does not know picks one, so
//!   `c` is 1 / the number of options ([`floor_for_options`]; a four-option question:
//!   0.25). It is fixed, never estimated: a floor is the hardest parameter to estimate
//!   (only students far below a question show it, and an adaptive test asks them few such
//!   questions), and 1 / options is what random choice gives.
//! * `a`, the **slope**, says how sharply a question separates students below its
//!   difficulty from those above, on the scale the levels' width (`levels::LEVEL_WIDTH`)
//!   set. It is one value for all the questions of a test, estimated by calibration from
//!   the test's answers ([`DEFAULT_SLOPE`] before that). It also sets how much each answer
//!   tells, so the standard error, and with it the test's length, depends on it: a slope
//!   too low makes the engine ask more than it needs, one too high stop too early.
//!
//! **Why this model.** The Rasch model (`c = 0`, `a = 1`) expects a student who knows
//! nothing to answer a four-option question right almost never, when luck gives a quarter:
//! every lucky answer is read as ability, most of all at the bottom of the scale, and
//! `placement-sim`'s guessing students were placed too high (two thirds of A1 students).
//! The full 3PL model (a slope and a floor per question) needs hundreds of answers per
//! question to estimate and is unstable with the targeted answers an adaptive test
//! collects; fixing the floor at what random choice gives and sharing one slope keeps one
//! parameter per question, as with Rasch, and one per test. The price of a fixed floor:
//! students who never answer right by luck (distractors that always attract them) look
//! weaker than they are, by about a third of a level. `docs/BENCHMARKS.md` ("Adaptive
//! placement that knows students guess") measures both.
//!
//! With `c = 0` and `a = 1` this *is* the Rasch model, to the last bit ([`Item::rasch`]):
//! the simulator runs the engine before this change that way, with no second copy of it.

/// The slope of a test whose answers have not calibrated one yet: the Rasch model's,
/// flatter than any calibration found in `placement-sim` (1.3 for students who never
/// guess, 1.7 for its guessing ones), since too low errs on the side of asking more
/// questions and too high on the side of stopping early.
pub const DEFAULT_SLOPE: f64 = 1.0;

/// The slope of the Rasch model.
pub const RASCH_SLOPE: f64 = 1.0;

/// One question as the model sees it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Item {
    /// `b`, in logits.
    pub difficulty: f64,
    /// `a`, the test's common slope.
    pub slope: f64,
    /// `c`, the chance of a right answer by luck (0 up to, not including, 1).
    pub floor: f64,
}

/// The chance of a right answer by luck to a question with `options` options: one in
/// `options` (0 for a question with fewer than two, which has nothing to guess between).
pub fn floor_for_options(options: usize) -> f64 {
    if options < 2 {
        0.0
    } else {
        1.0 / options as f64
    }
}

impl Item {
    /// A question of the Rasch model: no floor, slope 1.
    pub const fn rasch(difficulty: f64) -> Item {
        Item {
            difficulty,
            slope: RASCH_SLOPE,
            floor: 0.0,
        }
    }

    /// The probability of *knowing* the answer: the logistic part, `1 / (1 + e^-a(θ - b))`.
    pub fn p_known(&self, ability: f64) -> f64 {
        1.0 / (1.0 + (-self.slope * (ability - self.difficulty)).exp())
    }

    /// The probability that a student of `ability` answers right: knowing it, or not
    /// knowing it and guessing right.
    pub fn p_correct(&self, ability: f64) -> f64 {
        self.floor + (1.0 - self.floor) * self.p_known(ability)
    }

    /// The Fisher information of one answer about the ability, `P'² / (P (1 - P))`. With
    /// `q` the probability of knowing it, that is
    ///
    /// ```text
    /// a² q (1 - q) × (1 - c) q / P
    /// ```
    ///
    /// The first factor is the information without a floor (Rasch: `q (1 - q)`, at most
    /// 0.25 where the ability meets the difficulty). The second, at most 1, is the share of
    /// right answers that come from knowing rather than luck: a right answer could be a
    /// guess, so it tells less, and far below the difficulty, where nearly every right
    /// answer is luck, it tells almost nothing. So a question with a floor is most
    /// informative a little *above* its difficulty, and gives less than the same question
    /// without one. The information of several answers adds up; the standard error of an
    /// ability estimate is about `1 / sqrt(total information)`.
    pub fn information(&self, ability: f64) -> f64 {
        let q = self.p_known(ability);
        if q == 0.0 {
            // Hopelessly hard (hundreds of logits): nothing to learn, and no 0 / 0 below.
            return 0.0;
        }
        let known_share = (1.0 - self.floor) * q / self.p_correct(ability);
        self.slope * self.slope * q * (1.0 - q) * known_share
    }

    /// The log-likelihood of one answer: `ln P(correct)` for a right answer, `ln P(wrong)`
    /// for a wrong one, computed without overflow for any difference. Without a floor it
    /// is exactly the Rasch model's.
    pub fn log_likelihood(&self, ability: f64, correct: bool) -> f64 {
        let x = self.slope * (ability - self.difficulty);
        // ln q = -softplus(-x), ln (1 - q) = -softplus(x).
        if correct {
            // ln(c + (1 - c) q), as ln(e^ln c + e^(ln(1 - c) + ln q)).
            log_add_exp(self.floor.ln(), (1.0 - self.floor).ln() - softplus(-x))
        } else {
            (1.0 - self.floor).ln() - softplus(x)
        }
    }
}

/// `ln(1 + e^x)`, accurate for any `x`.
fn softplus(x: f64) -> f64 {
    if x > 0.0 {
        x + (-x).exp().ln_1p()
    } else {
        x.exp().ln_1p()
    }
}

/// `ln(e^x + e^y)` without overflow; `x` may be minus infinity (`ln 0`), giving `y`.
fn log_add_exp(x: f64, y: f64) -> f64 {
    let (high, low) = if x > y { (x, y) } else { (y, x) };
    high + (low - high).exp().ln_1p()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-9
    }

    /// A four-option question of the new model, with a slope of 1.
    fn guessable(difficulty: f64) -> Item {
        Item {
            difficulty,
            slope: 1.0,
            floor: floor_for_options(4),
        }
    }

    #[test]
    fn rasch_an_even_match_is_an_even_chance_and_ability_above_difficulty_helps() {
        let item = Item::rasch(0.7);
        assert!(close(item.p_correct(0.7), 0.5));
        let item = Item::rasch(0.0);
        assert!(close(item.p_correct(1.0), 0.731_058_578_630_004_9));
        assert!(close(
            Item::rasch(1.0).p_correct(0.0),
            1.0 - 0.731_058_578_630_004_9
        ));
        assert!(item.p_correct(2.0) > item.p_correct(1.0));
    }

    #[test]
    fn rasch_information_peaks_at_a_quarter_where_ability_meets_difficulty() {
        assert!(close(Item::rasch(1.5).information(1.5), 0.25));
        assert!(Item::rasch(0.5).information(1.5) < 0.25);
        // Symmetric: one logit too easy tells as much as one logit too hard.
        assert!(close(
            Item::rasch(1.0).information(0.0),
            Item::rasch(-1.0).information(0.0)
        ));
        assert!(Item::rasch(6.0).information(0.0) < 0.003);
    }

    #[test]
    fn log_likelihood_is_the_log_of_the_probability_even_far_out() {
        for item in [Item::rasch(-0.2), guessable(-0.2)] {
            assert!(close(
                item.log_likelihood(0.3, true),
                item.p_correct(0.3).ln()
            ));
            assert!(close(
                item.log_likelihood(0.3, false),
                (1.0 - item.p_correct(0.3)).ln()
            ));
        }
        // 800 logits away: the probability rounds to 0 but its log is still finite.
        let far = Item::rasch(800.0);
        assert!(close(far.log_likelihood(0.0, true), -800.0));
        assert!(far.log_likelihood(0.0, false).abs() < 1e-12);
        // With a floor, a right answer far below the difficulty is luck: ln 0.25.
        assert!(close(
            guessable(800.0).log_likelihood(0.0, true),
            0.25f64.ln()
        ));
        assert!(close(
            guessable(-800.0).log_likelihood(0.0, false),
            -800.0 + 0.75f64.ln()
        ));
    }

    #[test]
    fn the_floor_is_one_over_the_options() {
        assert!(close(floor_for_options(4), 0.25));
        assert!(close(floor_for_options(2), 0.5));
        assert!(close(floor_for_options(1), 0.0));
        assert!(close(floor_for_options(0), 0.0));
    }

    #[test]
    fn with_a_floor_nobody_falls_below_luck_and_knowing_half_is_right_five_eighths() {
        let item = guessable(1.0);
        assert!(close(item.p_correct(1.0), 0.625));
        assert!(item.p_correct(-40.0) >= 0.25);
        assert!(close(item.p_correct(-40.0), 0.25));
        assert!(item.p_correct(40.0) <= 1.0);
    }

    #[test]
    fn a_question_with_a_floor_tells_less_than_the_same_question_without_one() {
        for ability in [-4.0, -1.0, 0.0, 0.5, 1.0, 3.0] {
            let with = guessable(0.0).information(ability);
            let without = Item::rasch(0.0).information(ability);
            assert!(with < without, "at {ability}: {with} against {without}");
        }
        // Far below the difficulty a right answer is nearly always luck: next to nothing.
        assert!(guessable(0.0).information(-4.0) < 0.1 * Item::rasch(0.0).information(-4.0));
        // The most informative ability lies above the difficulty, not on it.
        let at = |ability: f64| guessable(0.0).information(ability);
        assert!(at(0.3) > at(0.0) && at(0.3) > at(-0.3));
    }

    #[test]
    fn a_steeper_slope_tells_more_near_the_difficulty() {
        let flat = guessable(0.0);
        let steep = Item { slope: 1.7, ..flat };
        assert!(steep.information(0.3) > flat.information(0.3));
    }

    #[test]
    fn the_rasch_item_is_the_rasch_model_to_the_last_bit() {
        // The formulas of the engine before the floor, written out.
        for (ability, difficulty) in [(0.3, -0.2), (-3.0, 2.0), (5.0, -1.5), (0.0, 0.0)] {
            let item = Item::rasch(difficulty);
            let p = 1.0 / (1.0 + (difficulty - ability).exp());
            let x: f64 = ability - difficulty;
            assert_eq!(item.information(ability), p * (1.0 - p));
            assert_eq!(item.log_likelihood(ability, true), -softplus(-x));
            assert_eq!(item.log_likelihood(ability, false), -softplus(x));
        }
    }
}
