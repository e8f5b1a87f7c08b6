//! Text entry: a one-line field (search boxes, prompts) and a multi-line editor (replies,
//! setting values). Plain state with editing operations, so they are tested without a
//! terminal; the cursor is a position in characters, never a byte offset.

/// A one-line text field.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LineInput {
    text: String,
    /// Cursor position in characters.
    cursor: usize,
}

impl LineInput {
    pub fn new(text: &str) -> LineInput {
        LineInput {
            text: text.to_owned(),
            cursor: text.chars().count(),
        }
    }

    pub fn text(&self) -> &str {
        &self.text
    }

    pub fn cursor(&self) -> usize {
        self.cursor
    }

    pub fn insert(&mut self, c: char) {
        let at = byte_index(&self.text, self.cursor);
        self.text.insert(at, c);
        self.cursor += 1;
    }

    pub fn backspace(&mut self) {
        if self.cursor > 0 {
            self.cursor -= 1;
            let at = byte_index(&self.text, self.cursor);
            self.text.remove(at);
        }
    }

    pub fn delete(&mut self) {
        if self.cursor < self.text.chars().count() {
            let at = byte_index(&self.text, self.cursor);
            self.text.remove(at);
        }
    }

    pub fn left(&mut self) {
        self.cursor = self.cursor.saturating_sub(1);
    }

    pub fn right(&mut self) {
        self.cursor = (self.cursor + 1).min(self.text.chars().count());
    }

    pub fn home(&mut self) {
        self.cursor = 0;
    }

    pub fn end(&mut self) {
        self.cursor = self.text.chars().count();
    }

    pub fn clear(&mut self) {
        self.text.clear();
        self.cursor = 0;
    }
}

/// A multi-line editor: a list of lines and a cursor (row, column in characters).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TextArea {
    lines: Vec<String>,
    row: usize,
    col: usize,
}

impl Default for TextArea {
    fn default() -> Self {
        TextArea {
            lines: vec![String::new()],
            row: 0,
            col: 0,
        }
    }
}

impl TextArea {
    /// An editor holding `text`, with the cursor at its end.
    pub fn new(text: &str) -> TextArea {
        let lines: Vec<String> = text.split('\n').map(str::to_owned).collect();
        let row = lines.len() - 1;
        let col = lines[row].chars().count();
        TextArea { lines, row, col }
    }

    pub fn text(&self) -> String {
        self.lines.join("\n")
    }

    pub fn lines(&self) -> &[String] {
        &self.lines
    }

    /// The cursor as (row, column in characters).
    pub fn cursor(&self) -> (usize, usize) {
        (self.row, self.col)
    }

    pub fn is_blank(&self) -> bool {
        self.lines.iter().all(|l| l.trim().is_empty())
    }

    fn line_len(&self, row: usize) -> usize {
        self.lines.get(row).map_or(0, |l| l.chars().count())
    }

    pub fn insert(&mut self, c: char) {
        if c == '\n' {
            self.newline();
            return;
        }
        let line = &mut self.lines[self.row];
        let at = byte_index(line, self.col);
        line.insert(at, c);
        self.col += 1;
    }

    pub fn newline(&mut self) {
        let line = &mut self.lines[self.row];
        let at = byte_index(line, self.col);
        let rest = line.split_off(at);
        self.lines.insert(self.row + 1, rest);
        self.row += 1;
        self.col = 0;
    }

    pub fn backspace(&mut self) {
        if self.col > 0 {
            self.col -= 1;
            let line = &mut self.lines[self.row];
            let at = byte_index(line, self.col);
            line.remove(at);
        } else if self.row > 0 {
            let line = self.lines.remove(self.row);
            self.row -= 1;
            self.col = self.line_len(self.row);
            self.lines[self.row].push_str(&line);
        }
    }

    pub fn delete(&mut self) {
        if self.col < self.line_len(self.row) {
            let line = &mut self.lines[self.row];
            let at = byte_index(line, self.col);
            line.remove(at);
        } else if self.row + 1 < self.lines.len() {
            let next = self.lines.remove(self.row + 1);
            self.lines[self.row].push_str(&next);
        }
    }

