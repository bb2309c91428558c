//! The Perl regular expressions that pgbench's own TAP tests check its output with,
//! matched by a small backtracking matcher so that ported cases keep their patterns.
//!
//! Supported: literals and `\` escapes, `.`, `\d \D \w \W \s \S`, `\b \B`, classes
//! `[...]`/`[^...]` with ranges, groups `( )` and `(?: )` with `|`, back-references
//! `\1`-`\9`, negative look-ahead `(?! )`, greedy `* + ? {n} {n,} {n,m}`, anchors `^ $`,
//! and leading flags `(?i)`, `(?s)`, `(?m)` with Perl's meanings. Without `m`, `^` is
//! the start of the text and `$` its end or just before a final newline.

use std::fmt;

#[derive(Debug, Clone)]
enum Node {
    Char(char),
    Any,
    Class(Vec<ClassItem>, bool),
    Start,
    End,
    WordBoundary(bool),
    Group(Box<Node>, Option<usize>),
    NotAhead(Box<Node>),
    Alt(Vec<Node>),
    Concat(Vec<Node>),
    Repeat(Box<Node>, usize, usize),
    BackRef(usize),
}

#[derive(Debug, Clone)]
enum ClassItem {
    Range(char, char),
    Digit(bool),
    Word(bool),
    Space(bool),
}

/// A compiled pattern.
#[derive(Clone)]
pub struct Pattern {
    source: String,
    node: Node,
    groups: usize,
    icase: bool,
    dotall: bool,
    multiline: bool,
}

impl fmt::Debug for Pattern {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "qr{{{}}}", self.source)
    }
}

struct Parser<'a> {
    chars: Vec<char>,
    pos: usize,
    groups: usize,
    source: &'a str,
}

