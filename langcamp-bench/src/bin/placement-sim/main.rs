//! `placement-sim`: the adaptive placement test (`langcamp_core::placement::adaptive`)
//! against a fixed test, on simulated students whose true level is known, with two
//! engines side by side: the one `langcamp serve` runs, which models a guessing floor
//! (issue #44), and the Rasch engine before it (the same engine with no floor and a slope
//! of 1: [`Item::rasch`]).
//!
//! A bank of four-option questions per CEFR level; students spread evenly over the six
//! levels (their true ability uniform within their level's band, the outer levels one band
//! wide); each student takes the fixed test (the same questions for everyone, an equal
//! share per level) and the adaptive test, scored by each engine. The fixed test is scored
//! with the engine's EAP estimate and cut points, so it gets the best score bands its
//! questions allow. Every figure comes from seeded generators: the same arguments print
//! the same table. The Rasch engine's runs draw from the generator issue #34's simulator
//! drew from, in the same order, so its rows are that table's; the engine with the floor
//! draws from a second one. Scenarios (how students really answer):
//!
//! * `rasch`: the Rasch model, nobody guesses (a right answer by luck never happens, even
//!   with four options);
//! * `uncalibrated`: the Rasch model, with the engines knowing only each question's level;
//! * `3pl`: the three-parameter curve `c + (1 - c) / (1 + e^-a(θ - b))` with guessing
//!   `c = 0.25` and slope `a = 1.7`.
//!
//! What each engine knows about the questions, by scenario: see [`knowledge`].
//! `docs/BENCHMARKS.md` ("Adaptive placement") records the command and the table.

mod calibration;
mod report;

use clap::Parser;
use langcamp_core::domain::CefrLevel;
use langcamp_core::placement::adaptive::estimate::{Posterior, Response};
use langcamp_core::placement::adaptive::levels::{self, LEVEL_WIDTH};
use langcamp_core::placement::adaptive::model::{self, Item};
use langcamp_core::placement::adaptive::stop::{self, StopRule};
use langcamp_core::placement::adaptive::{Session, Step, select};
use rand::rngs::StdRng;
use rand::seq::SliceRandom;
use rand::{RngExt, SeedableRng};

use calibration::Abilities;

/// The adaptive placement test against a fixed test, on simulated students.
#[derive(Debug, Parser)]
struct Args {
    /// Simulated students per true level (six levels).
    #[arg(long, default_value_t = 1000)]
    students_per_level: usize,
    /// Questions per level in the bank.
    #[arg(long, default_value_t = 40)]
    bank_per_level: usize,
    /// Questions of the fixed test (an equal share per level; a multiple of 6).
    #[arg(long, default_value_t = 30)]
    fixed: usize,
    /// The adaptive test's maxQuestions.
    #[arg(long, default_value_t = stop::DEFAULT_MAX_QUESTIONS)]
    max_questions: usize,
    /// The adaptive test's standard-error target (logits).
    #[arg(long, default_value_t = stop::TARGET_ERROR)]
    target_error: f64,
    /// The adaptive test draws each next question among this many of the most informative.
    #[arg(long, default_value_t = select::TOP_K)]
    top_k: usize,
    /// The adaptive test's level rule: stop once ability ± Z × SE is inside one level (0: off).
    #[arg(long, default_value_t = stop::LEVEL_Z)]
    level_z: f64,
    /// Students per true level whose attempts at the uncalibrated test calibrate the bank.
    #[arg(long, default_value_t = 1000)]
    calibration_students_per_level: usize,
    /// What calibration pairs the answers with: the students' true abilities (`known`), or
    /// nothing but the attempts, as `langcamp placement calibrate` (`attempts`).
    #[arg(long, value_enum, default_value_t = Abilities::Known)]
    calibration_abilities: Abilities,
    /// Calibrate the floor engine with this slope instead of estimating one.
    #[arg(long)]
    fixed_slope: Option<f64>,
    /// Give the Rasch engine, in the calibrated scenarios, what its own calibration
    /// estimates rather than the true difficulties.
    #[arg(long)]
    calibrate_rasch_engine: bool,
    /// Also print each run's agreement per true level.
    #[arg(long)]
    by_level: bool,
    /// Also print, model true, fixed tests of other lengths and the adaptive test at other
    /// targets (maxQuestions 100).
    #[arg(long)]
    sweep: bool,
    /// The seed of every random draw.
    #[arg(long, default_value_t = 34)]
    seed: u64,
}

