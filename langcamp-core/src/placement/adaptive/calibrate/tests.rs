use rand::rngs::StdRng;
use rand::{RngExt, SeedableRng};

use super::*;
use crate::placement::adaptive::stop::StopRule;
use crate::placement::adaptive::{Session, Step};

/// A Rasch question (floor 0) at its level default `level_default`.
fn rasch(level_default: f64, observations: Vec<Observation>) -> QuestionAnswers {
    QuestionAnswers {
        level_default,
        difficulty: level_default,
        floor: 0.0,
        observations,
    }
}

/// `n` students of abilities uniform in `abilities` answer `truth`.
fn answers(truth: Item, n: usize, abilities: (f64, f64), rng: &mut StdRng) -> Vec<Observation> {
    (0..n)
        .map(|_| {
            let ability = rng.random_range(abilities.0..abilities.1);
            Observation::known(ability, rng.random::<f64>() < truth.p_correct(ability))
        })
        .collect()
}

fn one(question: QuestionAnswers, rule: SlopeRule) -> Option<Calibrated> {
    calibrate_observed(&[question], rule).questions[0]
}

fn four_options(difficulty: f64, slope: f64) -> Item {
    Item {
        difficulty,
        slope,
        floor: 0.25,
    }
}

#[test]
fn too_few_answers_keep_the_current_difficulty_and_slope() {
    let few = vec![Observation::known(0.0, true); MIN_ANSWERS - 1];
    let got = calibrate_observed(&[rasch(0.75, few)], SlopeRule::Estimate(1.3));
    assert_eq!(got.questions, [None]);
    assert_eq!(got.slope, None);
    assert_eq!(got.slope_used, 1.3);
}

#[test]
fn simulated_rasch_answers_recover_the_true_difficulty() {
    // 400 students spread over the scale answer a question whose true difficulty is
    // 1.6, though its level says 0.75.
    let mut rng = StdRng::seed_from_u64(7);
    let observations = answers(Item::rasch(1.6), 400, (-3.0, 4.0), &mut rng);
    let c = one(rasch(0.75, observations), SlopeRule::Fixed(1.0)).expect("enough answers");
    assert!((c.difficulty - 1.6).abs() < 2.5 * c.standard_error, "{c:?}");
    assert!(c.standard_error < 0.2, "{c:?}");
    assert_eq!(c.answers, 400);
}

#[test]
fn all_right_answers_give_an_easier_but_finite_difficulty() {
    let all_right = vec![Observation::known(0.0, true); MIN_ANSWERS];
    let c = one(rasch(0.75, all_right), SlopeRule::Fixed(1.0)).expect("enough answers");
    assert!(c.difficulty.is_finite());
    assert!(c.difficulty < -2.0, "{c:?}");
}

#[test]
fn answers_exactly_as_the_default_predicts_leave_it_in_place() {
    // Half right at ability = default: the likelihood's maximum is the default itself.
    let observations: Vec<Observation> = (0..100)
        .map(|k| Observation::known(0.75, k % 2 == 0))
        .collect();
    let c = one(rasch(0.75, observations), SlopeRule::Fixed(1.0)).expect("enough answers");
    assert!((c.difficulty - 0.75).abs() < 1e-6, "{c:?}");
    assert!((c.standard_error - 1.0 / (100.0f64 * 0.25 + 1.0).sqrt()).abs() < 1e-6);
}

#[test]
fn with_the_floor_fixed_guessed_answers_do_not_make_a_question_look_easy() {
    // A four-option question of difficulty 1.0, answered by students from -3 to 3: a
    // third of them far below it, right a quarter of the time by luck.
    let mut rng = StdRng::seed_from_u64(8);
    let observations = answers(four_options(1.0, 1.0), 600, (-3.0, 3.0), &mut rng);
    let with_floor = QuestionAnswers {
        floor: 0.25,
        ..rasch(0.75, observations.clone())
    };
    let c = one(with_floor, SlopeRule::Fixed(1.0)).expect("enough answers");
    assert!((c.difficulty - 1.0).abs() < 2.5 * c.standard_error, "{c:?}");
    // Calibrated as if nobody guessed, the lucky answers make it look much easier.
    let r = one(rasch(0.75, observations), SlopeRule::Fixed(1.0)).expect("enough answers");
    assert!(r.difficulty < c.difficulty - 0.5, "{r:?} {c:?}");
}