impl Parser<'_> {
    fn peek(&self) -> Option<char> {
        self.chars.get(self.pos).copied()
    }

    fn fail(&self, what: &str) -> ! {
        panic!("bad pattern {:?} at {}: {what}", self.source, self.pos)
    }

    fn next(&mut self) -> char {
        let c = self.peek().unwrap_or_else(|| self.fail("unexpected end"));
        self.pos += 1;
        c
    }

    fn eat(&mut self, s: &str) -> bool {
        let n = s.chars().count();
        if self.chars[self.pos..].iter().take(n).copied().eq(s.chars()) {
            self.pos += n;
            true
        } else {
            false
        }
    }

    fn alternation(&mut self) -> Node {
        let mut alts = vec![self.concat()];
        while self.peek() == Some('|') {
            self.pos += 1;
            alts.push(self.concat());
        }
        if alts.len() == 1 {
            alts.pop().unwrap_or(Node::Concat(Vec::new()))
        } else {
            Node::Alt(alts)
        }
    }

    fn concat(&mut self) -> Node {
        let mut items = Vec::new();
        while let Some(c) = self.peek() {
            if c == '|' || c == ')' {
                break;
            }
            let atom = self.atom();
            items.push(self.quantified(atom));
        }
        Node::Concat(items)
    }

    fn number(&mut self) -> Option<usize> {
        let start = self.pos;
        while self.peek().is_some_and(|c| c.is_ascii_digit()) {
            self.pos += 1;
        }
        self.chars[start..self.pos]
            .iter()
            .collect::<String>()
            .parse()
            .ok()
    }

    fn quantified(&mut self, atom: Node) -> Node {
        let (min, max) = match self.peek() {
            Some('*') => (0, usize::MAX),
            Some('+') => (1, usize::MAX),
            Some('?') => (0, 1),
            Some('{') => {
                let save = self.pos;
                self.pos += 1;
                let Some(min) = self.number() else {
                    // Not a quantifier: a literal brace.
                    self.pos = save;
                    return atom;
                };
                let max = if self.eat(",") {
                    self.number().unwrap_or(usize::MAX)
                } else {
                    min
                };
                if !self.eat("}") {
                    self.fail("unterminated {n,m}");
                }
                self.pos -= 1;
                (min, max)
            }
            _ => return atom,
        };
        self.pos += 1;
        Node::Repeat(Box::new(atom), min, max)
    }

    fn escape_class(c: char) -> Option<ClassItem> {
        Some(match c {
            'd' => ClassItem::Digit(true),
            'D' => ClassItem::Digit(false),
            'w' => ClassItem::Word(true),
            'W' => ClassItem::Word(false),
            's' => ClassItem::Space(true),
            'S' => ClassItem::Space(false),
            _ => return None,
        })
    }

    fn escaped_char(c: char) -> char {
        match c {
            'n' => '\n',
            'r' => '\r',
            't' => '\t',
            other => other,
        }
    }

    fn atom(&mut self) -> Node {
        match self.next() {
            '.' => Node::Any,
            '^' => Node::Start,
            '$' => Node::End,
            '[' => self.class(),
            '(' => {
                if self.eat("?:") {
                    let inner = self.alternation();
                    self.close();
                    Node::Group(Box::new(inner), None)
                } else if self.eat("?!") {
                    let inner = self.alternation();
                    self.close();
                    Node::NotAhead(Box::new(inner))
                } else {
                    self.groups += 1;
                    let index = self.groups;
                    let inner = self.alternation();
                    self.close();
                    Node::Group(Box::new(inner), Some(index))
                }
            }
            '\\' => {
                let c = self.next();
                if let Some(item) = Self::escape_class(c) {
                    Node::Class(vec![item], false)
                } else if c == 'b' || c == 'B' {
                    Node::WordBoundary(c == 'b')
                } else if let Some(d) = c.to_digit(10).filter(|d| *d > 0) {
                    Node::BackRef(d as usize)
                } else {
                    Node::Char(Self::escaped_char(c))
                }
            }
            c => Node::Char(c),
        }
    }

    fn close(&mut self) {
        if !self.eat(")") {
            self.fail("missing )");
        }
    }

    fn class(&mut self) -> Node {
        let negated = self.eat("^");
        let mut items = Vec::new();
        let mut first = true;
        loop {
            let c = self.next();
            if c == ']' && !first {
                break;
            }
            first = false;
            let lo = if c == '\\' {
                let e = self.next();
                if let Some(item) = Self::escape_class(e) {
                    items.push(item);
                    continue;
                }
                Self::escaped_char(e)
            } else {
                c
            };
            if self.peek() == Some('-') && self.chars.get(self.pos + 1) != Some(&']') {
                self.pos += 1;
                let mut hi = self.next();
                if hi == '\\' {
                    hi = Self::escaped_char(self.next());
                }
                items.push(ClassItem::Range(lo, hi));
            } else {
                items.push(ClassItem::Range(lo, lo));
            }
        }
        Node::Class(items, negated)
    }
}

type Captures = Vec<Option<(usize, usize)>>;

struct Matcher<'p> {
    pattern: &'p Pattern,
    text: Vec<char>,
}

