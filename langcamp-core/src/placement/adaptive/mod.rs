//! Adaptive placement (CONTRACT §19, issues #34 and #44): the model behind a test that
//! chooses each next question from the answers so far and stops as soon as the student's
//! level is known.
//!
//! Everything here is a pure function of its inputs (plus a random number generator passed
//! in, for the draw among the best questions): no database, no HTTP, no clock. The attempt
//! store calls it; `langcamp-bench`'s `placement-sim` runs it on simulated students.
//!
//! How one adaptive test runs, and where each part lives:
//!
//! 1. **The model** (`model.rs`): a student of ability `θ` answers a question of difficulty
//!    `b` right with probability `c + (1 - c) / (1 + e^-a(θ - b))`: knowing the answer, or
//!    guessing it right. `c`, the guessing floor, is 1 / the question's number of options;
//!    `a`, the slope, is common to a test's questions (a three-parameter logistic model
//!    with a fixed floor and a common slope; `model.rs` says why). Ability and difficulty
//!    are in logits on one scale. With `c = 0` and `a = 1` it is the Rasch model the
//!    engine ran before issue #44, which `placement-sim` still runs beside it.
//! 2. **Difficulties and the slope** (`levels.rs`, `calibrate.rs`): each question's
//!    difficulty is its CEFR level's default, and the test's slope
//!    [`model::DEFAULT_SLOPE`], until calibration from the finished attempts estimates
//!    them (the floors stay fixed). Calibration scores the attempts again rather than
//!    trusting their final abilities, which make the slope look steeper than it is.
//! 3. **The estimate** (`estimate.rs`): after every answer, the ability is estimated as the
//!    mean of its posterior (EAP) under a normal prior `N(0, 2²)`, computed on a grid of
//!    161 points; the standard error is the posterior's standard deviation.
//! 4. **The next question** (`select.rs`): the one with the most information at the current
//!    estimate (less for a question whose right answers may be luck), drawn at random among
//!    the 5 best so that students do not all see the same sequence.
//! 5. **The stop** (`stop.rs`): once the standard error is at most 0.55 logits, or the
//!    ability is 1.5 standard errors away from every cut point (after at least 5
//!    answers), or at the test's `maxQuestions`.
//! 6. **The level** (`levels.rs`): the final ability's band between fixed cut points.
//!
//! [`Session`] strings these together for one attempt.
//!
//! Why a floor at all: the Rasch model reads every lucky answer as ability, and in
//! `placement-sim` it placed two thirds of guessing A1 students higher; with the floor,
//! under the same answers, about a quarter (`docs/BENCHMARKS.md`, "Adaptive placement that
//! knows students guess").

pub mod calibrate;
pub mod estimate;
pub mod levels;
pub mod model;
pub mod select;
pub mod stop;

use rand::Rng;

use crate::domain::CefrLevel;
use estimate::{Estimate, Posterior, Response};
use model::Item;
use stop::{Stop, StopRule};

/// One attempt at an adaptive test, as the model sees it: the bank's questions, the
/// questions asked so far in order with their answers, and the posterior they give.
#[derive(Clone, Debug)]
pub struct Session<'a> {
    items: &'a [Item],
    rule: StopRule,
    top_k: usize,
    asked: Vec<usize>,
    posterior: Posterior,
}

/// What happens next in a session.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Step {
    /// Ask the question at this index of the bank.
    Ask(usize),
    /// The test is over.
    Finished(Outcome),
}

/// How a finished session ended.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Outcome {
    /// The final ability estimate and its standard error.
    pub estimate: Estimate,
    /// The level of the final ability.
    pub level: CefrLevel,
    /// How many questions were asked.
    pub asked: usize,
    /// Why it stopped.
    pub stop: Stop,
}

impl<'a> Session<'a> {
    /// A new session on a bank of questions, with the default prior and the draw among
    /// [`select::TOP_K`].
    pub fn new(items: &'a [Item], rule: StopRule) -> Session<'a> {
        Session {
            items,
            rule,
            top_k: select::TOP_K,
            asked: Vec::new(),
            posterior: Posterior::standard(),
        }
    }

    /// The same with the draw among the `top_k` best (1: no randomness).
    pub fn with_top_k(mut self, top_k: usize) -> Session<'a> {
        self.top_k = top_k;
        self
    }

