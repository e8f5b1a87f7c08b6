-- Mail in the reader's language (CONTRACT §16, issue 31).
--
-- Staff's templates, one per kind and locale; a kind and locale without a row uses the
-- built-in template (langcamp-core/mail-templates/). locale is the normalized BCP 47 tag
-- (`pt-BR`), so one tag has one row. html_body is optional: without it the HTML part is
-- the text in paragraphs. Expand-only: a release before this one ignores the table.
CREATE TABLE mail_templates (
    kind TEXT NOT NULL,
    locale TEXT NOT NULL,
    subject TEXT NOT NULL,
    text_body TEXT NOT NULL,
    html_body TEXT,
    updated_at BIGINT NOT NULL,
    PRIMARY KEY (kind, locale)
);

-- The language a contact's reply is written in (§8): the form's `locale`, else the
-- request's first Accept-Language tag; NULL means the school's default at reply time.
ALTER TABLE contacts ADD COLUMN locale TEXT;
