//! The `LINE n: ...` / `^` cursor display that libpq appends to an error message when
//! the server reports a position inside a query text it knows.
//!
//! Positions count characters (UTF-8 assumed, each one screen column wide); tabs show
//! as spaces; a line wider than 60 columns is cut with `...`, keeping the cursor at
//! least 10 columns away from the right edge when it can.

const DISPLAY_SIZE: usize = 60;
const MIN_RIGHT_CUT: usize = 10;

/// Appends the cursor display for the 1-based character position `pos` of `query`.
pub(crate) fn report_error_position(out: &mut String, query: &str, pos: usize) {
    let loc = match pos.checked_sub(1) {
        Some(l) => l,
        None => return,
    };
    let chars: Vec<char> = query.chars().collect();
    let mut line_no = 1usize;
    let mut begin = 0usize;
    let mut end: Option<usize> = None;
    for (i, &ch) in chars.iter().enumerate() {
        if ch == '\r' || ch == '\n' {
            if i < loc {
                // "\r\n" counts as one line break.
                if ch == '\r' || i == 0 || chars[i - 1] != '\r' {
                    line_no += 1;
                }
                begin = i + 1;
            } else {
                end = Some(i);
                break;
            }
        }
    }
    let mut end = end.unwrap_or(chars.len());
    if loc > chars.len() {
        return;
    }
    // Every character is one column wide, so column == character index.
    let (mut beg_trunc, mut end_trunc) = (false, false);
    if end - begin > DISPLAY_SIZE {
        if begin + DISPLAY_SIZE >= loc + MIN_RIGHT_CUT {
            while end - begin > DISPLAY_SIZE {
                end -= 1;
            }
            end_trunc = true;
        } else {
            while loc + MIN_RIGHT_CUT < end {
                end -= 1;
                end_trunc = true;
            }
            while end - begin > DISPLAY_SIZE {
                begin += 1;
                beg_trunc = true;
            }
        }
    }
    let prefix = format!("LINE {line_no}: {}", if beg_trunc { "..." } else { "" });
    out.push_str(&prefix);
    out.extend(
        chars[begin..end]
            .iter()
            .map(|&c| if c == '\t' { ' ' } else { c }),
    );
    if end_trunc {
        out.push_str("...");
    }
    out.push('\n');
    let indent = prefix.chars().count() + loc.saturating_sub(begin);
    out.extend(std::iter::repeat_n(' ', indent));
    out.push_str("^\n");
}

#[cfg(test)]
mod tests {
    use super::report_error_position;

    fn show(q: &str, pos: usize) -> String {
        let mut s = String::new();
        report_error_position(&mut s, q, pos);
        s
    }

    #[test]
    fn cursor_under_the_position() {
        assert_eq!(
            show("select * from nosuch where x = 1;", 15),
            "LINE 1: select * from nosuch where x = 1;\n                      ^\n"
        );
    }

    #[test]
    fn second_line_and_tabs() {
        assert_eq!(show("select 1,\n\tfoo", 12), "LINE 2:  foo\n         ^\n");
        assert_eq!(show("a\r\nbc", 5), "LINE 2: bc\n         ^\n");
    }

    #[test]
    fn long_lines_are_cut_like_psql_shows_them() {
        let q = format!("select {} from nosuchtab", "x".repeat(100));
        assert_eq!(
            show(&q, 114),
            format!(
                "LINE 1: ...{} from nosuchtab\n{}^\n",
                "x".repeat(45),
                " ".repeat(62)
            )
        );
        let q = format!("select nosuchcol{} from pg_class", ", 1".repeat(40));
        assert_eq!(
            show(&q, 8),
            format!(
                "LINE 1: select nosuchcol{}, ...\n{}^\n",
                ", 1".repeat(14),
                " ".repeat(15)
            )
        );
    }

    #[test]
    fn out_of_range_prints_nothing() {
        assert_eq!(show("abc", 10), "");
        assert_eq!(show("abc", 0), "");
    }
}
