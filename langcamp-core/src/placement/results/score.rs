//! Scoring a submission, and the snapshot of the test stored with its result.

use std::collections::HashMap;

use super::input::Answer;
use super::{ResultRecord, Scores, SnapshotItem};
use crate::placement::store::StoredTest;
use crate::users;

/// Scores the answers: every question of the test in order, the chosen option (if any),
/// whether it is the correct one; and the total of the points of the right answers.
pub(super) fn score(test: &StoredTest, answers: &[Answer]) -> (i64, Vec<SnapshotItem>) {
    let chosen: HashMap<usize, usize> = answers.iter().map(|a| (a.question, a.option)).collect();
    let mut total = 0;
    let items = test
        .questions
        .iter()
        .enumerate()
        .map(|(index, question)| {
            let selected = chosen
                .get(&index)
                .and_then(|&option| question.options.get(option));
            let correct = question
                .options
                .iter()
                .find(|o| o.id == question.correct_option_id);
            let is_correct = selected.is_some_and(|s| s.id == question.correct_option_id);
            if is_correct {
                total += question.points;
            }
            SnapshotItem {
                question_id: question.id.clone(),
                question_text: question.text.clone(),
                points: question.points,
                selected_option_id: selected.map(|o| o.id.clone()),
                selected_option_text: selected.map(|o| o.text.clone()),
                correct_option_id: question.correct_option_id.clone(),
                correct_option_text: correct.map(|o| o.text.clone()).unwrap_or_default(),
                is_correct,
                level: None,
            }
        })
        .collect();
    (total, items)
}

/// The result of `answers` to `test` by `user` at `now`, before it is stored.
pub(super) fn scored(
    test: &StoredTest,
    user: &users::User,
    answers: &[Answer],
    now: i64,
) -> ResultRecord {
    let (total, items) = score(test, answers);
    let max_score: i64 = items.iter().map(|i| i.points).sum();
    let (level, message) = test
        .range_for(total)
        .map(|r| (r.level.clone(), r.message.clone()))
        .unwrap_or_default();
    let scores = Scores {
        total_score: total,
        max_score,
        level,
        message,
        ability: None,
        standard_error: None,
    };
    ResultRecord::new(test, user, items, scores, now)
}
