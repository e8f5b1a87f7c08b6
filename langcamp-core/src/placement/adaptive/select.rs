//! Choosing the next question: the most informative one not yet asked, at random among the
//! best few.
//!
//! Each question not yet asked is scored by its information at the current ability
//! estimate (`model::Item::information`: highest for a question whose difficulty is near the
//! estimate; with a guessing floor, for one a little below it, since a right answer to a
//! question above the student is too often luck). The [`TOP_K`] best are kept and one of them is drawn at random, each equally
//! likely. Without the draw, every student would start with the same question and, while
//! their answers agree, see the same sequence; the draw spreads the use of the bank (and
//! of the answer key) over more questions at a small cost in information. Questions of the
//! same difficulty (the same level, before calibration) tie; ties are broken at random
//! too, so the draw is among all of them, not the first few in the bank.

use rand::{Rng, RngExt};

use super::model::Item;

/// How many of the most informative questions the next one is drawn from.
pub const TOP_K: usize = 5;

/// The index (into `items`) of the next question to ask, or `None` when every
/// question has been asked. `asked` lists the indices already asked; `top_k` is how many of
/// the best the draw is among (1: always the most informative).
pub fn next_question<R: Rng + ?Sized>(
    ability: f64,
    items: &[Item],
    asked: &[usize],
    top_k: usize,
    rng: &mut R,
) -> Option<usize> {
    // (information, a random tie-breaker, index) for every question still available.
    let mut candidates: Vec<(f64, u64, usize)> = items
        .iter()
        .enumerate()
        .filter(|(index, _)| !asked.contains(index))
        .map(|(index, item)| (item.information(ability), rng.random(), index))
        .collect();
    if candidates.is_empty() {
        return None;
    }
    // Most informative first; equal information in random order.
    candidates.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
    let best = top_k.clamp(1, candidates.len());
    let pick = rng.random_range(0..best);
    Some(candidates[pick].2)
}

#[cfg(test)]
mod tests {
    use std::collections::HashSet;

    use rand::SeedableRng;
    use rand::rngs::StdRng;

    use super::*;

    const BANK: [Item; 7] = [
        Item::rasch(-3.0),
        Item::rasch(-2.0),
        Item::rasch(-1.0),
        Item::rasch(0.0),
        Item::rasch(1.0),
        Item::rasch(2.0),
        Item::rasch(3.0),
    ];

    #[test]
    fn with_no_draw_the_question_nearest_the_ability_comes_next() {
        let mut rng = StdRng::seed_from_u64(1);
        assert_eq!(next_question(0.9, &BANK, &[], 1, &mut rng), Some(4));
        assert_eq!(next_question(-2.2, &BANK, &[], 1, &mut rng), Some(1));
        // Once asked, the next nearest.
        assert_eq!(next_question(0.9, &BANK, &[4], 1, &mut rng), Some(3));
    }

    #[test]
    fn a_question_already_asked_never_comes_again_and_an_exhausted_bank_gives_none() {
        let mut rng = StdRng::seed_from_u64(2);
        let mut asked = Vec::new();
        while let Some(next) = next_question(0.0, &BANK, &asked, 3, &mut rng) {
            assert!(!asked.contains(&next));
            asked.push(next);
        }
        assert_eq!(asked.len(), BANK.len());
    }

    #[test]
    fn the_draw_is_among_the_top_k_only_and_uses_all_of_them() {
        let mut rng = StdRng::seed_from_u64(3);
        let seen: HashSet<usize> = (0..200)
            .filter_map(|_| next_question(0.1, &BANK, &[], 3, &mut rng))
            .collect();
        // At 0.1 the three most informative are 0.0, 1.0 and -1.0.
        assert_eq!(seen, HashSet::from([3, 4, 2]));
    }

    #[test]
    fn ties_are_drawn_from_all_the_tied_questions_not_the_first_in_the_bank() {
        let mut rng = StdRng::seed_from_u64(4);
        let level = [Item::rasch(0.5); 20];
        let seen: HashSet<usize> = (0..400)
            .filter_map(|_| next_question(0.0, &level, &[], 2, &mut rng))
            .collect();
        assert_eq!(seen.len(), 20);
    }

    #[test]
    fn the_same_seed_gives_the_same_choice() {
        let a = next_question(0.0, &BANK, &[], 5, &mut StdRng::seed_from_u64(9));
        let b = next_question(0.0, &BANK, &[], 5, &mut StdRng::seed_from_u64(9));
        assert_eq!(a, b);
    }

    #[test]
    fn with_a_floor_a_question_a_little_easier_than_the_estimate_comes_first() {
        // At 0.6 the Rasch model asks the nearest question, 1.0. With four options a right
        // answer to it is too often luck, and the 0.0 question tells more.
        let mut rng = StdRng::seed_from_u64(1);
        assert_eq!(next_question(0.6, &BANK, &[], 1, &mut rng), Some(4));
        let bank = BANK.map(|item| Item {
            floor: 0.25,
            ..item
        });
        assert_eq!(next_question(0.6, &bank, &[], 1, &mut rng), Some(3));
    }
}