#[test]
fn known_abilities_give_back_the_slope_and_the_difficulties() {
    // 30 four-option questions across the scale, answered as the 3PL model says with
    // a slope of 1.7, each by 150 students around it (as an adaptive test targets).
    let mut rng = StdRng::seed_from_u64(9);
    let truths: Vec<f64> = (0..30).map(|k| -3.6 + 0.25 * f64::from(k)).collect();
    let questions: Vec<QuestionAnswers> = truths
        .iter()
        .map(|&b| QuestionAnswers {
            level_default: b.round(),
            difficulty: b.round(),
            floor: 0.25,
            observations: answers(four_options(b, 1.7), 150, (b - 2.0, b + 2.0), &mut rng),
        })
        .collect();
    let got = calibrate_observed(&questions, SlopeRule::Estimate(DEFAULT_SLOPE));
    let slope = got.slope.expect("4,500 answers are enough");
    assert!(
        (slope.slope - 1.7).abs() < 2.5 * slope.standard_error,
        "{slope:?}"
    );
    assert!(slope.standard_error < 0.15, "{slope:?}");
    assert_eq!(slope.answers, 4500);
    assert_eq!(got.slope_used, slope.slope);
    for (c, &b) in got.questions.iter().zip(&truths) {
        let c = c.expect("150 answers each");
        assert!(
            (c.difficulty - b).abs() < 3.0 * c.standard_error,
            "{c:?} for {b}"
        );
    }
}

#[test]
fn a_fixed_slope_is_kept() {
    let mut rng = StdRng::seed_from_u64(10);
    let questions: Vec<QuestionAnswers> = (0..30)
        .map(|_| QuestionAnswers {
            floor: 0.25,
            ..rasch(
                0.0,
                answers(four_options(0.0, 2.0), 100, (-2.0, 2.0), &mut rng),
            )
        })
        .collect();
    let got = calibrate_observed(&questions, SlopeRule::Fixed(1.0));
    assert_eq!(got.slope, None);
    assert_eq!(got.slope_used, 1.0);
}

#[test]
fn attempts_scored_again_give_back_the_slope_their_final_abilities_overstate() {
    // 36 four-option questions, 6 around each level's default, truly of slope 1.7. 800
    // students spread over the scale take the uncalibrated adaptive test (every question
    // at its default, the default slope) and their answers follow the true curves.
    let mut rng = StdRng::seed_from_u64(11);
    let defaults: Vec<f64> = [-3.75, -2.25, -0.75, 0.75, 2.25, 3.75]
        .iter()
        .flat_map(|&d| [d; 6])
        .collect();
    let truths: Vec<f64> = defaults
        .iter()
        .map(|&d| d + rng.random_range(-0.5..0.5))
        .collect();
    let uncalibrated: Vec<Item> = defaults
        .iter()
        .map(|&d| four_options(d, DEFAULT_SLOPE))
        .collect();
    let mut attempts = Vec::new();
    let mut by_final_ability: Vec<Vec<Observation>> = vec![Vec::new(); defaults.len()];
    for _ in 0..800 {
        let ability = rng.random_range(-4.5..4.5);
        let mut session = Session::new(&uncalibrated, StopRule::with_max(15));
        let mut answers = Vec::new();
        let outcome = loop {
            match session.next(&mut rng) {
                Step::Ask(index) => {
                    let truth = four_options(truths[index], 1.7);
                    let right = rng.random::<f64>() < truth.p_correct(ability);
                    session.answer(index, right);
                    answers.push((index, right));
                }
                Step::Finished(outcome) => break outcome,
            }
        };
        for &(index, right) in &answers {
            by_final_ability[index].push(Observation::known(outcome.estimate.ability, right));
        }
        attempts.push(answers);
    }
    let question = |d: f64, observations: Vec<Observation>| QuestionAnswers {
        level_default: d,
        difficulty: d,
        floor: 0.25,
        observations,
    };
    // Paired with each attempt's final ability, as issue #34's calibration did: too steep.
    let naive: Vec<QuestionAnswers> = defaults
        .iter()
        .zip(by_final_ability)
        .map(|(&d, o)| question(d, o))
        .collect();
    let naive = calibrate_observed(&naive, SlopeRule::Estimate(DEFAULT_SLOPE));
    let naive = naive.slope.expect("enough answers");
    assert!(naive.slope > 2.0, "paired with final abilities: {naive:?}");

    let current: Vec<QuestionAnswers> = defaults.iter().map(|&d| question(d, Vec::new())).collect();
    let got = calibrate_test(&current, &attempts, SlopeRule::Estimate(DEFAULT_SLOPE));
    let slope = got.slope.expect("enough answers");
    assert!((slope.slope - 1.7).abs() < 0.2, "scored again: {slope:?}");
    let errors: Vec<f64> = got
        .questions
        .iter()
        .zip(&truths)
        .map(|(c, truth)| c.expect("over 100 answers each").difficulty - truth)
        .collect();
    let rms = (errors.iter().map(|e| e * e).sum::<f64>() / errors.len() as f64).sqrt();
    assert!(
        rms < 0.3,
        "difficulties {rms} off, root mean square: {errors:?}"
    );
}
