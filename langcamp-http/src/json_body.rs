//! A JSON body read into a command: every problem of the body answered at once, one
//! message per field (CONTRACT §1).

use langcamp_core::{Error, Result};
use serde::de::DeserializeOwned;

/// Parses a JSON object into `T`, turning serde's messages into client-facing ones.
///
/// Every body of this API is an object; serde would also read a struct from an array
/// (`["a@b.test"]` as `{email}`), so anything else is refused first. A well-formed object
/// with wrong fields gets one message per field (contract §1), not just serde's first.
pub fn parse_json<T: DeserializeOwned>(bytes: &[u8]) -> Result<T> {
    parse_command(bytes, Ok)
}

/// Parses a JSON object into the wire input `I` and converts it into the command `C`
/// (its `TryFrom`), answering every problem of the body at once: serde's (wrong types,
/// unknown and missing fields) and the conversion's (invalid values) together, one
/// message per field.
pub fn parse_command<I: DeserializeOwned, C>(
    bytes: &[u8],
    convert: impl FnOnce(I) -> Result<C>,
) -> Result<C> {
    if bytes.iter().find(|b| !b.is_ascii_whitespace()) != Some(&b'{') {
        return Err(Error::invalid("request body must be a JSON object"));
    }
    match serde_json::from_slice(bytes) {
        Ok(input) => convert(input),
        Err(e) if is_syntax(&e) => Err(Error::Validation(vec![format!("malformed JSON: {e}")])),
        // The slow paths run only for a refused body.
        Err(_) => {
            if let Some(value) = integral_floats_as_integers(bytes)
                && let Ok(input) = serde_json::from_value(value)
            {
                return convert(input);
            }
            let FieldProblems {
                mut problems,
                rest,
                set_aside,
            } = field_problems::<I>(bytes);
            // The fields serde accepted are checked too; what the conversion says of a
            // field set aside (now absent or a stand-in) is already said.
            if let Some(rest) = rest
                && let Err(Error::Validation(more)) = convert(rest)
            {
                problems.extend(
                    more.into_iter()
                        .filter(|m| !set_aside.iter().any(|f| names_field(m, f))),
                );
            }
            Err(Error::Validation(problems))
        }
    }
}

/// The body with every number that is a whole number written with a fraction (`27.0`,
/// `1e3`) turned into an integer, or `None` when there is none. JSON Schema counts `27.0`
/// as an integer, and so do the clients generated from the API document; serde's integer
/// fields refuse it.
fn integral_floats_as_integers(bytes: &[u8]) -> Option<serde_json::Value> {
    fn walk(value: &mut serde_json::Value) -> bool {
        match value {
            serde_json::Value::Number(n) if !n.is_i64() && !n.is_u64() => {
                let Some(f) = n.as_f64() else {
                    return false;
                };
                // Within ±2^53 every whole f64 is exact, so nothing is rounded.
                if f.fract() == 0.0 && f.abs() <= 9_007_199_254_740_992.0 {
                    *value = serde_json::Value::from(f as i64);
                    true
                } else {
                    false
                }
            }
            serde_json::Value::Array(items) => items.iter_mut().fold(false, |c, v| walk(v) | c),
            serde_json::Value::Object(map) => map.values_mut().fold(false, |c, v| walk(v) | c),
            _ => false,
        }
    }
    let mut value: serde_json::Value = serde_json::from_slice(bytes).ok()?;
    walk(&mut value).then_some(value)
}

fn is_syntax(e: &serde_json::Error) -> bool {
    matches!(
        e.classify(),
        serde_json::error::Category::Syntax | serde_json::error::Category::Eof
    )
}

/// What [`field_problems`] found: serde's messages, the input read once every field it
/// refused was set aside (absent, or a stand-in value for a required one), and those
/// fields' names.
struct FieldProblems<T> {
    problems: Vec<String>,
    rest: Option<T>,
    set_aside: Vec<String>,
}

/// Values tried in place of a required field that was refused or missing, so that the
/// rest of the body can still be read: the first one serde takes without naming the
/// field again is used.
const STAND_INS: [fn() -> serde_json::Value; 6] = [
    || serde_json::Value::String(String::new()),
    || serde_json::Value::from(0),
    || serde_json::Value::Bool(false),
    || serde_json::Value::Array(Vec::new()),
    || serde_json::Value::Object(serde_json::Map::new()),
    || serde_json::Value::Null,
];

