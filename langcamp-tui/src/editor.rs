//! Editing text in the user's own editor (`$VISUAL`, else `$EDITOR`, else `vi`), for texts
//! too long for the console's editor: the mail templates.
//!
//! The console asks for it with an [`EditRequest`] ([`crate::app::App::take_edit`]); the
//! terminal runtime puts the console aside, runs [`edit`] and hands the text back with
//! [`crate::app::App::edited_outside`]. Tests hand back a text of their own instead.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicU64, Ordering};
use std::{fs, io};

use langcamp_core::domain::LanguageTag;
use langcamp_core::mail_templates::TemplateKind;

/// A text to edit in the user's editor, and what it is for.
#[derive(Clone, Debug, PartialEq)]
pub struct EditRequest {
    /// The name of the file the editor opens (e.g. `otp.nl.mail`): editors pick their
    /// mode from it, and the user sees what they edit.
    pub file_name: String,
    /// The text the editor starts with.
    pub text: String,
    pub purpose: EditPurpose,
}

/// What an edited text is for.
#[derive(Clone, Debug, PartialEq)]
pub enum EditPurpose {
    /// A mail template in its file form; `original` is the text first given, so an
    /// unchanged one is not saved.
    MailTemplate {
        kind: TemplateKind,
        locale: LanguageTag,
        original: String,
    },
}

/// The user's editor: `$VISUAL`, else `$EDITOR`, else `vi`.
pub fn command_from_env() -> String {
    ["VISUAL", "EDITOR"]
        .into_iter()
        .filter_map(|name| std::env::var(name).ok())
        .find(|value| !value.trim().is_empty())
        .unwrap_or_else(|| "vi".to_owned())
}

/// Writes `text` to a new private file named `file_name`, runs `editor` on it (a command
/// line, such as `vim` or `code --wait`), waits for it and returns the file's text then.
/// Blocks: the terminal must be the editor's meanwhile. An editor that fails or exits
/// with an error is an error (the text is then not taken).
pub fn edit(editor: &str, file_name: &str, text: &str) -> Result<String, String> {
    let dir = private_dir().map_err(|e| format!("cannot create a temporary file: {e}"))?;
    let path = dir.join(file_name);
    let result = fs::write(&path, text)
        .map_err(|e| format!("cannot write {}: {e}", path.display()))
        .and_then(|()| run(editor, &path))
        .and_then(|()| {
            fs::read_to_string(&path).map_err(|e| format!("cannot read {}: {e}", path.display()))
        });
    let _ = fs::remove_dir_all(&dir);
    result
}

fn run(editor: &str, path: &Path) -> Result<(), String> {
    let status = editor_command(editor, path)
        .status()
        .map_err(|e| format!("cannot run the editor `{editor}`: {e}"))?;
    if status.success() {
        Ok(())
    } else {
        Err(format!("the editor `{editor}` ended with {status}"))
    }
}

/// The command line through the shell, as git does, so `code --wait` and quoted paths work.
#[cfg(unix)]
fn editor_command(editor: &str, path: &Path) -> Command {
    let mut command = Command::new("sh");
    command
        .arg("-c")
        .arg(format!("{editor} \"$@\""))
        .arg(editor)
        .arg(path);
    command
}

#[cfg(not(unix))]
fn editor_command(editor: &str, path: &Path) -> Command {
    let mut words = editor.split_whitespace();
    let mut command = Command::new(words.next().unwrap_or("notepad"));
    command.args(words).arg(path);
    command
}

/// A new directory only this user can read, under the system's temporary directory.
fn private_dir() -> io::Result<PathBuf> {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let n = NEXT.fetch_add(1, Ordering::Relaxed);
    let dir = std::env::temp_dir().join(format!("langcamp-edit-{}-{n}", std::process::id()));
    let mut builder = fs::DirBuilder::new();
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
    builder.create(&dir)?;
    Ok(dir)
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    #[test]
    fn the_editor_gets_the_text_in_a_named_file_and_its_changes_come_back_or_an_error() {
        // An "editor" that checks the file's name and text, then replaces the text.
        let editor = "f() { case \"$1\" in */otp.nl.mail) grep -q '^Hello$' \"$1\" && printf 'Hallo\\n' > \"$1\";; *) exit 3;; esac; }; f";
        assert_eq!(
            edit(editor, "otp.nl.mail", "Hello\n"),
            Ok("Hallo\n".to_owned())
        );
        // One that fails gives no text; none leaves a file behind.
        let error = edit("false", "otp.nl.mail", "Hello\n").expect_err("fails");
        assert!(error.contains("`false` ended with"), "{error}");
        let error = edit("/no/such/editor", "otp.nl.mail", "Hello\n").expect_err("fails");
        assert!(error.contains("/no/such/editor"), "{error}");
        let left: Vec<_> = fs::read_dir(std::env::temp_dir())
            .expect("temp dir")
            .filter_map(Result::ok)
            .filter(|e| {
                e.file_name()
                    .to_string_lossy()
                    .starts_with(&format!("langcamp-edit-{}-", std::process::id()))
            })
            .collect();
        assert!(left.is_empty(), "{left:?}");
    }
}
