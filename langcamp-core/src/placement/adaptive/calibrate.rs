//! Calibration: each question's own difficulty, and the test's common slope, estimated
//! from the test's finished attempts. The floors (1 / options) stay fixed.
//!
//! Until calibrated, a question's difficulty is its level's default
//! (`levels::default_difficulty`) and the test's slope is [`DEFAULT_SLOPE`].
//!
//! **What an answer is paired with.** Calibration needs, for each answer, where the student
//! who gave it stands. Issue #34's calibration took the final ability of the attempt as if
//! it were exact. That does for a difficulty but not for a slope: the final ability was
//! estimated *from* the answer (a right answer raised it), so answers look more consistent
//! with their students' abilities than they are, and `placement-sim` found a slope of 2.2
//! for answers of slope 1.7 (and a test that then stopped too early). So [`calibrate_test`]
//! scores each finished attempt again with the current difficulties and slope, and pairs
//! each answer with what the student's *other* answers say: the posterior's mean and
//! standard deviation without that answer ([`Posterior::estimate_without`]). The
//! probability of the answer is the model's averaged over that posterior (a five-point
//! Gauss–Hermite quadrature of a normal with its mean and deviation), so the uncertainty
//! of the ability does not flatten the slope either. The posterior's prior is the
//! population the attempts show: a normal with the mean and variance of their abilities,
//! estimated along (starting from the engine's `N(0, 2²)`). Then the difficulties and the
//! slope are estimated as below, the attempts scored again with them, and so on until
//! nothing moves more than 0.01 (at most [`MAX_RESCORES`] times; in `placement-sim` five
//! or six). This is an approximation of marginal maximum likelihood (Bock and Aitkin's EM)
//! that needs only each attempt's answers, which every result stores.
//!
//! **What holds the scale.** The answers alone say how questions and students lie
//! relative to each other, not where the levels are: shifting every ability and difficulty
//! by the same amount, or stretching them while flattening the slope, explains them as
//! well. The levels' default difficulties decide: each difficulty's prior is centred on
//! its level's default, so calibrated questions stay, on average, where their levels put
//! them, and the cut points keep their meaning.
//!
//! **The estimate**, with those pairings, maximises over the slope `a` and each calibrated
//! question's `b`
//!
//! ```text
//! Σ ln P(answer_j | a, b, c)  -  Σ (b - b_level)² / (2 × PRIOR_SD²)  -  (a - a_0)² / (2 × SLOPE_PRIOR_SD²)
//! ```
//!
//! the second term a normal prior on each difficulty centred on its level's default with
//! standard deviation [`PRIOR_SD`] (1 logit), the third a weak prior on the slope around
//! [`DEFAULT_SLOPE`]. The difficulty's prior keeps the estimate finite when every answer
//! is right (or every one wrong), where the likelihood alone would push `b` to infinity,
//! and matters little once there are [`MIN_ANSWERS`] answers. The levels' default
//! difficulties are also what holds the scale in place: nothing else in the answers says
//! where a level begins.
//!
//! **Fisher scoring.** Difficulties and slope are estimated in turn, every difficulty with
//! the slope fixed, then the slope with the difficulties fixed, until the slope moves less
//! than 0.0001. Each is a one-dimensional Fisher scoring: with `P_j` the probability of a
//! right answer, `P'_j` its derivative by the parameter and `y_j` 1 for a right answer,
//!
//! ```text
//! score = Σ (y_j - P_j) P'_j / (P_j (1 - P_j))  - (parameter - prior mean) / prior variance
//! info  = Σ P'_j² / (P_j (1 - P_j))             + 1 / prior variance
//! ```
//!
//! and each step moves the parameter by `score / info` (the expected information is always
//! positive, so unlike Newton's method it never steps the wrong way where the floor bends
//! the likelihood), stopping when a step is under 0.0001 or after [`MAX_STEPS`]. For a
//! Rasch question with a known ability, `P'_j / (P_j (1 - P_j))` is `-1` and this is issue
//! #34's Newton step. The standard errors reported are `1 / sqrt(info)` at the end.
//!
//! **How many answers.** A question is calibrated only with at least [`MIN_ANSWERS`] (50)
//! answers: with 50 answers from well-targeted students the difficulty's standard error is
//! about 0.3 to 0.4 logits, a quarter of a level's width. With fewer, the question keeps
//! its current difficulty and its answers do not count towards the slope. The slope is
//! estimated once the calibrated questions have at least [`MIN_SLOPE_ANSWERS`] answers
//! between them and belong to at least two levels; before that the test keeps the slope
//! it has.

