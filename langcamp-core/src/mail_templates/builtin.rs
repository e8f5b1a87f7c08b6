//! The built-in templates: data files in `langcamp-core/mail-templates/`, one per kind and
//! locale in the [`super::file`] form, so a translator sends a patch without reading Rust.
//! A stored template of the same kind and locale replaces one.

use std::sync::LazyLock;

use super::{TemplateKind, TemplateSource, file};

/// Each file by kind and locale (the locale as written: lower-case language codes).
const FILES: [(TemplateKind, &str, &str); 24] = [
    (
        TemplateKind::Otp,
        "de",
        include_str!("../../mail-templates/otp.de.mail"),
    ),
    (
        TemplateKind::Otp,
        "en",
        include_str!("../../mail-templates/otp.en.mail"),
    ),
    (
        TemplateKind::Otp,
        "es",
        include_str!("../../mail-templates/otp.es.mail"),
    ),
    (
        TemplateKind::Otp,
        "fr",
        include_str!("../../mail-templates/otp.fr.mail"),
    ),
    (
        TemplateKind::Otp,
        "it",
        include_str!("../../mail-templates/otp.it.mail"),
    ),
    (
        TemplateKind::Otp,
        "pt",
        include_str!("../../mail-templates/otp.pt.mail"),
    ),
    (
        TemplateKind::ContactReply,
        "de",
        include_str!("../../mail-templates/contact_reply.de.mail"),
    ),
    (
        TemplateKind::ContactReply,
        "en",
        include_str!("../../mail-templates/contact_reply.en.mail"),
    ),
    (
        TemplateKind::ContactReply,
        "es",
        include_str!("../../mail-templates/contact_reply.es.mail"),
    ),
    (
        TemplateKind::ContactReply,
        "fr",
        include_str!("../../mail-templates/contact_reply.fr.mail"),
    ),
    (
        TemplateKind::ContactReply,
        "it",
        include_str!("../../mail-templates/contact_reply.it.mail"),
    ),
    (
        TemplateKind::ContactReply,
        "pt",
        include_str!("../../mail-templates/contact_reply.pt.mail"),
    ),
    (
        TemplateKind::MaterialAssigned,
        "de",
        include_str!("../../mail-templates/material_assigned.de.mail"),
    ),
    (
        TemplateKind::MaterialAssigned,
        "en",
        include_str!("../../mail-templates/material_assigned.en.mail"),
    ),
    (
        TemplateKind::MaterialAssigned,
        "es",
        include_str!("../../mail-templates/material_assigned.es.mail"),
    ),
    (
        TemplateKind::MaterialAssigned,
        "fr",
        include_str!("../../mail-templates/material_assigned.fr.mail"),
    ),
    (
        TemplateKind::MaterialAssigned,
        "it",
        include_str!("../../mail-templates/material_assigned.it.mail"),
    ),
    (
        TemplateKind::MaterialAssigned,
        "pt",
        include_str!("../../mail-templates/material_assigned.pt.mail"),
    ),
    (
        TemplateKind::SecurityNotice,
        "de",
        include_str!("../../mail-templates/security_notice.de.mail"),
    ),
    (
        TemplateKind::SecurityNotice,
        "en",
        include_str!("../../mail-templates/security_notice.en.mail"),
    ),
    (
        TemplateKind::SecurityNotice,
        "es",
        include_str!("../../mail-templates/security_notice.es.mail"),
    ),
    (
        TemplateKind::SecurityNotice,
        "fr",
        include_str!("../../mail-templates/security_notice.fr.mail"),
    ),
    (
        TemplateKind::SecurityNotice,
        "it",
        include_str!("../../mail-templates/security_notice.it.mail"),
    ),
    (
        TemplateKind::SecurityNotice,
        "pt",
        include_str!("../../mail-templates/security_notice.pt.mail"),
    ),
];

/// The locale every kind has a built-in template in, whatever the school's default.
pub const LAST_RESORT: &str = "en";

/// A built-in template.
#[derive(Debug)]
pub struct BuiltIn {
    pub kind: TemplateKind,
    pub locale: &'static str,
    pub source: TemplateSource,
}

/// Every built-in template, read once. The unit tests read and check every file, so none
/// is ever left out here.
pub fn all() -> &'static [BuiltIn] {
    static ALL: LazyLock<Vec<BuiltIn>> = LazyLock::new(|| {
        FILES
            .iter()
            .filter_map(|&(kind, locale, text)| {
                let source = file::parse(text)
                    .ok()
                    .and_then(|input| TemplateSource::unchecked(input).ok());
                if source.is_none() {
                    tracing::error!(%kind, locale, "a built-in mail template does not read");
                }
                source.map(|source| BuiltIn {
                    kind,
                    locale,
                    source,
                })
            })
            .collect()
    });
    &ALL
}

/// The built-in template of `kind` in `locale` (lower-case), if there is one.
pub fn find(kind: TemplateKind, locale: &str) -> Option<&'static BuiltIn> {
    all().iter().find(|b| b.kind == kind && b.locale == locale)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mail_templates::render;

    #[test]
    fn every_built_in_template_reads_and_passes_the_save_checks() {
        assert_eq!(all().len(), FILES.len());
        for built_in in all() {
            let problems = render::check(built_in.kind, &built_in.source);
            assert!(
                problems.is_empty(),
                "{}.{}: {problems:?}",
                built_in.kind,
                built_in.locale
            );
        }
    }

    #[test]
    fn every_kind_has_the_six_locales() {
        for kind in TemplateKind::ALL {
            for locale in ["en", "de", "fr", "es", "it", "pt"] {
                assert!(find(kind, locale).is_some(), "{kind}.{locale}");
            }
        }
    }
}
