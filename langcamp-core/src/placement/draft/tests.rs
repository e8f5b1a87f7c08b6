//! Checks of a test draft: reachable scores, level ranges, questions and options.

use super::*;

fn range(min: i64, max: i64) -> StoredRange {
    StoredRange {
        level: "L".into(),
        min_score: min,
        max_score: max,
        message: String::new(),
    }
}

#[test]
fn reachable_scores_are_the_subset_sums_of_the_points() {
    let r = Reachable::of(&[2, 2, 5]);
    let reachable: Vec<i64> = (0..=9).filter(|&s| r.contains(s)).collect();
    assert_eq!(reachable, vec![0, 2, 4, 5, 7, 9]);
    let big = Reachable::of(&[1000; 200]);
    assert!(big.contains(200_000));
    assert!(big.contains(64_000));
    assert!(!big.contains(64_001));
    let across_words = Reachable::of(&[63, 65, 1]);
    let got: Vec<i64> = (0..=129).filter(|&s| across_words.contains(s)).collect();
    assert_eq!(got, vec![0, 1, 63, 64, 65, 66, 128, 129]);
}

#[test]
fn unreachable_scores_may_stay_uncovered() {
    // Points 2 and 2: reachable 0, 2, 4; 1 and 3 need no range.
    let ranges = [range(0, 0), range(2, 2), range(4, 4)];
    assert!(uncovered_reachable(&ranges, &[2, 2]).is_empty());
    let ranges = [range(0, 0), range(4, 4)];
    assert_eq!(uncovered_reachable(&ranges, &[2, 2]), vec![(2, 2)]);
}

#[test]
fn gaps_report_their_lowest_and_highest_reachable_score() {
    let ranges = [range(0, 1), range(7, 10)];
    assert_eq!(uncovered_reachable(&ranges, &[1; 10]), vec![(2, 6)]);
    let ranges = [range(1, 10)];
    assert_eq!(uncovered_reachable(&ranges, &[1; 10]), vec![(0, 0)]);
    let ranges = [range(0, 8)];
    assert_eq!(uncovered_reachable(&ranges, &[1; 10]), vec![(9, 10)]);
    let ranges = [range(0, 3), range(20, 30)];
    assert_eq!(uncovered_reachable(&ranges, &[3, 3]), vec![(6, 6)]);
}

#[test]
fn overlaps_are_reported_per_pair() {
    let mut problems = Problems::new();
    check_ranges(
        &mut problems,
        &[range(0, 5), range(5, 9), range(8, 10)],
        None,
    );
    match problems.finish() {
        Err(crate::Error::Validation(messages)) => assert_eq!(
            messages,
            vec![
                "levelRanges[0] and levelRanges[1] overlap (score 5)",
                "levelRanges[1] and levelRanges[2] overlap (scores 8 to 9)",
            ]
        ),
        other => panic!("expected two overlaps, got {other:?}"),
    }
}