use super::estimate::{PRIOR_MEAN, PRIOR_SD as ABILITY_PRIOR_SD, Posterior, Response};
use super::model::{DEFAULT_SLOPE, Item};

/// The fewest answers a question needs before it gets a difficulty of its own.
pub const MIN_ANSWERS: usize = 50;
/// The fewest answers, on calibrated questions together, before the slope is estimated.
pub const MIN_SLOPE_ANSWERS: usize = 1000;
/// The standard deviation, in logits, of the prior around the level's default difficulty.
pub const PRIOR_SD: f64 = 1.0;
/// The standard deviation of the (weak) prior around [`DEFAULT_SLOPE`].
pub const SLOPE_PRIOR_SD: f64 = 1.0;
/// The slope stays within these bounds, whatever the answers.
pub const SLOPE_RANGE: (f64, f64) = (0.25, 4.0);
/// The most Fisher-scoring steps for one parameter.
pub const MAX_STEPS: usize = 25;
/// The most rounds of difficulties then slope, for one scoring of the attempts.
pub const MAX_ROUNDS: usize = 50;
/// The most times the attempts are scored again.
pub const MAX_RESCORES: usize = 10;

/// Five-point Gauss–Hermite quadrature of a standard normal: (point, weight), the middle
/// point first.
const GAUSS_HERMITE: [(f64, f64); 5] = [
    (0.0, 8.0 / 15.0),
    (-1.355_626_179_974_266, 0.222_075_922_005_613_2),
    (1.355_626_179_974_266, 0.222_075_922_005_613_2),
    (-2.856_970_013_872_806, 0.011_257_411_327_720_69),
    (2.856_970_013_872_806, 0.011_257_411_327_720_69),
];

/// One answer to a question: where the student who gave it stands, and whether it was
/// right.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Observation {
    /// The student's ability (logits): known, or the mean of what is known.
    pub ability: f64,
    /// Its standard deviation: 0 when known exactly.
    pub spread: f64,
    pub correct: bool,
}

impl Observation {
    /// An answer by a student of exactly this ability.
    pub fn known(ability: f64, correct: bool) -> Observation {
        Observation {
            ability,
            spread: 0.0,
            correct,
        }
    }

    /// The abilities to average the model over, with their weights.
    fn points(&self) -> impl Iterator<Item = (f64, f64)> + '_ {
        let spread = self.spread > 0.0;
        let n = if spread { GAUSS_HERMITE.len() } else { 1 };
        GAUSS_HERMITE[..n].iter().map(move |&(x, w)| {
            let weight = if spread { w } else { 1.0 };
            (self.ability + self.spread * x, weight)
        })
    }

    /// The probability of a right answer to `item`, and its derivatives by the difficulty
    /// and by the slope.
    fn chance(&self, item: Item) -> (f64, f64, f64) {
        let (mut p, mut by_difficulty, mut by_slope) = (0.0, 0.0, 0.0);
        for (ability, weight) in self.points() {
            let q = item.p_known(ability);
            let bend = weight * (1.0 - item.floor) * q * (1.0 - q);
            p += weight * item.p_correct(ability);
            by_difficulty -= item.slope * bend;
            by_slope += (ability - item.difficulty) * bend;
        }
        (p.clamp(1e-12, 1.0 - 1e-12), by_difficulty, by_slope)
    }
}

/// A question as calibration sees it.
#[derive(Clone, Debug, PartialEq)]
pub struct QuestionAnswers {
    /// Its level's default difficulty: the prior's centre.
    pub level_default: f64,
    /// Its difficulty now (kept when it has too few answers).
    pub difficulty: f64,
    /// Its guessing floor, fixed.
    pub floor: f64,
    /// Its answers.
    pub observations: Vec<Observation>,
}

/// Whether calibration estimates the slope or keeps one.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum SlopeRule {
    /// Estimate the slope, starting from (and keeping, with too few answers) this one.
    Estimate(f64),
    /// Keep this slope: 1 with floors of 0 is the Rasch calibration.
    Fixed(f64),
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

