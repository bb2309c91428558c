//! exprparse.y's operator precedence, written down once ([`LEVELS`]): which pest rule
//! and which lexer tokens each operator is, its level, associativity and fixity. The
//! Pratt parser that folds the tree ([`pratt`]) and the replay of bison's stack
//! (`checks.rs`: [`binary_level`], [`prefix_level`], [`left_assoc`],
//! [`non_associative_infix`]) are both derived
//! from it, and a test checks that `script.pest`'s operator rules are exactly these.

use pest::pratt_parser::{Assoc as PrattAssoc, Op, PrattParser};

use super::lexer::Tok;
use crate::parser::grammar::Rule;

/// A bison precedence declaration's associativity.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Assoc {
    Left,
    Right,
    /// `%nonassoc`
    None,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Fixity {
    Infix,
    Prefix,
    Postfix,
}

/// One operator rule of `script.pest`.
#[derive(Debug)]
pub(super) struct Operator {
    pub rule: Rule,
    /// The lexer tokens the rule matches (the first token of `is_test`).
    pub tokens: &'static [Tok],
    /// exprparse.y's precedence level, lowest 1 (`%left OR_OP`).
    pub level: u8,
    pub assoc: Assoc,
    pub fixity: Fixity,
}

const fn op(
    rule: Rule,
    tokens: &'static [Tok],
    level: u8,
    assoc: Assoc,
    fixity: Fixity,
) -> Operator {
    Operator {
        rule,
        tokens,
        level,
        assoc,
        fixity,
    }
}

/// exprparse.y's declarations, lowest first:
///
/// ```text
/// %left OR_OP / %left AND_OP / %right NOT_OP / %nonassoc IS_OP ISNULL_OP NOTNULL_OP
/// %nonassoc '<' '>' '=' LE_OP GE_OP NE_OP / %left '|' '#' '&' LS_OP RS_OP '~'
/// %left '+' '-' / %left '*' '/' '%' / %right UNARY
/// ```
///
/// `~` is declared with the bit operators, so its operand takes `+ - * / %` but not a
/// bit operator; unary `-`/`+` have the `UNARY` level.
pub(super) const LEVELS: &[Operator] = &[
    op(Rule::op_or, &[Tok::Or], 1, Assoc::Left, Fixity::Infix),
    op(Rule::op_and, &[Tok::And], 2, Assoc::Left, Fixity::Infix),
    op(Rule::not, &[Tok::Not], 3, Assoc::Right, Fixity::Prefix),
    op(Rule::is_test, &[Tok::Is], 4, Assoc::None, Fixity::Postfix),
    op(
        Rule::isnull,
        &[Tok::IsNull],
        4,
        Assoc::None,
        Fixity::Postfix,
    ),
    op(
        Rule::notnull,
        &[Tok::NotNull],
        4,
        Assoc::None,
        Fixity::Postfix,
    ),
    op(
        Rule::op_cmp,
        &[Tok::Lt, Tok::Gt, Tok::Eq, Tok::Le, Tok::Ge, Tok::Ne],
        5,
        Assoc::None,
        Fixity::Infix,
    ),
    op(
        Rule::op_bit,
        &[Tok::BitOr, Tok::Hash, Tok::BitAnd, Tok::LShift, Tok::RShift],
        6,
        Assoc::Left,
        Fixity::Infix,
    ),
    op(Rule::bitnot, &[Tok::Tilde], 6, Assoc::Left, Fixity::Prefix),
    op(
        Rule::op_add,
        &[Tok::Plus, Tok::Minus],
        7,
        Assoc::Left,
        Fixity::Infix,
    ),
    op(
        Rule::op_mul,
        &[Tok::Star, Tok::Slash, Tok::Percent],
        8,
        Assoc::Left,
        Fixity::Infix,
    ),
    op(Rule::neg, &[Tok::Minus], 9, Assoc::Right, Fixity::Prefix),
    op(Rule::pos, &[Tok::Plus], 9, Assoc::Right, Fixity::Prefix),
];

/// The level of a binary (infix or postfix) operator token.
pub(super) fn binary_level(kind: Tok) -> Option<u8> {
    LEVELS
        .iter()
        .find(|o| o.fixity != Fixity::Prefix && o.tokens.contains(&kind))
        .map(|o| o.level)
}

/// The level of a prefix operator token.
pub(super) fn prefix_level(kind: Tok) -> Option<u8> {
    LEVELS
        .iter()
        .find(|o| o.fixity == Fixity::Prefix && o.tokens.contains(&kind))
        .map(|o| o.level)
}

/// Whether a token is a non-associative infix operator (a comparison), of which an
/// unparenthesised chain is a syntax error.
pub(super) fn non_associative_infix(kind: Tok) -> bool {
    LEVELS
        .iter()
        .any(|o| o.fixity == Fixity::Infix && o.assoc == Assoc::None && o.tokens.contains(&kind))
}

/// Whether a level is left-associative, so that `a op b` is reduced before a next
/// operator of the same level.
pub(super) fn left_assoc(level: u8) -> bool {
    LEVELS
        .iter()
        .any(|o| o.level == level && o.assoc == Assoc::Left)
}

