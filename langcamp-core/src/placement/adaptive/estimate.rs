//! The ability estimate after each answer: EAP (expected a posteriori) with a normal prior,
//! computed on a fixed grid.
//!
//! **The choice.** Two estimates are common in adaptive testing: the maximum-likelihood
//! estimate (MLE) and the mean of the posterior (EAP). The MLE does not exist while every
//! answer so far is right (or every one wrong): the likelihood keeps rising towards plus
//! (or minus) infinity, which happens on every first answer. EAP always exists, is stable
//! from the first answer, and its standard error is simply the posterior's standard
//! deviation. Its price is a pull towards the prior's mean, strongest when there are few
//! answers; with the 10 to 30 answers of a placement it is small, and the simulation
//! measures the end result. So Langcamp uses EAP.
//!
//! **The prior** is what we believe about a student before any answer: a normal
//! distribution with mean [`PRIOR_MEAN`] (the middle of the scale, between B1 and B2) and
//! standard deviation [`PRIOR_SD`] (2 logits: the six levels span about 9 logits, so a
//! student anywhere from A1 to C2 is plausible).
//!
//! **The posterior** after answers `x1..xn` is, up to a constant,
//! `prior(θ) × P(x1 | θ) × ... × P(xn | θ)` (the answers are independent given the ability),
//! each `P` the model's (`model.rs`), floor included: a right answer to a question far
//! above the student multiplies the posterior by about the floor everywhere below the
//! question, so it moves the estimate little, where the Rasch model read it as a sign of
//! ability.
//!
//! **The quadrature.** Instead of integrating, the posterior is evaluated at
//! [`GRID_POINTS`] evenly spaced abilities from -[`GRID_LIMIT`] to +[`GRID_LIMIT`] logits
//! (0.1 apart) and the integrals become sums over them:
//!
//! ```text
//! w_i     = prior(θ_i) × Π P(x_j | θ_i)       (a weight per grid point)
//! ability = Σ w_i θ_i / Σ w_i                 (the posterior mean)
//! SE      = sqrt(Σ w_i (θ_i - ability)² / Σ w_i)   (the posterior standard deviation)
//! ```
//!
//! The weights are kept as logarithms (a sum of log-likelihoods) and shifted by their
//! maximum before exponentiation, so 100 answers underflow nothing. The grid's ends lie
//! 4 prior standard deviations out, where the prior has no mass to speak of; a step of 0.1
//! is far finer than any standard error the stop rule accepts.

use super::model::Item;

/// The prior's mean, in logits.
pub const PRIOR_MEAN: f64 = 0.0;
/// The prior's standard deviation, in logits.
pub const PRIOR_SD: f64 = 2.0;
/// The grid runs from `-GRID_LIMIT` to `GRID_LIMIT` logits.
pub const GRID_LIMIT: f64 = 8.0;
/// Grid points (0.1 logits apart).
pub const GRID_POINTS: usize = 161;

/// An ability estimate in logits, with its standard error.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Estimate {
    pub ability: f64,
    pub standard_error: f64,
}

/// One answer as the estimate needs it: the question (its difficulty, slope and floor) and
/// whether the answer was right.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Response {
    pub item: Item,
    pub correct: bool,
}

/// The posterior over the grid, updated answer by answer (each update costs one pass over
/// the grid, whatever the number of answers before it).
#[derive(Clone, Debug)]
pub struct Posterior {
    /// `ln w_i` for each grid point, up to a constant.
    log_weights: Vec<f64>,
}

impl Posterior {
    /// The posterior before any answer: the normal prior `N(mean, sd²)` on the grid.
    pub fn new(mean: f64, sd: f64) -> Posterior {
        let log_weights = grid()
            .map(|theta| -0.5 * ((theta - mean) / sd).powi(2))
            .collect();
        Posterior { log_weights }
    }