/// Every question of the simulated bank has four options: a floor of 0.25.
const OPTIONS: usize = 4;

/// How simulated students really answer.
#[derive(Clone, Copy, Debug)]
enum Scenario {
    Rasch,
    Uncalibrated,
    ThreePl { guessing: f64, slope: f64 },
}

/// The guessing students: four options, so a floor of 0.25, and a steeper curve.
const GUESSING_ANSWERS: Scenario = Scenario::ThreePl {
    guessing: 0.25,
    slope: 1.7,
};

impl Scenario {
    fn name(self) -> &'static str {
        match self {
            Scenario::Rasch => "Rasch, calibrated bank (model true)",
            Scenario::Uncalibrated => "Rasch, uncalibrated bank (level defaults)",
            Scenario::ThreePl { .. } => "3PL: guessing 0.25, slope 1.7",
        }
    }

    /// The curve a question of true difficulty `difficulty` really follows.
    fn truth(self, difficulty: f64) -> Item {
        match self {
            Scenario::Rasch | Scenario::Uncalibrated => Item::rasch(difficulty),
            Scenario::ThreePl { guessing, slope } => Item {
                difficulty,
                slope,
                floor: guessing,
            },
        }
    }
}

/// The two engines.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Engine {
    /// The engine `langcamp serve` runs: a floor of 1 / options, a calibrated common slope.
    Floor,
    /// The engine of issue #34: the Rasch model.
    Rasch,
}

impl Engine {
    fn name(self) -> &'static str {
        match self {
            Engine::Floor => "the engine with the floor",
            Engine::Rasch => "the Rasch engine",
        }
    }

    /// How the engine's rows name a test.
    fn label(self, test: &str) -> String {
        match self {
            Engine::Floor => test.to_owned(),
            Engine::Rasch => format!("{test} (Rasch engine)"),
        }
    }
}

/// The bank: each question's level and true difficulty.
struct Bank {
    levels: Vec<CefrLevel>,
    truth: Vec<f64>,
}

impl Bank {
    /// `per_level` questions per level, true difficulties uniform over the level's band
    /// around its default (± half a level).
    fn new(per_level: usize, rng: &mut StdRng) -> Bank {
        let mut levels_ = Vec::new();
        let mut truth = Vec::new();
        for level in CefrLevel::ALL {
            for _ in 0..per_level {
                let offset = rng.random_range(-0.5..0.5) * LEVEL_WIDTH;
                levels_.push(level);
                truth.push(levels::default_difficulty(level) + offset);
            }
        }
        Bank {
            levels: levels_,
            truth,
        }
    }

    /// The questions as `engine` sees them before any calibration: each at its level's
    /// default difficulty (with the floor engine's default slope and floor).
    fn level_defaults(&self, engine: Engine) -> Vec<Item> {
        self.levels
            .iter()
            .map(|&level| {
                let difficulty = levels::default_difficulty(level);
                match engine {
                    Engine::Rasch => Item::rasch(difficulty),
                    Engine::Floor => Item {
                        difficulty,
                        slope: model::DEFAULT_SLOPE,
                        floor: model::floor_for_options(OPTIONS),
                    },
                }
            })
            .collect()
    }
}