/// The Pratt parser for [`LEVELS`]. pest's Pratt parser lets a prefix operator's
/// operand take every operator of its own rank, so each prefix operator ranks just
/// above its bison level: its operand then takes only tighter operators, which is
/// bison's reduction for a level that is not right-associative (`~a | b` is
/// `(~a) | b`) and the same as bison's otherwise (no infix operator shares a
/// right-associative level). Comparisons are non-associative in bison; chains are
/// rejected before folding, so `Left` never matters for them.
pub(super) fn pratt() -> PrattParser<Rule> {
    let rank = |o: &Operator| 2 * u16::from(o.level) + u16::from(o.fixity == Fixity::Prefix);
    let mut operators: Vec<&Operator> = LEVELS.iter().collect();
    operators.sort_by_key(|o| rank(o));
    let mut pratt = PrattParser::new();
    let mut i = 0;
    while i < operators.len() {
        let same_rank = operators[i..]
            .iter()
            .take_while(|o| rank(o) == rank(operators[i]))
            .count();
        let group = operators[i..i + same_rank]
            .iter()
            .map(|o| match o.fixity {
                Fixity::Infix => Op::infix(o.rule, PrattAssoc::Left),
                Fixity::Prefix => Op::prefix(o.rule),
                Fixity::Postfix => Op::postfix(o.rule),
            })
            .reduce(|a, b| a | b);
        if let Some(group) = group {
            pratt = pratt.op(group);
        }
        i += same_rank;
    }
    pratt
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    use pest::Parser;

    use super::*;
    use crate::parser::expr::lexer::lex;
    use crate::parser::grammar::Grammar;

    const GRAMMAR: &str = include_str!("../../script.pest");

    /// The alternatives of a silent choice rule of `script.pest` (`name = _{ a | b }`).
    fn alternatives(name: &str) -> BTreeSet<String> {
        let line = GRAMMAR
            .lines()
            .find(|l| l.split_whitespace().next() == Some(name))
            .unwrap_or_else(|| panic!("no rule {name} in script.pest"));
        let body = line.split_once("_{").expect("a silent rule").1;
        body.trim_end_matches('}')
            .split('|')
            .map(|alt| alt.trim().to_string())
            .collect()
    }

    fn table(fixity: Fixity) -> BTreeSet<String> {
        LEVELS
            .iter()
            .filter(|o| o.fixity == fixity)
            .map(|o| format!("{:?}", o.rule))
            .collect()
    }

    #[test]
    fn grammar_operator_rules_are_the_table() {
        assert_eq!(alternatives("prefix"), table(Fixity::Prefix));
        assert_eq!(alternatives("infix"), table(Fixity::Infix));
        assert_eq!(alternatives("postfix"), table(Fixity::Postfix));
    }

    #[test]
    fn every_operator_spelling_lexes_to_its_rules_tokens() {
        // every spelling the lexer knows for an operator, with the rules that take it
        let spellings: &[(&str, &[Rule])] = &[
            ("or", &[Rule::op_or]),
            ("AND", &[Rule::op_and]),
            ("not", &[Rule::not]),
            ("is null", &[Rule::is_test]),
            ("is not true", &[Rule::is_test]),
            ("isnull", &[Rule::isnull]),
            ("NotNull", &[Rule::notnull]),
            ("<", &[Rule::op_cmp]),
            (">", &[Rule::op_cmp]),
            ("=", &[Rule::op_cmp]),
            ("<=", &[Rule::op_cmp]),
            (">=", &[Rule::op_cmp]),
            ("<>", &[Rule::op_cmp]),
            ("!=", &[Rule::op_cmp]),
            ("|", &[Rule::op_bit]),
            ("#", &[Rule::op_bit]),
            ("&", &[Rule::op_bit]),
            ("<<", &[Rule::op_bit]),
            (">>", &[Rule::op_bit]),
            ("~", &[Rule::bitnot]),
            ("+", &[Rule::op_add, Rule::pos]),
            ("-", &[Rule::op_add, Rule::neg]),
            ("*", &[Rule::op_mul]),
            ("/", &[Rule::op_mul]),
            ("%", &[Rule::op_mul]),
        ];
        let mut covered = BTreeSet::new();
        for (text, rules) in spellings {
            let first = lex(text.as_bytes(), 0).tokens[0].kind;
            let expected: BTreeSet<String> = rules.iter().map(|r| format!("{r:?}")).collect();
            let listed: BTreeSet<String> = LEVELS
                .iter()
                .filter(|o| o.tokens.contains(&first))
                .map(|o| format!("{:?}", o.rule))
                .collect();
            assert_eq!(listed, expected, "{text}");
            for rule in *rules {
                let parsed = Grammar::parse(*rule, text).map(|p| p.as_str().len());
                assert_eq!(parsed, Ok(text.len()), "{rule:?} takes {text}");
                covered.insert(format!("{rule:?}/{first:?}"));
            }
        }
        for o in LEVELS {
            for t in o.tokens {
                assert!(covered.contains(&format!("{:?}/{t:?}", o.rule)), "{t:?}");
            }
        }
    }

    #[test]
    fn bison_levels_as_the_replay_reads_them() {
        assert_eq!(binary_level(Tok::Minus), Some(7));
        assert_eq!(prefix_level(Tok::Minus), Some(9));
        assert_eq!(prefix_level(Tok::Tilde), Some(6));
        assert_eq!(prefix_level(Tok::Not), Some(3));
        assert_eq!(binary_level(Tok::NotNull), Some(4));
        assert_eq!(binary_level(Tok::Tilde), None);
        let left: Vec<u8> = (1..=9).filter(|&l| left_assoc(l)).collect();
        assert_eq!(left, [1, 2, 6, 7, 8]);
    }
}
