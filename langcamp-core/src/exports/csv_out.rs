//! The CSV writing of exports: RFC 4180 (CRLF line ends, quotes doubled, a field with a
//! comma, quote or line break quoted) through the `csv` crate, a byte-order mark first so
//! spreadsheets read UTF-8, and the formula guard on every cell.

use std::borrow::Cow;

use bytes::Bytes;

use super::CsvRow;
use crate::domain::error::{Error, Result};

/// The UTF-8 byte-order mark that starts every CSV export.
pub const BOM: &[u8] = b"\xEF\xBB\xBF";

/// A cell a spreadsheet would run as a formula (`=`, `+`, `-`, `@`, a tab or a carriage
/// return first) gets a leading `'`, which spreadsheets show as text.
pub fn guard_formula(cell: &str) -> Cow<'_, str> {
    match cell.as_bytes().first() {
        Some(b'=' | b'+' | b'-' | b'@' | b'\t' | b'\r') => Cow::Owned(format!("'{cell}")),
        _ => Cow::Borrowed(cell),
    }
}

fn writer(capacity: usize) -> csv::Writer<Vec<u8>> {
    csv::WriterBuilder::new()
        .terminator(csv::Terminator::CRLF)
        .quote_style(csv::QuoteStyle::Necessary)
        .from_writer(Vec::with_capacity(capacity))
}

fn finish(writer: csv::Writer<Vec<u8>>) -> Result<Bytes> {
    writer
        .into_inner()
        .map(Bytes::from)
        .map_err(|e| Error::internal(format!("writing CSV: {e}")))
}

/// The byte-order mark and the header row.
pub(super) fn header(columns: &[&str]) -> Result<Bytes> {
    let mut out = writer(256);
    out.write_record(columns).map_err(csv_error)?;
    let mut bytes = BOM.to_vec();
    bytes.extend_from_slice(&finish(out)?);
    Ok(Bytes::from(bytes))
}

/// The lines of `rows`.
pub(super) fn rows<T: CsvRow>(rows: &[T]) -> Result<Bytes> {
    let mut out = writer(rows.len() * 256);
    for row in rows {
        let cells = row.cells();
        let guarded: Vec<Cow<'_, str>> = cells.iter().map(|cell| guard_formula(cell)).collect();
        out.write_record(guarded.iter().map(|cell| cell.as_bytes()))
            .map_err(csv_error)?;
    }
    finish(out)
}

fn csv_error(e: csv::Error) -> Error {
    Error::internal(format!("writing CSV: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formulas_are_guarded_and_text_is_not() {
        for (cell, shown) in [
            ("=HYPERLINK(\"x\")", "'=HYPERLINK(\"x\")"),
            ("+351 912", "'+351 912"),
            ("-1", "'-1"),
            ("@sum", "'@sum"),
            ("\tx", "'\tx"),
            ("\rx", "'\rx"),
            ("Ana =1", "Ana =1"),
            ("", ""),
            ("Zoë", "Zoë"),
        ] {
            assert_eq!(guard_formula(cell), shown, "{cell:?}");
        }
    }

    #[test]
    fn the_header_starts_with_the_mark_and_ends_with_crlf() {
        let head = header(&["id", "a,b", "say \"hi\""]).expect("written");
        assert_eq!(&head[..], b"\xEF\xBB\xBFid,\"a,b\",\"say \"\"hi\"\"\"\r\n");
    }
}
