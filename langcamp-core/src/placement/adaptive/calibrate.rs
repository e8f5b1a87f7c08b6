//! Calibration: a question's own difficulty, estimated from the answers it has received.
//!
//! Until calibrated, a question's difficulty is its level's default
//! (`levels::default_difficulty`). Calibration takes every stored answer to the question
//! together with the final ability of the student who gave it, treats those abilities as
//! known, and finds the difficulty that makes the observed right and wrong answers most
//! likely, pulled gently towards the level's default.
//!
//! **The estimate** is a maximum a posteriori (MAP) difficulty: it maximises
//!
//! ```text
//! Σ ln P(answer_j | θ_j, b)  -  (b - b_level)² / (2 × PRIOR_SD²)
//! ```
//!
//! over `b`, where the first term is the Rasch log-likelihood of the answers and the second
//! a normal prior centred on the level's default difficulty with standard deviation
//! [`PRIOR_SD`] (1 logit). The prior keeps the estimate finite when every answer is right
//! (or every one wrong), where the likelihood alone would push `b` to infinity, and matters
//! little once there are [`MIN_ANSWERS`] answers.
//!
//! **Newton's method.** With `p_j = P(correct | θ_j, b)` and `y_j` 1 for a right answer,
//! the slope and curvature of that function are
//!
//! ```text
//! slope     = Σ (p_j - y_j) - (b - b_level) / PRIOR_SD²
//! curvature = -Σ p_j (1 - p_j) - 1 / PRIOR_SD²        (always negative)
//! ```
//!
//! and each step moves `b` by `-slope / curvature`. The curvature is always negative, so
//! the function has one maximum and the steps converge to it, usually in 3 to 5 steps; the
//! loop stops when a step is under 0.0001 logits or after [`MAX_STEPS`] steps. The standard
//! error of the difficulty is `1 / sqrt(-curvature)` at the end.
//!
//! **How many answers.** A question is calibrated only with at least [`MIN_ANSWERS`] (50)
//! answers: with 50 answers from well-targeted students the difficulty's standard error is
//! about `1 / sqrt(50 × 0.2)` ≈ 0.3 logits, a fifth of a level's width. With fewer, the
//! level's default is kept.
//!
//! **What it ignores.** The students' abilities are themselves estimates (each with its
//! standard error, and shrunk towards the prior's mean), and they were estimated with the
//! difficulties in use at the time; treating them as exact is the usual first step of
//! online calibration and is good enough to correct a question that is clearly easier or
//! harder than its level. Running calibration again after more answers refines it.

use super::model::{information, p_correct};

/// The fewest answers a question needs before it gets a difficulty of its own.
pub const MIN_ANSWERS: usize = 50;
/// The standard deviation, in logits, of the prior around the level's default difficulty.
pub const PRIOR_SD: f64 = 1.0;
/// The most Newton steps taken.
pub const MAX_STEPS: usize = 25;

/// One stored answer to the question: the final ability of the student who gave it, and
/// whether the answer was right.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Observation {
    pub ability: f64,
    pub correct: bool,
}

/// A calibrated difficulty.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Calibrated {
    /// The difficulty, in logits.
    pub difficulty: f64,
    /// Its standard error, in logits.
    pub standard_error: f64,
    /// How many answers it rests on.
    pub answers: usize,
}

/// The difficulty of a question from its answers, starting from (and pulled towards)
/// `level_default`; `None` with fewer than [`MIN_ANSWERS`] answers.
pub fn calibrate(level_default: f64, observations: &[Observation]) -> Option<Calibrated> {
    if observations.len() < MIN_ANSWERS {
        return None;
    }
    let prior_precision = 1.0 / (PRIOR_SD * PRIOR_SD);
    let mut b = level_default;
    let mut curvature = -prior_precision;
    for _ in 0..MAX_STEPS {
        let mut slope = -(b - level_default) * prior_precision;
        curvature = -prior_precision;
        for o in observations {
            let y = if o.correct { 1.0 } else { 0.0 };
            slope += p_correct(o.ability, b) - y;
            curvature -= information(o.ability, b);
        }
        let step = -slope / curvature;
        b += step;
        if step.abs() < 1e-4 {
            break;
        }
    }
    Some(Calibrated {
        difficulty: b,
        standard_error: 1.0 / (-curvature).sqrt(),
        answers: observations.len(),
    })
}

#[cfg(test)]
mod tests {
    use rand::rngs::StdRng;
    use rand::{RngExt, SeedableRng};

    use super::*;

    #[test]
    fn too_few_answers_keep_the_level_default() {
        let few = vec![
            Observation {
                ability: 0.0,
                correct: true
            };
            MIN_ANSWERS - 1
        ];
        assert_eq!(calibrate(0.75, &few), None);
    }

    #[test]
    fn simulated_answers_recover_the_true_difficulty() {
        // 400 students spread over the scale answer a question whose true difficulty is
        // 1.6, though its level says 0.75.
        let mut rng = StdRng::seed_from_u64(7);
        let observations: Vec<Observation> = (0..400)
            .map(|_| {
                let ability = rng.random_range(-3.0..4.0);
                let correct = rng.random::<f64>() < p_correct(ability, 1.6);
                Observation { ability, correct }
            })
            .collect();
        let c = calibrate(0.75, &observations).expect("enough answers");
        assert!((c.difficulty - 1.6).abs() < 2.5 * c.standard_error, "{c:?}");
        assert!(c.standard_error < 0.2, "{c:?}");
        assert_eq!(c.answers, 400);
    }

    #[test]
    fn all_right_answers_give_an_easier_but_finite_difficulty() {
        let all_right = vec![
            Observation {
                ability: 0.0,
                correct: true
            };
            MIN_ANSWERS
        ];
        let c = calibrate(0.75, &all_right).expect("enough answers");
        assert!(c.difficulty.is_finite());
        assert!(c.difficulty < -2.0, "{c:?}");
    }

    #[test]
    fn answers_exactly_as_the_default_predicts_leave_it_in_place() {
        // Half right at ability = default: the likelihood's maximum is the default itself.
        let observations: Vec<Observation> = (0..100)
            .map(|k| Observation {
                ability: 0.75,
                correct: k % 2 == 0,
            })
            .collect();
        let c = calibrate(0.75, &observations).expect("enough answers");
        assert!((c.difficulty - 0.75).abs() < 1e-6, "{c:?}");
        assert!((c.standard_error - 1.0 / (100.0f64 * 0.25 + 1.0).sqrt()).abs() < 1e-6);
    }
}
