//! Deciding a file's type from its first bytes ("magic numbers"), never from the name or
//! the type a client claims: a page of HTML renamed `photo.png` is still HTML, and is
//! refused.

use std::fmt;

/// How many leading bytes [`sniff`] wants to see (fewer only when the file is shorter).
pub const SNIFF_LEN: usize = 64;

/// The types the service accepts: images, PDF documents and web video.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FileType {
    Jpeg,
    Png,
    Webp,
    Gif,
    Pdf,
    Mp4,
    Webm,
}

impl FileType {
    pub const ALL: [FileType; 7] = [
        FileType::Jpeg,
        FileType::Png,
        FileType::Webp,
        FileType::Gif,
        FileType::Pdf,
        FileType::Mp4,
        FileType::Webm,
    ];

    pub fn mime(self) -> &'static str {
        match self {
            FileType::Jpeg => "image/jpeg",
            FileType::Png => "image/png",
            FileType::Webp => "image/webp",
            FileType::Gif => "image/gif",
            FileType::Pdf => "application/pdf",
            FileType::Mp4 => "video/mp4",
            FileType::Webm => "video/webm",
        }
    }

    pub fn from_mime(mime: &str) -> Option<FileType> {
        FileType::ALL.into_iter().find(|t| t.mime() == mime)
    }

    /// A short human name for messages.
    pub fn label(self) -> &'static str {
        match self {
            FileType::Jpeg => "JPEG",
            FileType::Png => "PNG",
            FileType::Webp => "WebP",
            FileType::Gif => "GIF",
            FileType::Pdf => "PDF",
            FileType::Mp4 => "MP4",
            FileType::Webm => "WebM",
        }
    }

    /// Whether browsers should show it in place (images, video, PDF) rather than download it.
    pub fn is_inline(self) -> bool {
        true
    }
}

impl fmt::Display for FileType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.label())
    }
}

/// MP4 major brands (ISO base media files that are MP4 video, not QuickTime, HEIF or AVIF).
const MP4_BRANDS: [&[u8; 4]; 13] = [
    b"isom", b"iso2", b"iso3", b"iso4", b"iso5", b"iso6", b"mp41", b"mp42", b"avc1", b"dash",
    b"M4V ", b"mmp4", b"msnv",
];

/// The type of a file starting with `head`, if it is one of the accepted types.
pub fn sniff(head: &[u8]) -> Option<FileType> {
    if head.starts_with(&[0xFF, 0xD8, 0xFF]) {
        return Some(FileType::Jpeg);
    }
    if head.starts_with(b"\x89PNG\r\n\x1a\n") && head.get(12..16) == Some(b"IHDR") {
        return Some(FileType::Png);
    }
    if head.starts_with(b"RIFF") && head.get(8..12) == Some(b"WEBP") {
        return Some(FileType::Webp);
    }
    if head.starts_with(b"GIF87a") || head.starts_with(b"GIF89a") {
        return Some(FileType::Gif);
    }
    if head.starts_with(b"%PDF-") {
        return Some(FileType::Pdf);
    }
    if head.get(4..8) == Some(b"ftyp")
        && let Some(brand) = head.get(8..12)
        && MP4_BRANDS.iter().any(|b| b.as_slice() == brand)
    {
        return Some(FileType::Mp4);
    }
    if head.starts_with(&[0x1A, 0x45, 0xDF, 0xA3]) && ebml_doc_type(head) == Some(b"webm") {
        return Some(FileType::Webm);
    }
    None
}

/// The `DocType` of an EBML header (`webm`, `matroska`), read from its element 0x4282.
fn ebml_doc_type(head: &[u8]) -> Option<&[u8]> {
    let at = head.windows(2).position(|w| w == [0x42, 0x82])?;
    let size_byte = *head.get(at + 2)?;
    // A one-byte variable-length size (the only one a short DocType uses): 1xxxxxxx.
    if size_byte & 0x80 == 0 {
        return None;
    }
    let len = usize::from(size_byte & 0x7F);
    head.get(at + 3..at + 3 + len)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_accepted_type_is_recognised_by_its_magic_bytes() {
        let png = b"\x89PNG\r\n\x1a\n\0\0\0\x0dIHDR\0\0\0\x01";
        let webp = b"RIFF\x24\0\0\0WEBPVP8 ";
        let mp4 = b"\0\0\0\x18ftypisom\0\0\x02\0isomiso2";
        let webm = b"\x1a\x45\xdf\xa3\x9f\x42\x86\x81\x01\x42\xf7\x81\x01\x42\x82\x84webm\x42\x87";
        assert_eq!(sniff(b"\xff\xd8\xff\xe0\0\x10JFIF"), Some(FileType::Jpeg));
        assert_eq!(sniff(png), Some(FileType::Png));
        assert_eq!(sniff(webp), Some(FileType::Webp));
        assert_eq!(sniff(b"GIF89a\x01\0\x01\0"), Some(FileType::Gif));
        assert_eq!(sniff(b"%PDF-1.4\n"), Some(FileType::Pdf));
        assert_eq!(sniff(mp4), Some(FileType::Mp4));
        assert_eq!(sniff(webm), Some(FileType::Webm));
    }

    #[test]
    fn lookalikes_and_other_types_are_not_accepted() {
        assert_eq!(sniff(b"<!DOCTYPE html><html>"), None);
        assert_eq!(sniff(b"<svg xmlns=\"http://www.w3.org/2000/svg\">"), None);
        assert_eq!(sniff(b""), None);
        assert_eq!(sniff(b"\x89PNG\r\n\x1a\n"), None, "a signature alone");
        assert_eq!(sniff(b"RIFF\x24\0\0\0WAVEfmt "), None, "RIFF audio");
        assert_eq!(sniff(b"\0\0\0\x14ftypqt  \0\0\0\0"), None, "QuickTime");
        assert_eq!(sniff(b"\0\0\0\x1cftypheic\0\0\0\0"), None, "HEIF");
        let mkv = b"\x1a\x45\xdf\xa3\x9f\x42\x82\x88matroska";
        assert_eq!(sniff(mkv), None, "Matroska that is not WebM");
        assert_eq!(sniff(b"  %PDF-1.4"), None, "PDF marker not at the start");
    }

    #[test]
    fn mime_types_round_trip() {
        for t in FileType::ALL {
            assert_eq!(FileType::from_mime(t.mime()), Some(t));
        }
        assert_eq!(FileType::from_mime("text/html"), None);
    }
}
