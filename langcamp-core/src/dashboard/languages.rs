//! English names of language codes, for the language distribution's labels.
//!
//! A small built-in table of the ISO 639-1 codes a language school is likely to teach,
//! plus `und` (undetermined), the key of results whose test named no language. A tag with
//! a region or script (`pt-BR`) is labelled with its language and the rest (`Portuguese
//! (BR)`); an unknown code is labelled with the code itself.

/// The key of results without a target language (BCP 47 "undetermined").
pub(crate) const UNDETERMINED: &str = "und";

const NAMES: &[(&str, &str)] = &[
    ("af", "Afrikaans"),
    ("am", "Amharic"),
    ("ar", "Arabic"),
    ("az", "Azerbaijani"),
    ("be", "Belarusian"),
    ("bg", "Bulgarian"),
    ("bn", "Bengali"),
    ("bs", "Bosnian"),
    ("ca", "Catalan"),
    ("cs", "Czech"),
    ("cy", "Welsh"),
    ("da", "Danish"),
    ("de", "German"),
    ("el", "Greek"),
    ("en", "English"),
    ("eo", "Esperanto"),
    ("es", "Spanish"),
    ("et", "Estonian"),
    ("eu", "Basque"),
    ("fa", "Persian"),
    ("fi", "Finnish"),
    ("fr", "French"),
    ("ga", "Irish"),
    ("gl", "Galician"),
    ("gu", "Gujarati"),
    ("he", "Hebrew"),
    ("hi", "Hindi"),
    ("hr", "Croatian"),
    ("hu", "Hungarian"),
    ("hy", "Armenian"),
    ("id", "Indonesian"),
    ("is", "Icelandic"),
    ("it", "Italian"),
    ("ja", "Japanese"),
    ("ka", "Georgian"),
    ("kk", "Kazakh"),
    ("km", "Khmer"),
    ("ko", "Korean"),
    ("la", "Latin"),
    ("lt", "Lithuanian"),
    ("lv", "Latvian"),
    ("mk", "Macedonian"),
    ("mn", "Mongolian"),
    ("mr", "Marathi"),
    ("ms", "Malay"),
    ("mt", "Maltese"),
    ("nb", "Norwegian Bokmål"),
    ("ne", "Nepali"),
    ("nl", "Dutch"),
    ("nn", "Norwegian Nynorsk"),
    ("no", "Norwegian"),
    ("pa", "Punjabi"),
    ("pl", "Polish"),
    ("ps", "Pashto"),
    ("pt", "Portuguese"),
    ("ro", "Romanian"),
    ("ru", "Russian"),
    ("sk", "Slovak"),
    ("sl", "Slovenian"),
    ("so", "Somali"),
    ("sq", "Albanian"),
    ("sr", "Serbian"),
    ("sv", "Swedish"),
    ("sw", "Swahili"),
    ("ta", "Tamil"),
    ("te", "Telugu"),
    ("th", "Thai"),
    ("tl", "Tagalog"),
    ("tr", "Turkish"),
    ("uk", "Ukrainian"),
    ("und", "Undetermined"),
    ("ur", "Urdu"),
    ("uz", "Uzbek"),
    ("vi", "Vietnamese"),
    ("yo", "Yoruba"),
    ("zh", "Chinese"),
    ("zu", "Zulu"),
];

fn name_of(code: &str) -> Option<&'static str> {
    NAMES
        .iter()
        .find(|(c, _)| c.eq_ignore_ascii_case(code))
        .map(|(_, name)| *name)
}

/// The English label of a stored language code.
pub(crate) fn label(code: &str) -> String {
    if let Some(name) = name_of(code) {
        return name.to_owned();
    }
    match code.split_once(['-', '_']) {
        Some((language, rest)) if !rest.is_empty() => match name_of(language) {
            Some(name) => format!("{name} ({rest})"),
            None => code.to_owned(),
        },
        _ => code.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_codes_get_english_names() {
        assert_eq!(label("de"), "German");
        assert_eq!(label("EN"), "English");
        assert_eq!(label(UNDETERMINED), "Undetermined");
    }

    #[test]
    fn regional_tags_name_the_language_and_keep_the_rest() {
        assert_eq!(label("pt-BR"), "Portuguese (BR)");
        assert_eq!(label("zh_Hant"), "Chinese (Hant)");
    }

    #[test]
    fn unknown_codes_are_labelled_with_the_code() {
        assert_eq!(label("xq"), "xq");
        assert_eq!(label("xq-YY"), "xq-YY");
        assert_eq!(label("de-"), "de-");
    }

    #[test]
    fn the_table_is_sorted_without_duplicates() {
        assert!(NAMES.windows(2).all(|w| w[0].0 < w[1].0));
    }
}