fn is_word(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

impl Matcher<'_> {
    fn same(&self, a: char, b: char) -> bool {
        a == b || (self.pattern.icase && a.to_lowercase().eq(b.to_lowercase()))
    }

    fn in_class(&self, items: &[ClassItem], c: char) -> bool {
        items.iter().any(|item| match *item {
            ClassItem::Range(lo, hi) => {
                (lo..=hi).contains(&c)
                    || (self.pattern.icase
                        && c.to_lowercase()
                            .chain(c.to_uppercase())
                            .any(|x| (lo..=hi).contains(&x)))
            }
            ClassItem::Digit(yes) => c.is_ascii_digit() == yes,
            ClassItem::Word(yes) => is_word(c) == yes,
            ClassItem::Space(yes) => c.is_whitespace() == yes,
        })
    }

    /// Matches `node` at `pos`, then the rest through `k`; backtracks on failure.
    fn m(
        &self,
        node: &Node,
        pos: usize,
        caps: &mut Captures,
        k: &mut dyn FnMut(usize, &mut Captures) -> bool,
    ) -> bool {
        let t = &self.text;
        match node {
            Node::Char(c) => pos < t.len() && self.same(t[pos], *c) && k(pos + 1, caps),
            Node::Any => {
                pos < t.len() && (self.pattern.dotall || t[pos] != '\n') && k(pos + 1, caps)
            }
            Node::Class(items, negated) => {
                pos < t.len() && self.in_class(items, t[pos]) != *negated && k(pos + 1, caps)
            }
            Node::Start => {
                let ok = pos == 0 || (self.pattern.multiline && t[pos - 1] == '\n');
                ok && k(pos, caps)
            }
            Node::End => {
                let ok = pos == t.len()
                    || (t[pos] == '\n' && (self.pattern.multiline || pos + 1 == t.len()));
                ok && k(pos, caps)
            }
            Node::WordBoundary(want) => {
                let before = pos > 0 && is_word(t[pos - 1]);
                let after = pos < t.len() && is_word(t[pos]);
                (before != after) == *want && k(pos, caps)
            }
            Node::Group(inner, index) => {
                let Some(i) = *index else {
                    return self.m(inner, pos, caps, k);
                };
                let saved = caps[i];
                let ok = self.m(inner, pos, caps, &mut |end, caps: &mut Captures| {
                    let before = caps[i];
                    caps[i] = Some((pos, end));
                    if k(end, caps) {
                        return true;
                    }
                    caps[i] = before;
                    false
                });
                if !ok {
                    caps[i] = saved;
                }
                ok
            }
            Node::NotAhead(inner) => {
                let mut probe = caps.clone();
                !self.m(inner, pos, &mut probe, &mut |_, _| true) && k(pos, caps)
            }
            Node::Alt(alts) => alts.iter().any(|a| self.m(a, pos, caps, k)),
            Node::Concat(items) => self.seq(items, pos, caps, k),
            Node::Repeat(inner, min, max) => {
                if let Some(one) = self.single_char(inner) {
                    // Loops, not recursion, for `.*` and the like over long outputs.
                    let mut n = 0;
                    while n < *max && pos + n < t.len() && one(t[pos + n]) {
                        n += 1;
                    }
                    (*min..=n).rev().any(|i| k(pos + i, caps))
                } else {
                    self.repeat(inner, *min, *max, 0, pos, caps, k)
                }
            }
            Node::BackRef(i) => {
                let Some((s, e)) = caps.get(*i).copied().flatten() else {
                    return false;
                };
                let n = e - s;
                pos + n <= t.len()
                    && (0..n).all(|j| self.same(t[pos + j], t[s + j]))
                    && k(pos + n, caps)
            }
        }
    }

    /// The test of a node that always matches exactly one character.
    fn single_char<'n>(&'n self, node: &'n Node) -> Option<Box<dyn Fn(char) -> bool + 'n>> {
        match node {
            Node::Char(c) => Some(Box::new(move |x| self.same(x, *c))),
            Node::Any => Some(Box::new(move |x| self.pattern.dotall || x != '\n')),
            Node::Class(items, negated) => {
                Some(Box::new(move |x| self.in_class(items, x) != *negated))
            }
            _ => None,
        }
    }

    fn seq(
        &self,
        items: &[Node],
        pos: usize,
        caps: &mut Captures,
        k: &mut dyn FnMut(usize, &mut Captures) -> bool,
    ) -> bool {
        match items.split_first() {
            None => k(pos, caps),
            Some((first, rest)) => self.m(first, pos, caps, &mut |p, caps: &mut Captures| {
                self.seq(rest, p, caps, k)
            }),
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn repeat(
        &self,
        inner: &Node,
        min: usize,
        max: usize,
        done: usize,
        pos: usize,
        caps: &mut Captures,
        k: &mut dyn FnMut(usize, &mut Captures) -> bool,
    ) -> bool {
        // Greedy: one more first; an empty iteration past the minimum ends the loop.
        if done < max
            && self.m(inner, pos, caps, &mut |p, caps: &mut Captures| {
                (p != pos || done < min) && self.repeat(inner, min, max, done + 1, p, caps, k)
            })
        {
            return true;
        }
        done >= min && k(pos, caps)
    }
}

impl Pattern {
    /// Compiles a Perl pattern (panics on a malformed one: patterns are test code).
    pub fn new(source: &str) -> Pattern {
        let mut rest = source;
        let (mut icase, mut dotall, mut multiline) = (false, false, false);
        loop {
            if let Some(r) = rest.strip_prefix("(?i)") {
                icase = true;
                rest = r;
            } else if let Some(r) = rest.strip_prefix("(?s)") {
                dotall = true;
                rest = r;
            } else if let Some(r) = rest.strip_prefix("(?m)") {
                multiline = true;
                rest = r;
            } else {
                break;
            }
        }
        let mut p = Parser {
            chars: rest.chars().collect(),
            pos: 0,
            groups: 0,
            source,
        };
        let node = p.alternation();
        if p.pos != p.chars.len() {
            p.fail("unbalanced )");
        }
        Pattern {
            source: source.to_string(),
            node,
            groups: p.groups,
            icase,
            dotall,
            multiline,
        }
    }

    /// The first match anywhere in `text`: the whole match and the groups.
    pub fn captures(&self, text: &str) -> Option<Vec<Option<String>>> {
        let matcher = Matcher {
            pattern: self,
            text: text.chars().collect(),
        };
        for start in 0..=matcher.text.len() {
            let mut caps: Captures = vec![None; self.groups + 1];
            let mut end = None;
            if matcher.m(&self.node, start, &mut caps, &mut |e, _| {
                end = Some(e);
                true
            }) {
                caps[0] = end.map(|e| (start, e));
                return Some(
                    caps.iter()
                        .map(|c| c.map(|(s, e)| matcher.text[s..e].iter().collect()))
                        .collect(),
                );
            }
        }
        None
    }

    /// Whether the pattern matches somewhere in `text`.
    pub fn is_match(&self, text: &str) -> bool {
        self.captures(text).is_some()
    }
}

/// Asserts that every pattern matches `text` (as Test::More's `like`), naming `what`.
pub fn assert_like(text: &str, patterns: &[&str], what: &str) {
    for p in patterns {
        assert!(
            Pattern::new(p).is_match(text),
            "{what}: qr{{{p}}} does not match:\n{text}"
        );
    }
}

/// Asserts that no pattern matches `text` (as Test::More's `unlike`).
pub fn assert_unlike(text: &str, patterns: &[&str], what: &str) {
    for p in patterns {
        assert!(
            !Pattern::new(p).is_match(text),
            "{what}: qr{{{p}}} unexpectedly matches:\n{text}"
        );
    }
}

/// The pattern matcher the cases rely on must also say no.
#[test]
fn patterns_reject_what_they_should() {
    let cases: &[(&str, &str, bool)] = &[
        ("^$", "", true),
        ("^$", "\n", true),
        ("^$", "x", false),
        ("(?i)^$", "\n\n", false),
        (r"processed: (\d+)/\1", "processed: 12/12", true),
        (r"processed: (\d+)/\1\b", "processed: 12/123", false),
        (r"^[01] \d{1,2} \d+$", "1 123 4", false),
        (r"^[01] \d{1,2} \d+$", "1 12 4\n", true),
        ("(?i)missing ARGUMENT", "Missing argument", true),
        ("(a|b)c.*x", "zzbcQQx", true),
        ("(?s)a.*b", "a\nb", true),
        ("a.*b", "a\nb", false),
        ("(?m)^b$", "a\nb\nc", true),
        (r"int 17\b", "int 170", false),
        ("x(?!y)", "xy xz", true),
        ("x(?!y)", "xy", false),
    ];
    for (p, text, want) in cases {
        assert_eq!(
            Pattern::new(p).is_match(text),
            *want,
            "qr{{{p}}} on {text:?}"
        );
    }
}