/// Every field problem of a well-formed object. serde stops at the first one, so the field
/// it names is set aside (removed, or given a stand-in when it is required) and the rest is
/// read again; each round sets aside one more field, and a field is never set aside twice,
/// so this ends within the object's size plus its type's fields.
fn field_problems<T: DeserializeOwned>(bytes: &[u8]) -> FieldProblems<T> {
    let mut object: serde_json::Map<String, serde_json::Value> = match serde_json::from_slice(bytes)
    {
        Ok(object) => object,
        Err(e) => {
            return FieldProblems {
                problems: vec![serde_message(&e)],
                rest: None,
                set_aside: Vec::new(),
            };
        }
    };
    let mut problems = Vec::new();
    let mut set_aside: Vec<String> = Vec::new();
    let rest = loop {
        let error = match deserialize::<T>(&object) {
            Ok(rest) => break Some(rest),
            Err(error) => error,
        };
        let message = serde_message(error.inner());
        // A field already set aside named again: nothing more can be learnt.
        let Some(field) = named_field(&message, &error).filter(|f| !set_aside.contains(f)) else {
            break None;
        };
        problems.push(if backticked(&message, "missing field `").is_some() {
            format!("{field} is required")
        } else if message.contains(&format!("`{field}`")) {
            message
        } else {
            format!("{field}: {message}")
        });
        object.remove(&field);
        if refused_field::<T>(&object).as_ref() == Some(&field)
            && !stand_in::<T>(&mut object, &field)
        {
            break None;
        }
        set_aside.push(field);
    };
    if problems.is_empty() {
        problems.push("the request body could not be read".into());
    }
    FieldProblems {
        problems,
        rest,
        set_aside,
    }
}

fn deserialize<T: DeserializeOwned>(
    object: &serde_json::Map<String, serde_json::Value>,
) -> std::result::Result<T, serde_path_to_error::Error<serde_json::Error>> {
    serde_path_to_error::deserialize(serde_json::Value::Object(object.clone()))
}

/// The body's field that serde's message is about: a missing or unknown one, or the first
/// segment of the error's path.
fn named_field(
    message: &str,
    error: &serde_path_to_error::Error<serde_json::Error>,
) -> Option<String> {
    backticked(message, "missing field `")
        .or_else(|| backticked(message, "unknown field `"))
        .or_else(|| top_level_key(error))
}

/// The field serde refuses `object` for, if it names one.
fn refused_field<T: DeserializeOwned>(
    object: &serde_json::Map<String, serde_json::Value>,
) -> Option<String> {
    let error = deserialize::<T>(object).err()?;
    named_field(&serde_message(error.inner()), &error)
}

/// Puts the first of [`STAND_INS`] in the required `field` that serde takes without naming
/// the field again; false when none does.
fn stand_in<T: DeserializeOwned>(
    object: &mut serde_json::Map<String, serde_json::Value>,
    field: &str,
) -> bool {
    for value in STAND_INS {
        object.insert(field.to_owned(), value());
        if refused_field::<T>(object).as_deref() != Some(field) {
            return true;
        }
    }
    object.remove(field);
    false
}

/// Whether `message` is about the body's field `field` (it starts with its name).
fn names_field(message: &str, field: &str) -> bool {
    message
        .strip_prefix(field)
        .is_some_and(|rest| rest.is_empty() || rest.starts_with([' ', ':', '.', '[', ',']))
}

/// serde's message without its " at line L column C" suffix.
fn serde_message(e: &serde_json::Error) -> String {
    let message = e.to_string();
    message
        .rsplit_once(" at line ")
        .map_or(message.clone(), |(m, _)| m.to_owned())
}

/// The name in "unknown field `name`, expected ...".
fn backticked(message: &str, prefix: &str) -> Option<String> {
    let rest = message.strip_prefix(prefix)?;
    rest.split_once('`').map(|(name, _)| name.to_owned())
}

/// The body's own field that holds the error (the first segment of its path).
fn top_level_key(error: &serde_path_to_error::Error<serde_json::Error>) -> Option<String> {
    match error.path().iter().next()? {
        serde_path_to_error::Segment::Map { key } => Some(key.clone()),
        _ => None,
    }
}
