//! The item-response model: how likely a student of a given ability is to answer a
//! question of a given difficulty correctly, and how much one answer tells about the
//! ability.
//!
//! The model is the Rasch (one-parameter logistic, "1PL") model. Ability `θ` and difficulty
//! `b` live on one scale, in *logits*:
//!
//! ```text
//! P(correct | θ, b) = 1 / (1 + e^-(θ - b))
//! ```
//!
//! A student whose ability equals the question's difficulty has an even chance; one logit
//! above it, 73 %; two logits above, 88 %. Every question discriminates equally well (the
//! slope is 1); there is no guessing floor. `langcamp-bench`'s `placement-sim` measures
//! what happens when real answers follow another curve.

/// The probability that a student of `ability` answers a question of `difficulty`
/// correctly (both in logits).
pub fn p_correct(ability: f64, difficulty: f64) -> f64 {
    1.0 / (1.0 + (difficulty - ability).exp())
}

/// The Fisher information of one answer about the ability: `p (1 - p)` under the Rasch
/// model. It is largest (0.25) when the question's difficulty equals the ability, and falls
/// off on both sides: a question far too easy or far too hard tells little, since its
/// answer is nearly certain. The information of several answers adds up, and the standard
/// error of an ability estimate is about `1 / sqrt(total information)`.
pub fn information(ability: f64, difficulty: f64) -> f64 {
    let p = p_correct(ability, difficulty);
    p * (1.0 - p)
}

/// The log-likelihood of one answer: `ln P(correct)` for a right answer, `ln P(wrong)`
/// for a wrong one, computed without overflow for large differences.
pub fn log_likelihood(ability: f64, difficulty: f64, correct: bool) -> f64 {
    // ln(1 / (1 + e^-x)) = -ln(1 + e^-x), and ln P(wrong) is the same with -x.
    let x = ability - difficulty;
    let x = if correct { x } else { -x };
    -softplus(-x)
}

/// `ln(1 + e^x)`, accurate for any `x`.
fn softplus(x: f64) -> f64 {
    if x > 0.0 {
        x + (-x).exp().ln_1p()
    } else {
        x.exp().ln_1p()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-9
    }

    #[test]
    fn an_even_match_is_an_even_chance_and_ability_above_difficulty_helps() {
        assert!(close(p_correct(0.7, 0.7), 0.5));
        assert!(close(p_correct(1.0, 0.0), 0.731_058_578_630_004_9));
        assert!(close(p_correct(0.0, 1.0), 1.0 - 0.731_058_578_630_004_9));
        assert!(p_correct(2.0, 0.0) > p_correct(1.0, 0.0));
    }

    #[test]
    fn information_peaks_at_a_quarter_where_ability_meets_difficulty() {
        assert!(close(information(1.5, 1.5), 0.25));
        assert!(information(1.5, 0.5) < 0.25);
        // Symmetric: one logit too easy tells as much as one logit too hard.
        assert!(close(information(0.0, 1.0), information(0.0, -1.0)));
        assert!(information(0.0, 6.0) < 0.003);
    }

    #[test]
    fn log_likelihood_is_the_log_of_the_probability_even_far_out() {
        assert!(close(
            log_likelihood(0.3, -0.2, true),
            p_correct(0.3, -0.2).ln()
        ));
        assert!(close(
            log_likelihood(0.3, -0.2, false),
            (1.0 - p_correct(0.3, -0.2)).ln()
        ));
        // 800 logits away: the probability rounds to 0 but its log is still finite.
        assert!(close(log_likelihood(0.0, 800.0, true), -800.0));
        assert!(log_likelihood(0.0, 800.0, false).abs() < 1e-12);
    }
}
