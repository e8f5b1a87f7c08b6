//! Level ranges: parsed, then checked against each other and against the scores a taker
//! can reach (see the module above).

use super::*;

pub(super) fn parse_ranges(
    problems: &mut Problems,
    inputs: Vec<LevelRangeInput>,
) -> Option<Vec<StoredRange>> {
    if !list_length_ok(
        problems,
        "levelRanges",
        "range",
        inputs.len(),
        MAX_LEVEL_RANGES,
    ) {
        return None;
    }
    let before = problems.len();
    let mut drafts = Vec::with_capacity(inputs.len());
    for (i, input) in inputs.into_iter().enumerate() {
        let path = format!("levelRanges[{i}]");
        let level = problems.take(validate::text(
            &format!("{path}.level"),
            input.level.as_deref(),
            1,
            LEVEL_MAX,
        ));
        let message = problems.take(
            validate::optional_multiline_text(
                &format!("{path}.message"),
                input.message.as_deref(),
                MESSAGE_MAX,
            )
            .map(Option::unwrap_or_default),
        );
        let min = match input.min_score {
            None => {
                problems.add(format!("{path}.minScore is required"));
                None
            }
            Some(min) if min < 0 => {
                problems.add(format!("{path}.minScore must be 0 or more"));
                None
            }
            Some(min) => Some(min),
        };
        let max = match (input.max_score, min) {
            (None, _) => {
                problems.add(format!("{path}.maxScore is required"));
                None
            }
            (Some(max), Some(min)) if max < min => {
                problems.add(format!("{path}.maxScore must not be less than minScore"));
                None
            }
            (Some(max), _) if max < 0 => {
                problems.add(format!("{path}.maxScore must be 0 or more"));
                None
            }
            (Some(max), _) => Some(max),
        };
        if let (Some(level), Some(message), Some(min_score), Some(max_score)) =
            (level, message, min, max)
        {
            drafts.push(StoredRange {
                level,
                min_score,
                max_score,
                message,
            });
        }
    }
    (problems.len() == before).then_some(drafts)
}

/// No two ranges overlap, and (when the questions are valid) every reachable score has a range.
pub(super) fn check_ranges(
    problems: &mut Problems,
    ranges: &[StoredRange],
    questions: Option<&[QuestionDraft]>,
) {
    let mut overlapping = false;
    for (i, a) in ranges.iter().enumerate() {
        for (j, b) in ranges.iter().enumerate().skip(i + 1) {
            if a.min_score <= b.max_score && b.min_score <= a.max_score {
                overlapping = true;
                let from = a.min_score.max(b.min_score);
                let to = a.max_score.min(b.max_score);
                problems.add(format!(
                    "levelRanges[{i}] and levelRanges[{j}] overlap ({})",
                    describe_scores("score", from, to)
                ));
            }
        }
    }
    let Some(questions) = questions else {
        return;
    };
    if overlapping {
        // Coverage is judged once the ranges are disjoint; one problem at a time.
        return;
    }
    let points: Vec<i64> = questions.iter().map(|q| q.points).collect();
    for (from, to) in uncovered_reachable(ranges, &points) {
        problems.add(format!(
            "levelRanges must cover every reachable score, but no range covers {}",
            describe_scores("the reachable score", from, to)
        ));
    }
}

pub(super) fn describe_scores(noun: &str, from: i64, to: i64) -> String {
    if from == to {
        format!("{noun} {from}")
    } else {
        format!("{noun}s {from} to {to}")
    }
}

/// The scores a taker can reach: bit `s` is set when some set of questions sums to `s`.
pub(super) struct Reachable {
    bits: Vec<u64>,
    max: i64,
}

impl Reachable {
    pub fn of(points: &[i64]) -> Reachable {
        let max: i64 = points.iter().sum::<i64>().max(0);
        let len = usize::try_from(max).unwrap_or(0) + 1;
        let mut bits = vec![0u64; len.div_ceil(64)];
        bits[0] = 1;
        for &p in points {
            let Ok(p) = usize::try_from(p) else { continue };
            if p == 0 {
                continue;
            }
            let (words, shift) = (p / 64, p % 64);
            // In place from the top: each word reads only words at or below itself.
            for i in (0..bits.len()).rev() {
                let mut add = 0u64;
                if i >= words {
                    add |= bits[i - words] << shift;
                    if shift != 0 && i > words {
                        add |= bits[i - words - 1] >> (64 - shift);
                    }
                }
                bits[i] |= add;
            }
        }
        Reachable { bits, max }
    }

    pub fn contains(&self, score: i64) -> bool {
        if !(0..=self.max).contains(&score) {
            return false;
        }
        let s = usize::try_from(score).unwrap_or(0);
        self.bits
            .get(s / 64)
            .is_some_and(|w| w >> (s % 64) & 1 == 1)
    }

    /// The lowest and highest reachable score within `from..=to`, if any.
    fn span(&self, from: i64, to: i64) -> Option<(i64, i64)> {
        let to = to.min(self.max);
        let low = (from.max(0)..=to).find(|&s| self.contains(s))?;
        let high = (low..=to).rev().find(|&s| self.contains(s))?;
        Some((low, high))
    }
}

/// Runs of reachable scores (lowest and highest of each gap between ranges) that no range covers.
pub(super) fn uncovered_reachable(ranges: &[StoredRange], points: &[i64]) -> Vec<(i64, i64)> {
    let reachable = Reachable::of(points);
    let mut sorted: Vec<(i64, i64)> = ranges.iter().map(|r| (r.min_score, r.max_score)).collect();
    sorted.sort_unstable();
    let mut gaps = Vec::new();
    let mut next = 0i64;
    for (min, max) in sorted {
        if next > reachable.max {
            break;
        }
        if min > next {
            gaps.push((next, min - 1));
        }
        next = next.max(max.saturating_add(1));
    }
    if next <= reachable.max {
        gaps.push((next, reachable.max));
    }
    gaps.into_iter()
        .filter_map(|(from, to)| reachable.span(from, to))
        .collect()
}
