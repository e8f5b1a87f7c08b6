//! `placement-sim`: the adaptive placement test (`langcamp_core::placement::adaptive`)
//! against a fixed test, on simulated students whose true level is known.
//!
//! A bank of questions per CEFR level; students spread evenly over the six levels (their
//! true ability uniform within their level's band, the outer levels one band wide); each
//! student takes the fixed test (the same questions for everyone, an equal share per
//! level) and the adaptive test (the engine as `langcamp serve` runs it). Both are scored
//! with the same EAP estimate and cut points, so the fixed test gets the best score bands
//! its questions allow. Every figure comes from one seeded generator: the same arguments
//! print the same table. Scenarios:
//!
//! * `rasch`: answers follow the Rasch model with the bank's true difficulties, which the
//!   engine knows (a calibrated bank): the model is true;
//! * `uncalibrated`: answers follow the Rasch model, but the engine only knows each
//!   question's level (its default difficulty), while the true difficulties are spread
//!   over the level's band;
//! * `3pl`: answers follow a three-parameter curve, `c + (1 - c) / (1 + e^-a(θ - b))`
//!   with guessing `c = 0.25` and slope `a = 1.7`, which the engine does not model.
//!
//! `docs/BENCHMARKS.md` ("Adaptive placement") records the command and the table.

use clap::Parser;
use langcamp_core::domain::CefrLevel;
use langcamp_core::placement::adaptive::estimate::{Posterior, Response};
use langcamp_core::placement::adaptive::levels::{self, LEVEL_WIDTH};
use langcamp_core::placement::adaptive::stop::{self, StopRule};
use langcamp_core::placement::adaptive::{Session, Step, model, select};
use rand::rngs::StdRng;
use rand::seq::SliceRandom;
use rand::{RngExt, SeedableRng};

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

/// How simulated students really answer.
#[derive(Clone, Copy, Debug)]
enum Scenario {
    Rasch,
    Uncalibrated,
    ThreePl { guessing: f64, slope: f64 },
}

impl Scenario {
    fn name(self) -> &'static str {
        match self {
            Scenario::Rasch => "Rasch, calibrated bank (model true)",
            Scenario::Uncalibrated => "Rasch, uncalibrated bank (level defaults)",
            Scenario::ThreePl { .. } => "3PL: guessing 0.25, slope 1.7",
        }
    }

    fn p_correct(self, ability: f64, difficulty: f64) -> f64 {
        match self {
            Scenario::Rasch | Scenario::Uncalibrated => model::p_correct(ability, difficulty),
            Scenario::ThreePl { guessing, slope } => {
                guessing + (1.0 - guessing) / (1.0 + (-slope * (ability - difficulty)).exp())
            }
        }
    }
}

