//! How the adaptive model (`adaptive/`) sees a stored test: each question as an
//! [`Item`] (its difficulty, the test's common slope and the guessing floor of its
//! options). The attempts and calibration build the model's input here, so the rules
//! (a calibrated value, else the default) live in one place.

use super::adaptive::levels::default_difficulty;
use super::adaptive::model::{self, Item};
use super::store::{StoredQuestion, StoredTest};
use crate::domain::CefrLevel;

impl StoredQuestion {
    /// The difficulty the model uses: the calibrated one, else the level's default (B1's
    /// for a question without a level, which only a fixed test has).
    pub fn effective_difficulty(&self) -> f64 {
        self.difficulty
            .unwrap_or_else(|| default_difficulty(self.level.unwrap_or(CefrLevel::B1)))
    }

    /// The question as the model sees it in a test of `slope`: its difficulty, and the
    /// floor of its options (1 / their number).
    pub fn item(&self, slope: f64) -> Item {
        Item {
            difficulty: self.effective_difficulty(),
            slope,
            floor: model::floor_for_options(self.options.len()),
        }
    }
}

impl StoredTest {
    /// The common slope of the test's questions (adaptive tests): calibrated, else the
    /// model's default.
    pub fn slope(&self) -> f64 {
        self.slope.unwrap_or(model::DEFAULT_SLOPE)
    }
}