/// What `engine` knows about the questions in `scenario`:
///
/// * uncalibrated: each question's level (its default difficulty), both engines;
/// * otherwise, the Rasch engine knows each question's true difficulty, as in issue #34's
///   table (under Rasch answers that is what its calibration converges to; under 3PL
///   answers its calibration gives other difficulties, which absorb part of the guessing:
///   `--calibrate-rasch-engine` gives it those);
/// * the floor engine knows what its calibration (the floor fixed at 0.25) estimates from
///   the answers of other students who took the uncalibrated test ([`calibration`]).
fn knowledge(
    args: &Args,
    scenario: Scenario,
    engine: Engine,
    bank: &Bank,
    rng: &mut StdRng,
) -> (Vec<Item>, Option<calibration::Report>) {
    match (scenario, engine) {
        (Scenario::Uncalibrated, _) => (bank.level_defaults(engine), None),
        (_, Engine::Rasch) if !args.calibrate_rasch_engine => {
            (bank.truth.iter().map(|&b| Item::rasch(b)).collect(), None)
        }
        _ => {
            let report = calibration::calibrate(args, scenario, engine, bank, rng);
            (report.items.clone(), Some(report))
        }
    }
}

/// A simulated student: the true level and the true ability.
#[derive(Clone, Copy)]
struct Student {
    level: CefrLevel,
    ability: f64,
}

fn students(per_level: usize, rng: &mut StdRng) -> Vec<Student> {
    let mut all = Vec::new();
    for level in CefrLevel::ALL {
        let (low, high) = levels::band(level);
        // The open outer bands are taken one level wide.
        let (low, high) = match (low.is_finite(), high.is_finite()) {
            (false, _) => (high - LEVEL_WIDTH, high),
            (_, false) => (low, low + LEVEL_WIDTH),
            _ => (low, high),
        };
        for _ in 0..per_level {
            all.push(Student {
                level,
                ability: rng.random_range(low..high),
            });
        }
    }
    all
}

/// One student's placement: the level given and the number of questions asked.
struct Placement {
    level: CefrLevel,
    asked: usize,
}

/// The fixed test: the same questions for everyone, `n / 6` drawn at random per level.
fn fixed_questions(bank: &Bank, n: usize, rng: &mut StdRng) -> Vec<usize> {
    let mut chosen = Vec::new();
    for level in CefrLevel::ALL {
        let mut of_level: Vec<usize> = (0..bank.levels.len())
            .filter(|&i| bank.levels[i] == level)
            .collect();
        of_level.shuffle(rng);
        chosen.extend(of_level.into_iter().take(n / 6));
    }
    chosen
}

fn answer(scenario: Scenario, student: Student, truth: f64, rng: &mut StdRng) -> bool {
    rng.random::<f64>() < scenario.truth(truth).p_correct(student.ability)
}

fn take_fixed(
    scenario: Scenario,
    bank: &Bank,
    engine: &[Item],
    questions: &[usize],
    student: Student,
    rng: &mut StdRng,
) -> Placement {
    let mut posterior = Posterior::standard();
    for &q in questions {
        posterior.update(Response {
            item: engine[q],
            correct: answer(scenario, student, bank.truth[q], rng),
        });
    }
    Placement {
        level: levels::level_for(posterior.estimate().ability),
        asked: questions.len(),
    }
}

/// A finished adaptive attempt: the placement and the answers (question, right) in the
/// order asked.
struct Attempt {
    placement: Placement,
    answers: Vec<(usize, bool)>,
}

fn take_adaptive(
    scenario: Scenario,
    bank: &Bank,
    engine: &[Item],
    rule: StopRule,
    top_k: usize,
    student: Student,
    rng: &mut StdRng,
) -> Attempt {
    let mut session = Session::new(engine, rule).with_top_k(top_k);
    let mut answers = Vec::new();
    loop {
        match session.next(rng) {
            Step::Ask(q) => {
                let correct = answer(scenario, student, bank.truth[q], rng);
                session.answer(q, correct);
                answers.push((q, correct));
            }
            Step::Finished(outcome) => {
                return Attempt {
                    placement: Placement {
                        level: outcome.level,
                        asked: outcome.asked,
                    },
                    answers,
                };
            }
        }
    }
}