    /// The default prior, `N(PRIOR_MEAN, PRIOR_SD²)`.
    pub fn standard() -> Posterior {
        Posterior::new(PRIOR_MEAN, PRIOR_SD)
    }

    /// Takes one more answer into account.
    pub fn update(&mut self, response: Response) {
        for (log_w, theta) in self.log_weights.iter_mut().zip(grid()) {
            *log_w += response.item.log_likelihood(theta, response.correct);
        }
    }

    /// The posterior mean and standard deviation.
    pub fn estimate(&self) -> Estimate {
        moments(&self.log_weights)
    }

    /// The estimate as if `response`, one of the answers taken into account, had not been
    /// given: what the student's other answers say (calibration pairs each answer with it,
    /// so that the answer does not vouch for itself).
    pub fn estimate_without(&self, response: Response) -> Estimate {
        let log_weights: Vec<f64> = self
            .log_weights
            .iter()
            .zip(grid())
            .map(|(log_w, theta)| log_w - response.item.log_likelihood(theta, response.correct))
            .collect();
        moments(&log_weights)
    }
}

/// The mean and standard deviation of the distribution with these log-weights on the grid.
fn moments(log_weights: &[f64]) -> Estimate {
    let weights = weights(log_weights);
    let total: f64 = weights.iter().sum();
    let mean = grid().zip(&weights).map(|(t, w)| t * w).sum::<f64>() / total;
    let variance = grid()
        .zip(&weights)
        .map(|(t, w)| w * (t - mean).powi(2))
        .sum::<f64>()
        / total;
    Estimate {
        ability: mean,
        standard_error: variance.sqrt(),
    }
}

/// The weights `w_i`, scaled so that the largest is 1.
fn weights(log_weights: &[f64]) -> Vec<f64> {
    let max = log_weights
        .iter()
        .copied()
        .fold(f64::NEG_INFINITY, f64::max);
    log_weights.iter().map(|l| (l - max).exp()).collect()
}

/// The estimate after `responses`, from the default prior.
pub fn eap(responses: &[Response]) -> Estimate {
    let mut posterior = Posterior::standard();
    for &response in responses {
        posterior.update(response);
    }
    posterior.estimate()
}