    /// A session rebuilt from its stored answers (bank index, right or wrong), in the
    /// order given.
    pub fn replay(items: &'a [Item], rule: StopRule, answers: &[(usize, bool)]) -> Session<'a> {
        let mut session = Session::new(items, rule);
        for &(index, correct) in answers {
            session.answer(index, correct);
        }
        session
    }

    /// Records the answer to the question at `index` of the bank.
    pub fn answer(&mut self, index: usize, correct: bool) {
        if let Some(&item) = self.items.get(index) {
            self.asked.push(index);
            self.posterior.update(Response { item, correct });
        }
    }

    /// The current estimate.
    pub fn estimate(&self) -> Estimate {
        self.posterior.estimate()
    }

    /// The questions asked so far, in order.
    pub fn asked(&self) -> &[usize] {
        &self.asked
    }

    /// The next question to ask, or the outcome when the stop rule says the test is over.
    pub fn next<R: Rng + ?Sized>(&self, rng: &mut R) -> Step {
        let estimate = self.estimate();
        let left = self.items.len() - self.asked.len().min(self.items.len());
        if let Some(stop) = self.rule.check(estimate, self.asked.len(), left) {
            return Step::Finished(self.outcome(stop));
        }
        match select::next_question(estimate.ability, self.items, &self.asked, self.top_k, rng) {
            Some(index) => Step::Ask(index),
            None => Step::Finished(self.outcome(Stop::BankExhausted)),
        }
    }

    /// The outcome if the test ended now (a time limit ends it early).
    pub fn outcome(&self, stop: Stop) -> Outcome {
        let estimate = self.estimate();
        Outcome {
            estimate,
            level: levels::level_for(estimate.ability),
            asked: self.asked.len(),
            stop,
        }
    }
}

#[cfg(test)]
mod tests {
    use rand::SeedableRng;
    use rand::rngs::StdRng;

    use super::*;

    /// 10 four-option questions at each level's default difficulty, the default slope.
    fn bank() -> Vec<Item> {
        CefrLevel::ALL
            .iter()
            .flat_map(|&l| {
                [Item {
                    difficulty: levels::default_difficulty(l),
                    slope: model::DEFAULT_SLOPE,
                    floor: model::floor_for_options(4),
                }; 10]
            })
            .collect()
    }

    /// Runs a session where `answers` decides each answer from the question's difficulty.
    fn run(max: usize, answers: impl Fn(f64) -> bool) -> Outcome {
        let bank = bank();
        let mut session = Session::new(&bank, StopRule::with_max(max));
        let mut rng = StdRng::seed_from_u64(11);
        loop {
            match session.next(&mut rng) {
                Step::Ask(index) => session.answer(index, answers(bank[index].difficulty)),
                Step::Finished(outcome) => return outcome,
            }
        }
    }

    #[test]
    fn a_student_who_is_always_right_ends_at_c2_and_always_wrong_at_a1() {
        let top = run(20, |_| true);
        assert_eq!(top.level, CefrLevel::C2);
        assert!(top.asked <= 20);
        let bottom = run(20, |_| false);
        assert_eq!(bottom.level, CefrLevel::A1);
        assert!(bottom.asked <= 20);
    }

    #[test]
    fn a_student_who_knows_up_to_b1_is_placed_near_b1() {
        // Right on every question up to B1, wrong above: a sharp B1/B2 boundary.
        let outcome = run(30, |difficulty| difficulty < 0.0);
        assert!(
            matches!(outcome.level, CefrLevel::B1 | CefrLevel::B2),
            "{outcome:?}"
        );
        assert!((outcome.estimate.ability - 0.0).abs() < 1.0, "{outcome:?}");
    }

    #[test]
    fn a_mid_level_student_answering_by_chance_lands_within_one_level_in_most_runs() {
        // A true B1/B2 student (ability 0.2) answers each question right with the model's
        // probability; 100 seeded runs of a 20-question maximum.
        let bank = bank();
        let truth = levels::level_rank(levels::level_for(0.2));
        let mut within_one = 0;
        for seed in 0..100 {
            let mut session = Session::new(&bank, StopRule::with_max(20));
            let mut rng = StdRng::seed_from_u64(seed);
            let outcome = loop {
                match session.next(&mut rng) {
                    Step::Ask(index) => {
                        let right =
                            rand::RngExt::random::<f64>(&mut rng) < bank[index].p_correct(0.2);
                        session.answer(index, right);
                    }
                    Step::Finished(outcome) => break outcome,
                }
            };
            if levels::level_rank(outcome.level).abs_diff(truth) <= 1 {
                within_one += 1;
            }
        }
        assert!(within_one >= 70, "{within_one} of 100 within one level");
    }

    #[test]
    fn max_questions_bounds_the_test() {
        let bank = bank();
        let mut session = Session::new(&bank, StopRule::with_max(5));
        let mut rng = StdRng::seed_from_u64(3);
        let mut answers = 0;
        while let Step::Ask(index) = session.next(&mut rng) {
            session.answer(index, answers % 2 == 0);
            answers += 1;
        }
        assert_eq!(answers, 5);
    }

    #[test]
    fn replaying_the_stored_answers_gives_the_same_estimate() {
        let bank = bank();
        let rule = StopRule::with_max(20);
        let mut live = Session::new(&bank, rule);
        let mut rng = StdRng::seed_from_u64(5);
        let mut stored = Vec::new();
        for k in 0..6 {
            let Step::Ask(index) = live.next(&mut rng) else {
                panic!("stopped early")
            };
            live.answer(index, k % 3 != 0);
            stored.push((index, k % 3 != 0));
        }
        let again = Session::replay(&bank, rule, &stored);
        assert_eq!(again.estimate(), live.estimate());
        assert_eq!(again.asked(), live.asked());
    }
}
