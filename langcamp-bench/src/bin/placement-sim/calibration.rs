//! What an engine knows in the calibrated scenarios when the simulator calibrates it: the
//! difficulties (and, for the engine with the floor, the common slope) that its
//! calibration (`langcamp_core::placement::adaptive::calibrate`) estimates from answers.
//!
//! Other simulated students (the same spread over the levels, drawn apart from the ones
//! the table scores) take the *uncalibrated* adaptive test: every question at its level's
//! default difficulty (for the floor engine with the default slope and the floor of four
//! options). Their answers then calibrate the bank, in one of two ways
//! (`--calibration-abilities`):
//!
//! * `known`: each answer paired with the student's true ability (`calibrate_observed`):
//!   calibration as it would be if abilities were measured without error, with as many
//!   answers as needed. This is what the engine's model can at best make of the answers,
//!   as the true difficulties are for the Rasch engine under Rasch answers.
//! * `attempts`: from the finished attempts' answers alone, exactly as
//!   `langcamp placement calibrate` does (`calibrate_test`, which scores the attempts
//!   again; the scale held by the levels' default difficulties).
//!
//! The floor engine's calibration estimates the slope (`--fixed-slope` keeps one instead);
//! the Rasch engine's keeps the slope 1 and the floor 0, issue #34's calibration.

use langcamp_core::placement::adaptive::calibrate::{
    CalibratedSlope, Observation, QuestionAnswers, SlopeRule, calibrate_observed, calibrate_test,
};
use langcamp_core::placement::adaptive::model::{DEFAULT_SLOPE, Item, RASCH_SLOPE};
use rand::rngs::StdRng;

use super::{Args, Bank, Engine, Scenario, rule_of, students, take_adaptive};

/// The abilities calibration pairs with the answers.
#[derive(Clone, Copy, Debug, PartialEq, clap::ValueEnum)]
pub enum Abilities {
    /// The students' true abilities.
    Known,
    /// None: the attempts are scored again, as `langcamp placement calibrate` does.
    Attempts,
}

/// A calibration's outcome: the questions as the engine then sees them, and how they came.
pub struct Report {
    pub engine: Engine,
    pub items: Vec<Item>,
    pub slope: Option<CalibratedSlope>,
    /// Questions with enough answers to be calibrated.
    pub calibrated: usize,
    /// Answers observed, over the whole bank.
    pub answers: usize,
}

/// Calibrates `engine`'s bank from the attempts of other simulated students.
pub fn calibrate(
    args: &Args,
    scenario: Scenario,
    engine: Engine,
    bank: &Bank,
    rng: &mut StdRng,
) -> Report {
    let uncalibrated = bank.level_defaults(engine);
    let takers = students(args.calibration_students_per_level, rng);
    let rule = rule_of(args);
    let mut known: Vec<Vec<Observation>> = vec![Vec::new(); uncalibrated.len()];
    let mut attempts = Vec::new();
    for &student in &takers {
        let attempt = take_adaptive(
            scenario,
            bank,
            &uncalibrated,
            rule,
            args.top_k,
            student,
            rng,
        );
        for &(question, correct) in &attempt.answers {
            known[question].push(Observation::known(student.ability, correct));
        }
        attempts.push(attempt.answers);
    }
    let answers = known.iter().map(Vec::len).sum();
    let slope_rule = match (engine, args.fixed_slope) {
        (Engine::Rasch, _) => SlopeRule::Fixed(RASCH_SLOPE),
        (Engine::Floor, Some(slope)) => SlopeRule::Fixed(slope),
        (Engine::Floor, None) => SlopeRule::Estimate(DEFAULT_SLOPE),
    };
    let question = |item: &Item, observations: Vec<Observation>| QuestionAnswers {
        level_default: item.difficulty,
        difficulty: item.difficulty,
        floor: item.floor,
        observations,
    };
    let outcome = match args.calibration_abilities {
        Abilities::Known => {
            let questions: Vec<QuestionAnswers> = uncalibrated
                .iter()
                .zip(known)
                .map(|(item, observations)| question(item, observations))
                .collect();
            calibrate_observed(&questions, slope_rule)
        }
        Abilities::Attempts => {
            let questions: Vec<QuestionAnswers> = uncalibrated
                .iter()
                .map(|item| question(item, Vec::new()))
                .collect();
            calibrate_test(&questions, &attempts, slope_rule)
        }
    };
    let items = uncalibrated
        .iter()
        .zip(&outcome.questions)
        .map(|(item, calibrated)| Item {
            difficulty: calibrated.map_or(item.difficulty, |c| c.difficulty),
            slope: outcome.slope_used,
            floor: item.floor,
        })
        .collect();
    Report {
        engine,
        items,
        slope: outcome.slope,
        calibrated: outcome.questions.iter().flatten().count(),
        answers,
    }
}

/// One line per calibration: the slope, and how far the difficulties landed from the true
/// ones (mean difference and root mean square).
pub fn print(args: &Args, bank: &Bank, calibrations: &[(Scenario, Report)]) {
    if calibrations.is_empty() {
        return;
    }
    println!();
    println!(
        "Calibration ({} students per level, abilities {}):",
        args.calibration_students_per_level,
        match args.calibration_abilities {
            Abilities::Known => "known",
            Abilities::Attempts => "from the attempts",
        }
    );
    println!();
    for (scenario, report) in calibrations {
        let differences: Vec<f64> = report
            .items
            .iter()
            .zip(&bank.truth)
            .map(|(item, truth)| item.difficulty - truth)
            .collect();
        let n = differences.len() as f64;
        let mean = differences.iter().sum::<f64>() / n;
        let rms = (differences.iter().map(|d| d * d).sum::<f64>() / n).sqrt();
        let slope = match (report.slope, report.items.first()) {
            (Some(s), _) => format!("slope {:.2} ± {:.2}", s.slope, s.standard_error),
            (None, Some(item)) => format!("slope {} (kept)", item.slope),
            (None, None) => "no questions".to_owned(),
        };
        println!(
            "* {}, {}: {slope}; {} of {} questions calibrated from {} answers; difficulty \
             minus true difficulty: mean {mean:+.2}, root mean square {rms:.2}",
            scenario.name(),
            report.engine.name(),
            report.calibrated,
            report.items.len(),
            report.answers
        );
    }
}
