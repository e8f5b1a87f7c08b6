//! What clients send to take a test and to list results, and the check of a submission's
//! answers: their shape first (400 before looking at the test), then against the test.

use std::collections::HashMap;

use serde::Deserialize;
use serde_json::Value;
use utoipa::{IntoParams, ToSchema};

use crate::domain::error::{Error, Result};
use crate::domain::validate::{self, Patch, Problems};
use crate::domain::{Id, LanguageTag};
use crate::placement::ProficiencyTest;
use crate::placement::store::StoredTest;
use crate::users::User;

/// Body of a submission.
#[derive(Clone, Debug, Default, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct SubmitInput {
    /// At least one answer, at most one per question; unanswered questions score 0.
    #[serde(default)]
    #[schema(value_type = Vec<SubmittedAnswer>, required = true, min_items = 1)]
    pub answers: Patch<Value>,
}

/// One answer of a submission.
#[derive(Clone, Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct SubmittedAnswer {
    /// Zero-based position of the question.
    #[schema(minimum = 0)]
    pub question_index: i64,
    /// Zero-based position of the chosen option.
    #[schema(minimum = 0)]
    pub selected_option_index: i64,
}

/// Query of the admin result list.
#[derive(Clone, Debug, Default, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(rename_all = "camelCase")]
pub struct ResultFilter {
    /// Results of this test (results of a deleted test no longer match).
    pub test_id: Option<String>,
    /// Results of this user.
    pub user_id: Option<String>,
    /// Results with exactly this level.
    pub level: Option<String>,
    /// Results of tests of this target language (language code); empty means no filter.
    #[param(pattern = r"^$|^[A-Za-z]{2,3}(-[A-Za-z0-9]{1,8})*$", max_length = 35)]
    pub target_language: Option<String>,
}

/// A validated [`ResultFilter`]: what [`crate::Langcamp::list_test_results`] takes. Each
/// absent filter matches every result.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ResultQuery {
    pub test_id: Option<Id<ProficiencyTest>>,
    pub user_id: Option<Id<User>>,
    /// Exactly this level (trimmed, never empty).
    pub level: Option<String>,
    pub target_language: Option<LanguageTag>,
}

impl TryFrom<&ResultFilter> for ResultQuery {
    type Error = Error;

    fn try_from(filter: &ResultFilter) -> Result<ResultQuery> {
        let text = |raw: &Option<String>| validate::search_text(raw.as_deref());
        let target_language = text(&filter.target_language)
            .map(|tag| LanguageTag::parse("targetLanguage", &tag))
            .transpose()
            .map_err(Error::invalid)?;
        Ok(ResultQuery {
            test_id: text(&filter.test_id).map(Id::from),
            user_id: text(&filter.user_id).map(Id::from),
            level: text(&filter.level),
            target_language,
        })
    }
}

/// One answer as given: the position of the question and of the chosen option.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Answer {
    pub(super) item: usize,
    pub(super) question: usize,
    pub(super) option: usize,
}

/// Checks the shape of the answers (400 before looking at the test).
pub(super) fn parse_answers(raw: Patch<Value>) -> Result<Vec<Answer>> {
    let items = match raw {
        Patch::Absent => return Err(Error::invalid("answers is required")),
        Patch::Value(Value::Array(items)) => items,
        Patch::Null | Patch::Value(_) => return Err(Error::invalid("answers must be an array")),
    };
    if items.is_empty() {
        return Err(Error::invalid("answers must not be empty"));
    }
    let mut problems = Problems::new();
    let mut answers = Vec::with_capacity(items.len());
    let mut first_of: HashMap<usize, usize> = HashMap::new();
    for (i, item) in items.iter().enumerate() {
        let Value::Object(fields) = item else {
            problems.add(format!(
                "answers[{i}] must be an object with questionIndex and selectedOptionIndex"
            ));
            continue;
        };
        for key in fields.keys() {
            if key != "questionIndex" && key != "selectedOptionIndex" {
                problems.add(format!("answers[{i}].{key} is not a known field"));
            }
        }
        let question = index_field(
            &mut problems,
            i,
            "questionIndex",
            fields.get("questionIndex"),
        );
        let option = index_field(
            &mut problems,
            i,
            "selectedOptionIndex",
            fields.get("selectedOptionIndex"),
        );
        if let Some(q) = question
            && let Some(first) = first_of.insert(q, i)
        {
            problems.add(format!(
                "answers[{i}].questionIndex repeats question {q}, already answered in answers[{first}]"
            ));
        }
        if let (Some(question), Some(option)) = (question, option) {
            answers.push(Answer {
                item: i,
                question,
                option,
            });
        }
    }
    problems.finish()?;
    Ok(answers)
}

fn index_field(
    problems: &mut Problems,
    item: usize,
    name: &str,
    value: Option<&Value>,
) -> Option<usize> {
    match value {
        None | Some(Value::Null) => {
            problems.add(format!("answers[{item}].{name} is required"));
            None
        }
        Some(value) => match value.as_i64() {
            Some(n) if n < 0 => {
                problems.add(format!("answers[{item}].{name} must be 0 or more"));
                None
            }
            Some(n) => usize::try_from(n).ok(),
            None => {
                problems.add(format!("answers[{item}].{name} must be a whole number"));
                None
            }
        },
    }
}

/// Checks the answers against the test's questions and options.
pub(super) fn check_against(test: &StoredTest, answers: &[Answer]) -> Result<()> {
    let mut problems = Problems::new();
    let count = test.questions.len();
    for answer in answers {
        let i = answer.item;
        match test.questions.get(answer.question) {
            None => problems.add(format!(
                "answers[{i}].questionIndex must be from 0 to {}",
                count.saturating_sub(1)
            )),
            Some(question) if answer.option >= question.options.len() => {
                problems.add(format!(
                    "answers[{i}].selectedOptionIndex must be from 0 to {} for question {}",
                    question.options.len().saturating_sub(1),
                    answer.question
                ));
            }
            Some(_) => {}
        }
    }
    problems.finish()
}
