//! CEFR levels on the ability scale: the difficulty a question of a level starts with, and
//! the cut points that turn a final ability into a level.
//!
//! The six levels are placed [`LEVEL_WIDTH`] logits apart, centred on 0:
//!
//! | level | default difficulty | abilities placed at this level |
//! |---|---:|---|
//! | A1 | -3.75 | below -3.0 |
//! | A2 | -2.25 | -3.0 to -1.5 |
//! | B1 | -0.75 | -1.5 to 0.0 |
//! | B2 | 0.75 | 0.0 to 1.5 |
//! | C1 | 2.25 | 1.5 to 3.0 |
//! | C2 | 3.75 | 3.0 and above |
//!
//! A question of a level starts with the difficulty at the middle of that level's band: a
//! student in the middle of B1 knows the answer to a typical B1 question half of the time
//! (and, guessing the rest, answers a four-option one right five times in eight; issue #34's
//! Rasch model, without the guessing, said "answers right half of the time"). These
//! defaults are also what holds the scale in place when calibration moves the questions
//! (`calibrate.rs`, "What holds the scale"). The cut points are the band edges, half-way between two levels' default difficulties. An
//! ability exactly on a cut point gets the higher level.
//!
//! Why 1.5 logits: Rasch-scaled language tests linked to the CEFR put neighbouring levels
//! roughly 1 to 2 logits apart; 1.5 is a middle value. It is a starting point, not a
//! measurement: once calibration (`calibrate.rs`) has put real difficulties on the
//! questions, the cut points should be set again from them (standard setting), and this
//! table changed with the simulation in `docs/BENCHMARKS.md` run again.

use crate::domain::CefrLevel;

/// The distance, in logits, between the middles of two neighbouring levels.
pub const LEVEL_WIDTH: f64 = 1.5;

/// The difficulty a question of `level` has until calibration gives it its own.
pub fn default_difficulty(level: CefrLevel) -> f64 {
    let rank = level_rank(level) as f64; // 0 for A1 .. 5 for C2
    (rank - 2.5) * LEVEL_WIDTH
}

/// The five cut points between A1|A2, A2|B1, B1|B2, B2|C1 and C1|C2, lowest first.
pub fn cut_points() -> [f64; 5] {
    [1.0, 2.0, 3.0, 4.0, 5.0].map(|k| (k - 3.0) * LEVEL_WIDTH)
}

/// The level of a final ability: the band between two cut points it falls in.
pub fn level_for(ability: f64) -> CefrLevel {
    let passed = cut_points().iter().filter(|&&cut| ability >= cut).count();
    CefrLevel::ALL[passed]
}

/// The abilities of `level`'s band: `(low, high)`, the outer levels open-ended
/// (`f64::NEG_INFINITY` below A1, `f64::INFINITY` above C2).
pub fn band(level: CefrLevel) -> (f64, f64) {
    let cuts = cut_points();
    let rank = level_rank(level);
    let low = if rank == 0 {
        f64::NEG_INFINITY
    } else {
        cuts[rank - 1]
    };
    let high = cuts.get(rank).copied().unwrap_or(f64::INFINITY);
    (low, high)
}

/// 0 for A1 up to 5 for C2.
pub fn level_rank(level: CefrLevel) -> usize {
    CefrLevel::ALL
        .iter()
        .position(|&l| l == level)
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_difficulties_step_up_by_the_level_width_around_zero() {
        let got = CefrLevel::ALL.map(default_difficulty);
        assert_eq!(got, [-3.75, -2.25, -0.75, 0.75, 2.25, 3.75]);
    }

    #[test]
    fn each_level_s_default_difficulty_is_placed_at_that_level() {
        for level in CefrLevel::ALL {
            assert_eq!(level_for(default_difficulty(level)), level);
        }
    }

    #[test]
    fn cut_points_lie_half_way_and_an_ability_on_one_gets_the_higher_level() {
        assert_eq!(cut_points(), [-3.0, -1.5, 0.0, 1.5, 3.0]);
        assert_eq!(level_for(-1.5), CefrLevel::B1);
        assert_eq!(level_for(-1.500_001), CefrLevel::A2);
        assert_eq!(level_for(0.0), CefrLevel::B2);
        assert_eq!(level_for(-40.0), CefrLevel::A1);
        assert_eq!(level_for(40.0), CefrLevel::C2);
    }

    #[test]
    fn bands_are_the_cut_points_with_open_outer_ends() {
        assert_eq!(band(CefrLevel::A1), (f64::NEG_INFINITY, -3.0));
        assert_eq!(band(CefrLevel::B2), (0.0, 1.5));
        assert_eq!(band(CefrLevel::C2), (3.0, f64::INFINITY));
    }
}