/// The grid's abilities, lowest first.
fn grid() -> impl Iterator<Item = f64> {
    let step = 2.0 * GRID_LIMIT / (GRID_POINTS - 1) as f64;
    (0..GRID_POINTS).map(move |i| -GRID_LIMIT + step * i as f64)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Answers to Rasch questions: (difficulty, right).
    fn answers(pairs: &[(f64, bool)]) -> Vec<Response> {
        pairs
            .iter()
            .map(|&(difficulty, correct)| Response {
                item: Item::rasch(difficulty),
                correct,
            })
            .collect()
    }

    /// The same answers to four-option questions (floor 0.25) of slope `slope`.
    fn guessable(pairs: &[(f64, bool)], slope: f64) -> Vec<Response> {
        answers(pairs)
            .into_iter()
            .map(|r| Response {
                item: Item {
                    slope,
                    floor: 0.25,
                    ..r.item
                },
                ..r
            })
            .collect()
    }

    #[test]
    fn before_any_answer_the_estimate_is_the_prior() {
        let e = eap(&[]);
        assert!(e.ability.abs() < 1e-9);
        assert!((e.standard_error - PRIOR_SD).abs() < 1e-3);
    }

    #[test]
    fn a_right_answer_moves_the_estimate_up_and_a_wrong_one_down() {
        let right = eap(&answers(&[(0.0, true)]));
        let wrong = eap(&answers(&[(0.0, false)]));
        assert!(right.ability > 0.5);
        assert!((right.ability + wrong.ability).abs() < 1e-9, "symmetric");
        // Either answer makes us surer than the prior alone.
        assert!(right.standard_error < PRIOR_SD);
    }

    #[test]
    fn all_right_answers_give_a_finite_estimate_above_the_questions() {
        // The MLE would be +infinity here; EAP stays finite.
        let e = eap(&answers(&[(1.0, true); 10]));
        assert!(e.ability > 2.0 && e.ability < GRID_LIMIT, "{e:?}");
    }

    #[test]
    fn many_answers_at_a_known_rate_find_the_ability_and_shrink_the_error() {
        // 60 answers to questions of difficulty 1, 44 right (73 %, the rate of ability 2):
        // the estimate lands near 2, with an error near 1/sqrt(60 × 0.197) ≈ 0.29.
        let mut pairs = vec![(1.0, true); 44];
        pairs.extend([(1.0, false); 16]);
        let e = eap(&answers(&pairs));
        assert!((e.ability - 2.0).abs() < 0.15, "{e:?}");
        assert!((e.standard_error - 0.29).abs() < 0.03, "{e:?}");
    }

    #[test]
    fn the_standard_error_never_grows_with_a_consistent_answer() {
        let mut posterior = Posterior::standard();
        let mut last = posterior.estimate().standard_error;
        for k in 0..20 {
            posterior.update(Response {
                item: Item::rasch(-1.0 + 0.1 * k as f64),
                correct: k % 2 == 0,
            });
            let se = posterior.estimate().standard_error;
            assert!(se < last, "answer {k}: {se} after {last}");
            last = se;
        }
    }

    #[test]
    fn a_hundred_wrong_answers_underflow_nothing() {
        let e = eap(&answers(&[(-3.0, false); 100]));
        assert!(e.ability.is_finite() && e.standard_error.is_finite());
        assert!(e.ability < -5.0, "{e:?}");
    }

    #[test]
    fn a_student_at_the_floor_gains_no_level_from_lucky_right_answers() {
        // 8 four-option questions at each level's default difficulty (-3.75 .. 3.75). A
        // student who knows none of them and guesses gets a quarter right: 2 per level.
        let level_difficulties = [-3.75, -2.25, -0.75, 0.75, 2.25, 3.75];
        let test = |right_per_level: usize| -> Vec<(f64, bool)> {
            level_difficulties
                .iter()
                .flat_map(|&d| (0..8).map(move |k| (d, k < right_per_level)))
                .collect()
        };
        let guessing = eap(&guessable(&test(2), 1.0));
        let none_right = eap(&guessable(&test(0), 1.0));
        // With the floor, 12 lucky answers are what knowing nothing gives: the estimate
        // stays in A1 (below -3), with a student who got none right.
        assert!(guessing.ability < -4.0, "{guessing:?}");
        assert!(none_right.ability < -4.0, "{none_right:?}");
        // The Rasch model reads them as ability: a level higher, in A2.
        let rasch = eap(&answers(&test(2)));
        assert!(rasch.ability > -3.0, "{rasch:?}");
    }

    #[test]
    fn right_answers_at_the_floor_s_rate_move_a_low_estimate_less_than_without_a_floor() {
        // Questions at -3 (A1/A2), a quarter right: without a floor, that says ability
        // about -4.1; with it, a student who knows them hardly at all.
        let mut pairs = vec![(-3.0, true); 5];
        pairs.extend([(-3.0, false); 15]);
        let with = eap(&guessable(&pairs, 1.0));
        let without = eap(&answers(&pairs));
        assert!(with.ability < without.ability, "{with:?} {without:?}");
    }

    #[test]
    fn a_floor_leaves_the_estimate_less_sure_than_the_same_answers_without_one() {
        let mut pairs = vec![(0.0, true); 6];
        pairs.extend([(0.0, false); 6]);
        let with = eap(&guessable(&pairs, 1.0));
        let without = eap(&answers(&pairs));
        assert!(
            with.standard_error > without.standard_error,
            "{with:?} {without:?}"
        );
        // A steeper common slope makes each answer tell more.
        let steep = eap(&guessable(&pairs, 1.7));
        assert!(
            steep.standard_error < with.standard_error,
            "{steep:?} {with:?}"
        );
    }
}