/// The stop rule of the arguments.
fn rule_of(args: &Args) -> StopRule {
    StopRule {
        target_error: args.target_error,
        min_questions: stop::MIN_QUESTIONS,
        max_questions: args.max_questions,
        level_z: args.level_z,
    }
}

/// One engine's runs in one scenario: its fixed and adaptive placements.
struct Run {
    scenario: Scenario,
    engine: Engine,
    fixed: Vec<Placement>,
    adaptive: Vec<Placement>,
}

/// Both tests of `students`, scored by an engine that knows `items`, drawing from `rng`.
fn run(
    args: &Args,
    (scenario, engine): (Scenario, Engine),
    (bank, items, fixed): (&Bank, &[Item], &[usize]),
    students: &[Student],
    rng: &mut StdRng,
) -> Run {
    let rule = rule_of(args);
    let fixed = students
        .iter()
        .map(|&s| take_fixed(scenario, bank, items, fixed, s, rng))
        .collect();
    let adaptive = students
        .iter()
        .map(|&s| take_adaptive(scenario, bank, items, rule, args.top_k, s, rng).placement)
        .collect();
    Run {
        scenario,
        engine,
        fixed,
        adaptive,
    }
}

/// A seed for the floor engine's generator, apart from the Rasch engine's.
fn floor_seed(seed: u64) -> u64 {
    seed ^ 0x9e37_79b9_7f4a_7c15
}

fn main() {
    let args = Args::parse();
    if args.fixed < 6 || args.fixed % 6 != 0 || args.fixed / 6 > args.bank_per_level {
        eprintln!("placement-sim: --fixed must be a multiple of 6, at most 6 × --bank-per-level");
        std::process::exit(2);
    }
    // The Rasch engine's generator: the draws of issue #34's simulator, in its order.
    let mut rng = StdRng::seed_from_u64(args.seed);
    let mut floor_rng = StdRng::seed_from_u64(floor_seed(args.seed));
    let bank = Bank::new(args.bank_per_level, &mut rng);
    let students = students(args.students_per_level, &mut rng);
    let fixed = fixed_questions(&bank, args.fixed, &mut rng);
    println!(
        "{} students ({} per level), bank of {} four-option questions ({} per level), seed {}",
        students.len(),
        args.students_per_level,
        bank.truth.len(),
        args.bank_per_level,
        args.seed
    );
    let scenarios = [Scenario::Rasch, Scenario::Uncalibrated, GUESSING_ANSWERS];
    let mut runs = Vec::new();
    let mut calibrations = Vec::new();
    let mut guessing_items = Vec::new();
    for scenario in scenarios {
        // Each engine draws from its own generator, so the order here changes no figure.
        let (floor_items, report) =
            knowledge(&args, scenario, Engine::Floor, &bank, &mut floor_rng);
        let tables = (&bank, floor_items.as_slice(), fixed.as_slice());
        let with_floor = run(
            &args,
            (scenario, Engine::Floor),
            tables,
            &students,
            &mut floor_rng,
        );
        let (items, rasch_report) = knowledge(&args, scenario, Engine::Rasch, &bank, &mut rng);
        let tables = (&bank, items.as_slice(), fixed.as_slice());
        let rasch = run(
            &args,
            (scenario, Engine::Rasch),
            tables,
            &students,
            &mut rng,
        );
        if let Scenario::ThreePl { .. } = scenario {
            guessing_items = floor_items;
        }
        runs.extend([with_floor, rasch]);
        calibrations.extend(
            [report, rasch_report]
                .into_iter()
                .flatten()
                .map(|r| (scenario, r)),
        );
    }
    report::print_tables(&args, &students, &runs);
    calibration::print(&args, &bank, &calibrations);
    if args.sweep {
        sweep(&args, &bank, &students, &mut rng);
        sweep_floor(&args, &bank, &guessing_items, &students, &mut floor_rng);
    }
}