/// A calibrated common slope.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CalibratedSlope {
    pub slope: f64,
    pub standard_error: f64,
    /// How many answers it rests on (those of the calibrated questions).
    pub answers: usize,
}

/// What calibrating a test gives.
#[derive(Clone, Debug, PartialEq)]
pub struct TestCalibration {
    /// The slope, when there were enough answers to estimate it (and the rule said to).
    pub slope: Option<CalibratedSlope>,
    /// The slope the difficulties were estimated with: the new one, else the one kept.
    pub slope_used: f64,
    /// Per question, in the order given: its difficulty, or `None` with too few answers.
    pub questions: Vec<Option<Calibrated>>,
}

/// Calibrates a test from its finished attempts: each attempt's answers as (index into
/// `questions`, right), in any order. `questions` carry their difficulties now and no
/// observations (those come from the attempts). Scores the attempts, calibrates, and
/// again with the new difficulties and slope, until they settle.
pub fn calibrate_test(
    questions: &[QuestionAnswers],
    attempts: &[Vec<(usize, bool)>],
    rule: SlopeRule,
) -> TestCalibration {
    let mut current = questions.to_vec();
    let mut rule = rule;
    let mut prior = (PRIOR_MEAN, ABILITY_PRIOR_SD);
    let mut outcome = calibrate_observed(&current, rule);
    for _ in 0..MAX_RESCORES {
        let slope = match rule {
            SlopeRule::Estimate(slope) | SlopeRule::Fixed(slope) => slope,
        };
        let items: Vec<Item> = current
            .iter()
            .map(|q| Item {
                difficulty: q.difficulty,
                slope,
                floor: q.floor,
            })
            .collect();
        let (observed, population) = rescore(&items, attempts, prior);
        prior = population;
        for (question, observations) in current.iter_mut().zip(observed) {
            question.observations = observations;
        }
        outcome = calibrate_observed(&current, rule);
        let mut moved = (outcome.slope_used - slope).abs();
        for (question, calibrated) in current.iter_mut().zip(&outcome.questions) {
            if let Some(c) = calibrated {
                moved = moved.max((c.difficulty - question.difficulty).abs());
                question.difficulty = c.difficulty;
            }
        }
        rule = match rule {
            SlopeRule::Estimate(_) => SlopeRule::Estimate(outcome.slope_used),
            fixed => fixed,
        };
        if moved < 0.01 {
            break;
        }
    }
    outcome
}

/// Each question's answers, paired with what each student's other answers say about
/// their ability under `items` and the population `prior`; and the population the
/// attempts show (the normal with the mean and variance of their abilities).
fn rescore(
    items: &[Item],
    attempts: &[Vec<(usize, bool)>],
    prior: (f64, f64),
) -> (Vec<Vec<Observation>>, (f64, f64)) {
    let mut observed = vec![Vec::new(); items.len()];
    let (mut sum, mut sum_squares) = (0.0, 0.0);
    for answers in attempts {
        let responses: Vec<(usize, Response)> = answers
            .iter()
            .filter_map(|&(index, correct)| {
                let item = *items.get(index)?;
                Some((index, Response { item, correct }))
            })
            .collect();
        let mut posterior = Posterior::new(prior.0, prior.1);
        for &(_, response) in &responses {
            posterior.update(response);
        }
        let whole = posterior.estimate();
        sum += whole.ability;
        sum_squares += whole.ability.powi(2) + whole.standard_error.powi(2);
        for (index, response) in responses {
            let others = posterior.estimate_without(response);
            observed[index].push(Observation {
                ability: others.ability,
                spread: others.standard_error,
                correct: response.correct,
            });
        }
    }
    let n = attempts.len().max(1) as f64;
    let mean = sum / n;
    let sd = (sum_squares / n - mean * mean).max(0.01).sqrt();
    (observed, (mean, sd))
}