/// The bank: each question's level, true difficulty, and the difficulty the engine uses.
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

    /// The difficulties the engine works with in `scenario`.
    fn engine(&self, scenario: Scenario) -> Vec<f64> {
        match scenario {
            Scenario::Uncalibrated => self
                .levels
                .iter()
                .map(|&l| levels::default_difficulty(l))
                .collect(),
            _ => self.truth.clone(),
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
    rng.random::<f64>() < scenario.p_correct(student.ability, truth)
}

fn take_fixed(
    scenario: Scenario,
    bank: &Bank,
    engine: &[f64],
    questions: &[usize],
    student: Student,
    rng: &mut StdRng,
) -> Placement {
    let mut posterior = Posterior::standard();
    for &q in questions {
        posterior.update(Response {
            difficulty: engine[q],
            correct: answer(scenario, student, bank.truth[q], rng),
        });
    }
    Placement {
        level: levels::level_for(posterior.estimate().ability),
        asked: questions.len(),
    }
}

fn take_adaptive(
    scenario: Scenario,
    bank: &Bank,
    engine: &[f64],
    rule: StopRule,
    top_k: usize,
    student: Student,
    rng: &mut StdRng,
) -> Placement {
    let mut session = Session::new(engine, rule).with_top_k(top_k);
    loop {
        match session.next(rng) {
            Step::Ask(q) => {
                let correct = answer(scenario, student, bank.truth[q], rng);
                session.answer(q, correct);
            }
            Step::Finished(outcome) => {
                return Placement {
                    level: outcome.level,
                    asked: outcome.asked,
                };
            }
        }
    }
}

/// Agreement with the true level and the number of questions, over all students.
struct Summary {
    exact: f64,
    within_one: f64,
    mean_questions: f64,
    p95_questions: usize,
}

fn summarise(students: &[Student], placements: &[Placement]) -> Summary {
    let n = students.len() as f64;
    let rank = |l: CefrLevel| levels::level_rank(l) as i64;
    let exact = students
        .iter()
        .zip(placements)
        .filter(|(s, p)| s.level == p.level)
        .count() as f64;
    let within_one = students
        .iter()
        .zip(placements)
        .filter(|(s, p)| (rank(s.level) - rank(p.level)).abs() <= 1)
        .count() as f64;
    let mut asked: Vec<usize> = placements.iter().map(|p| p.asked).collect();
    asked.sort_unstable();
    // Nearest rank: the smallest value with at least 95 % of the students at or below it.
    let p95_index = ((0.95 * asked.len() as f64).ceil() as usize).saturating_sub(1);
    Summary {
        exact: 100.0 * exact / n,
        within_one: 100.0 * within_one / n,
        mean_questions: asked.iter().sum::<usize>() as f64 / n,
        p95_questions: asked.get(p95_index).copied().unwrap_or_default(),
    }
}

/// For the students of one true level: `exact (higher, lower)` in percent.
fn by_level(students: &[Student], placements: &[Placement], level: CefrLevel) -> String {
    let (mut n, mut exact, mut higher, mut lower) = (0, 0, 0, 0);
    for (s, p) in students.iter().zip(placements) {
        if s.level != level {
            continue;
        }
        n += 1;
        match p.level.cmp(&level) {
            std::cmp::Ordering::Equal => exact += 1,
            std::cmp::Ordering::Greater => higher += 1,
            std::cmp::Ordering::Less => lower += 1,
        }
    }
    let pct = |k: i32| 100.0 * f64::from(k) / f64::from(n.max(1));
    format!("{:.0} ({:.0}, {:.0})", pct(exact), pct(higher), pct(lower))
}

fn row(scenario: &str, test: &str, s: &Summary) {
    println!(
        "| {scenario} | {test} | {:.1} % | {:.1} % | {:.1} | {} |",
        s.exact, s.within_one, s.mean_questions, s.p95_questions
    );
}

fn main() {
    let args = Args::parse();
    if args.fixed < 6 || args.fixed % 6 != 0 || args.fixed / 6 > args.bank_per_level {
        eprintln!("placement-sim: --fixed must be a multiple of 6, at most 6 × --bank-per-level");
        std::process::exit(2);
    }
    let mut rng = StdRng::seed_from_u64(args.seed);
    let bank = Bank::new(args.bank_per_level, &mut rng);
    let students = students(args.students_per_level, &mut rng);
    let fixed = fixed_questions(&bank, args.fixed, &mut rng);
    let rule = StopRule {
        target_error: args.target_error,
        min_questions: stop::MIN_QUESTIONS,
        max_questions: args.max_questions,
        level_z: args.level_z,
    };
    println!(
        "{} students ({} per level), bank of {} questions ({} per level), seed {}",
        students.len(),
        args.students_per_level,
        bank.truth.len(),
        args.bank_per_level,
        args.seed
    );
    println!();
    println!(
        "| answers follow | test | exact level | within one level | mean questions | p95 questions |"
    );
    println!("|---|---|---:|---:|---:|---:|");
    let scenarios = [
        Scenario::Rasch,
        Scenario::Uncalibrated,
        Scenario::ThreePl {
            guessing: 0.25,
            slope: 1.7,
        },
    ];
    let adaptive_name = format!(
        "adaptive (SE ≤ {}, level rule z = {}, max {})",
        args.target_error, args.level_z, args.max_questions
    );
    let mut runs = Vec::new();
    for scenario in scenarios {
        let engine = bank.engine(scenario);
        let fixed_placements: Vec<Placement> = students
            .iter()
            .map(|&s| take_fixed(scenario, &bank, &engine, &fixed, s, &mut rng))
            .collect();
        let adaptive_placements: Vec<Placement> = students
            .iter()
            .map(|&s| take_adaptive(scenario, &bank, &engine, rule, args.top_k, s, &mut rng))
            .collect();
        let name = scenario.name();
        row(
            name,
            &format!("fixed, {} questions", args.fixed),
            &summarise(&students, &fixed_placements),
        );
        row(
            name,
            &adaptive_name,
            &summarise(&students, &adaptive_placements),
        );
        runs.push((name, "fixed", fixed_placements));
        runs.push((name, "adaptive", adaptive_placements));
    }
    if args.by_level {
        println!();
        println!(
            "By true level: placed exactly, % (placed higher, placed lower), {} students each:",
            args.students_per_level
        );
        println!();
        println!("| answers follow | test | A1 | A2 | B1 | B2 | C1 | C2 |");
        println!("|---|---|---:|---:|---:|---:|---:|---:|");
        for (name, test, placements) in &runs {
            let cells: Vec<String> = CefrLevel::ALL
                .iter()
                .map(|&level| by_level(&students, placements, level))
                .collect();
            println!("| {name} | {test} | {} |", cells.join(" | "));
        }
    }
    if args.sweep {
        println!();
        println!(
            "Model true (Rasch, calibrated bank): fixed tests of other lengths, and the adaptive \
             test at other targets with and without the level rule (z = 0: off):"
        );
        println!();
        println!("| test | exact level | within one level | mean questions | p95 questions |");
        println!("|---|---:|---:|---:|---:|");
        let engine = bank.engine(Scenario::Rasch);
        for n in [18, 24, 30, 36] {
            if n / 6 > args.bank_per_level {
                continue;
            }
            let questions = fixed_questions(&bank, n, &mut rng);
            let placements: Vec<Placement> = students
                .iter()
                .map(|&s| take_fixed(Scenario::Rasch, &bank, &engine, &questions, s, &mut rng))
                .collect();
            let s = summarise(&students, &placements);
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
                    take_adaptive(
                        Scenario::Rasch,
                        &bank,
                        &engine,
                        rule,
                        args.top_k,
                        s,
                        &mut rng,
                    )
                })
                .collect();
            let s = summarise(&students, &placements);
            println!(
                "| adaptive, SE ≤ {target}, level rule z = {level_z}, max 100 | {:.1} % | {:.1} % | {:.1} | {} |",
                s.exact, s.within_one, s.mean_questions, s.p95_questions
            );
        }
    }
}