    pub fn left(&mut self) {
        if self.col > 0 {
            self.col -= 1;
        } else if self.row > 0 {
            self.row -= 1;
            self.col = self.line_len(self.row);
        }
    }

    pub fn right(&mut self) {
        if self.col < self.line_len(self.row) {
            self.col += 1;
        } else if self.row + 1 < self.lines.len() {
            self.row += 1;
            self.col = 0;
        }
    }

    pub fn up(&mut self) {
        if self.row > 0 {
            self.row -= 1;
            self.col = self.col.min(self.line_len(self.row));
        }
    }

    pub fn down(&mut self) {
        if self.row + 1 < self.lines.len() {
            self.row += 1;
            self.col = self.col.min(self.line_len(self.row));
        }
    }

    pub fn home(&mut self) {
        self.col = 0;
    }

    pub fn end(&mut self) {
        self.col = self.line_len(self.row);
    }

    /// The text broken into rows of at most `width` characters (long lines wrap), and the
    /// cursor's (row, column) among them.
    pub fn wrapped(&self, width: usize) -> (Vec<String>, (usize, usize)) {
        let width = width.max(1);
        let mut rows = Vec::new();
        let mut cursor = (0, 0);
        for (i, line) in self.lines.iter().enumerate() {
            let chars: Vec<char> = line.chars().collect();
            if i == self.row {
                cursor = (rows.len() + self.col / width, self.col % width);
            }
            if chars.is_empty() {
                rows.push(String::new());
            }
            for chunk in chars.chunks(width) {
                rows.push(chunk.iter().collect());
            }
            // A cursor just past a full last chunk sits at the start of an extra row.
            if i == self.row
                && !chars.is_empty()
                && self.col == chars.len()
                && self.col.is_multiple_of(width)
            {
                rows.push(String::new());
            }
        }
        (rows, cursor)
    }
}

/// The byte offset of character `chars` in `text` (its length when past the end).
fn byte_index(text: &str, chars: usize) -> usize {
    text.char_indices()
        .nth(chars)
        .map_or(text.len(), |(i, _)| i)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_line_input_edits_at_the_cursor_with_multibyte_characters() {
        let mut input = LineInput::new("ana");
        input.left();
        input.insert('ñ');
        assert_eq!((input.text(), input.cursor()), ("anña", 3));
        input.home();
        input.delete();
        input.end();
        input.backspace();
        assert_eq!((input.text(), input.cursor()), ("nñ", 2));
        input.right();
        assert_eq!(input.cursor(), 2);
        input.clear();
        assert_eq!((input.text(), input.cursor()), ("", 0));
    }

    #[test]
    fn the_editor_splits_and_joins_lines() {
        let mut editor = TextArea::default();
        for c in "Hello\nworld".chars() {
            editor.insert(c);
        }
        assert_eq!(editor.text(), "Hello\nworld");
        assert_eq!(editor.cursor(), (1, 5));
        editor.home();
        editor.backspace();
        assert_eq!(editor.text(), "Helloworld");
        assert_eq!(editor.cursor(), (0, 5));
        editor.newline();
        editor.up();
        editor.end();
        editor.delete();
        assert_eq!(editor.text(), "Helloworld");
        editor.down();
        assert_eq!(editor.cursor(), (0, 5));
        editor.end();
        editor.left();
        editor.left();
        editor.right();
        assert_eq!(editor.cursor(), (0, 9));
    }

    #[test]
    fn the_editor_wraps_long_lines_and_tracks_the_cursor() {
        let editor = TextArea::new("abcdefgh\nxy");
        let (rows, cursor) = editor.wrapped(3);
        assert_eq!(rows, ["abc", "def", "gh", "xy"]);
        assert_eq!(cursor, (3, 2));
        let full = TextArea::new("abcdef");
        let (rows, cursor) = full.wrapped(3);
        assert_eq!(rows, ["abc", "def", ""]);
        assert_eq!(cursor, (2, 0));
        assert!(TextArea::new(" \n ").is_blank());
    }
}