/// Calibrates a test's questions from their observations and, under
/// [`SlopeRule::Estimate`], its common slope.
pub fn calibrate_observed(questions: &[QuestionAnswers], rule: SlopeRule) -> TestCalibration {
    let enough: Vec<usize> = (0..questions.len())
        .filter(|&i| questions[i].observations.len() >= MIN_ANSWERS)
        .collect();
    let slope_answers: usize = enough
        .iter()
        .map(|&i| questions[i].observations.len())
        .sum();
    // The slope is a question of the scale's unit, which only questions of two levels
    // or more can tell (see "What holds the scale").
    let mut levels: Vec<f64> = enough.iter().map(|&i| questions[i].level_default).collect();
    levels.sort_by(f64::total_cmp);
    levels.dedup();
    let (mut slope, estimate_slope) = match rule {
        SlopeRule::Estimate(current) => (
            current,
            slope_answers >= MIN_SLOPE_ANSWERS && levels.len() >= 2,
        ),
        SlopeRule::Fixed(slope) => (slope, false),
    };
    let mut items: Vec<Item> = enough
        .iter()
        .map(|&i| Item {
            difficulty: questions[i].difficulty,
            slope,
            floor: questions[i].floor,
        })
        .collect();
    let mut slope_error = f64::NAN;
    for _ in 0..MAX_ROUNDS {
        for (item, &i) in items.iter_mut().zip(&enough) {
            item.slope = slope;
            item.difficulty = difficulty(
                *item,
                questions[i].level_default,
                &questions[i].observations,
            )
            .0;
        }
        if !estimate_slope {
            break;
        }
        let answered: Vec<(Item, &[Observation])> = items
            .iter()
            .zip(&enough)
            .map(|(&item, &i)| (item, questions[i].observations.as_slice()))
            .collect();
        let (next, error) = common_slope(slope, &answered);
        let moved = (next - slope).abs();
        slope = next;
        slope_error = error;
        if moved < 1e-4 {
            break;
        }
    }
    let mut calibrated = vec![None; questions.len()];
    for (item, &i) in items.iter_mut().zip(&enough) {
        item.slope = slope;
        let observations = &questions[i].observations;
        let (difficulty, standard_error) =
            difficulty(*item, questions[i].level_default, observations);
        calibrated[i] = Some(Calibrated {
            difficulty,
            standard_error,
            answers: observations.len(),
        });
    }
    TestCalibration {
        slope: estimate_slope.then_some(CalibratedSlope {
            slope,
            standard_error: slope_error,
            answers: slope_answers,
        }),
        slope_used: slope,
        questions: calibrated,
    }
}

/// One question's MAP difficulty with its slope and floor fixed, starting from `start`'s
/// difficulty: `(difficulty, standard error)`.
fn difficulty(start: Item, level_default: f64, observations: &[Observation]) -> (f64, f64) {
    let prior_precision = 1.0 / (PRIOR_SD * PRIOR_SD);
    let mut item = start;
    let mut info = prior_precision;
    for _ in 0..MAX_STEPS {
        let mut score = -(item.difficulty - level_default) * prior_precision;
        info = prior_precision;
        for o in observations {
            let (p, by_difficulty, _) = o.chance(item);
            let y = if o.correct { 1.0 } else { 0.0 };
            let variance = p * (1.0 - p);
            score += (y - p) * by_difficulty / variance;
            info += by_difficulty * by_difficulty / variance;
        }
        let step = score / info;
        item.difficulty += step;
        if step.abs() < 1e-4 {
            break;
        }
    }
    (item.difficulty, 1.0 / info.sqrt())
}

/// The MAP common slope with the difficulties fixed, starting from `start`:
/// `(slope, standard error)`.
fn common_slope(start: f64, questions: &[(Item, &[Observation])]) -> (f64, f64) {
    let prior_precision = 1.0 / (SLOPE_PRIOR_SD * SLOPE_PRIOR_SD);
    let mut slope = start;
    let mut info = prior_precision;
    for _ in 0..MAX_STEPS {
        let mut score = -(slope - DEFAULT_SLOPE) * prior_precision;
        info = prior_precision;
        for &(item, observations) in questions {
            let item = Item { slope, ..item };
            for o in observations {
                let (p, _, by_slope) = o.chance(item);
                let y = if o.correct { 1.0 } else { 0.0 };
                let variance = p * (1.0 - p);
                score += (y - p) * by_slope / variance;
                info += by_slope * by_slope / variance;
            }
        }
        let next = (slope + score / info).clamp(SLOPE_RANGE.0, SLOPE_RANGE.1);
        let step = next - slope;
        slope = next;
        if step.abs() < 1e-4 {
            break;
        }
    }
    (slope, 1.0 / info.sqrt())
}

#[cfg(test)]
mod tests;
