//! The simulator's tables: agreement with the true level, and the number of questions.

use langcamp_core::domain::CefrLevel;
use langcamp_core::placement::adaptive::levels;

use super::{Args, Engine, Placement, Run, Student};

/// Agreement with the true level and the number of questions, over all students.
pub struct Summary {
    pub exact: f64,
    pub within_one: f64,
    pub mean_questions: f64,
    pub p95_questions: usize,
}

pub fn summarise(students: &[Student], placements: &[Placement]) -> Summary {
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

/// The main table and, with `--by-level`, agreement per true level. Each scenario's rows:
/// the fixed test scored by the floor engine then by the Rasch engine, then the adaptive
/// test the same way (`runs` holds each scenario's two engines in that order).
pub fn print_tables(args: &Args, students: &[Student], runs: &[Run]) {
    println!();
    println!(
        "| answers follow | test | exact level | within one level | mean questions | p95 questions |"
    );
    println!("|---|---|---:|---:|---:|---:|");
    let adaptive_rule = format!(
        "SE ≤ {}, level rule z = {}, max {}",
        args.target_error, args.level_z, args.max_questions
    );
    let fixed = format!("fixed, {} questions", args.fixed);
    for pair in runs.chunks(2) {
        for r in pair {
            row(
                r.scenario.name(),
                &r.engine.label(&fixed),
                &summarise(students, &r.fixed),
            );
        }
        for r in pair {
            let adaptive = match r.engine {
                Engine::Floor => format!("adaptive ({adaptive_rule})"),
                Engine::Rasch => format!("adaptive (Rasch engine, {adaptive_rule})"),
            };
            row(
                r.scenario.name(),
                &adaptive,
                &summarise(students, &r.adaptive),
            );
        }
    }
    if !args.by_level {
        return;
    }
    println!();
    println!(
        "By true level: placed exactly, % (placed higher, placed lower), {} students each:",
        args.students_per_level
    );
    println!();
    println!("| answers follow | test | A1 | A2 | B1 | B2 | C1 | C2 |");
    println!("|---|---|---:|---:|---:|---:|---:|---:|");
    for pair in runs.chunks(2) {
        for test in ["fixed", "adaptive"] {
            for r in pair {
                let placements = if test == "fixed" {
                    &r.fixed
                } else {
                    &r.adaptive
                };
                let cells: Vec<String> = CefrLevel::ALL
                    .iter()
                    .map(|&level| by_level(students, placements, level))
                    .collect();
                println!(
                    "| {} | {} | {} |",
                    r.scenario.name(),
                    r.engine.label(test),
                    cells.join(" | ")
                );
            }
        }
    }
}