/// Model true (Rasch answers, the Rasch engine knowing the true difficulties): fixed tests
/// of other lengths, and the adaptive test at other targets with and without the level
/// rule, as in issue #34.
fn sweep(args: &Args, bank: &Bank, students: &[Student], rng: &mut StdRng) {
    println!();
    println!(
        "Model true (Rasch, calibrated bank, Rasch engine): fixed tests of other lengths, and \
         the adaptive test at other targets with and without the level rule (z = 0: off):"
    );
    println!();
    println!("| test | exact level | within one level | mean questions | p95 questions |");
    println!("|---|---:|---:|---:|---:|");
    let engine: Vec<Item> = bank.truth.iter().map(|&b| Item::rasch(b)).collect();
    for n in [18, 24, 30, 36] {
        if n / 6 > args.bank_per_level {
            continue;
        }
        let questions = fixed_questions(bank, n, rng);
        let placements: Vec<Placement> = students
            .iter()
            .map(|&s| take_fixed(Scenario::Rasch, bank, &engine, &questions, s, rng))
            .collect();
        let s = report::summarise(students, &placements);
        println!(
            "| fixed, {n} questions | {:.1} % | {:.1} % | {:.1} | {} |",
            s.exact, s.within_one, s.mean_questions, s.p95_questions
        );
    }
    let targets = [0.45, 0.5, 0.55, 0.6];
    for (target, level_z) in targets
        .into_iter()
        .flat_map(|t| [0.0, stop::LEVEL_Z].map(|z| (t, z)))
    {
        let rule = StopRule {
            target_error: target,
            min_questions: stop::MIN_QUESTIONS,
            max_questions: 100,
            level_z,
        };
        let placements: Vec<Placement> = students
            .iter()
            .map(|&s| {
                take_adaptive(Scenario::Rasch, bank, &engine, rule, args.top_k, s, rng).placement
            })
            .collect();
        let s = report::summarise(students, &placements);
        println!(
            "| adaptive, SE ≤ {target}, level rule z = {level_z}, max 100 | {:.1} % | {:.1} % | {:.1} | {} |",
            s.exact, s.within_one, s.mean_questions, s.p95_questions
        );
    }
}

/// Guessing answers (3PL), the engine with the floor knowing what its calibration gave
/// (`items`): the adaptive test at other targets, with the level rule, `maxQuestions` 100,
/// so that only the error decides.
fn sweep_floor(args: &Args, bank: &Bank, items: &[Item], students: &[Student], rng: &mut StdRng) {
    println!();
    println!(
        "3PL answers (guessing 0.25, slope 1.7), the engine with the floor as calibrated above: \
         the adaptive test at other targets:"
    );
    println!();
    println!("| test | exact level | within one level | mean questions | p95 questions |");
    println!("|---|---:|---:|---:|---:|");
    let scenario = GUESSING_ANSWERS;
    for target in [0.4, 0.45, 0.5, 0.55, 0.6] {
        let rule = StopRule {
            target_error: target,
            min_questions: stop::MIN_QUESTIONS,
            max_questions: 100,
            level_z: stop::LEVEL_Z,
        };
        let placements: Vec<Placement> = students
            .iter()
            .map(|&s| take_adaptive(scenario, bank, items, rule, args.top_k, s, rng).placement)
            .collect();
        let s = report::summarise(students, &placements);
        println!(
            "| adaptive, SE ≤ {target}, level rule z = {}, max 100 | {:.1} % | {:.1} % | {:.1} | {} |",
            stop::LEVEL_Z,
            s.exact,
            s.within_one,
            s.mean_questions,
            s.p95_questions
        );
    }
}
