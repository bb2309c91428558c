//! The `\if` stack of one transaction (pgbench's use of `fe_utils/conditional.c`):
//! which commands run, which are skipped, and which conditions get evaluated. A
//! condition inside a branch that is not taken is never evaluated, so its errors and
//! random draws never happen.
//!
//! Skipped commands are not walked one by one: [`branch_jumps`] gives each `\if`,
//! `\elif` and `\else` the place of the next branch of its own `\if`, where the run
//! loop goes as soon as a conditional leaves it in a branch that does not run. So a
//! generated script's tree of `\if`s (a workload's command per table, say) costs
//! the branches it takes, not its length.

use pgbench_script::ast::{Command, CommandKind, MetaCommand};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Branch {
    /// This branch runs.
    True,
    /// This branch does not run; a later `\elif`/`\else` may.
    False,
    /// Nothing in this `\if` runs (an outer branch is skipped, or a branch ran).
    Ignored,
    /// In the `\else` of an `\if` none of whose branches ran.
    ElseTrue,
    /// In the `\else` of an `\if` one of whose branches ran.
    ElseFalse,
}

/// What to do with a meta-command given the stack.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Effect {
    /// Run it (any non-conditional command in a running branch).
    Execute,
    /// Skip it.
    Skip,
    /// Evaluate its condition, then [`CondStack::apply`] the truth value.
    Evaluate,
    /// [`CondStack::apply`] it without evaluating anything.
    Apply,
}

/// The stack of open `\if` blocks.
#[derive(Debug, Clone)]
pub struct CondStack {
    stack: Vec<Branch>,
    /// Whether the top branch runs: the run loop asks before every command, the
    /// stack moves only at conditionals.
    active: bool,
}

impl Default for CondStack {
    fn default() -> CondStack {
        CondStack {
            stack: Vec::new(),
            active: true,
        }
    }
}

impl CondStack {
    /// Whether commands run here.
    #[inline]
    pub fn active(&self) -> bool {
        debug_assert_eq!(self.active, self.top_runs());
        self.active
    }

    /// Whether the top branch runs, from the stack itself.
    fn top_runs(&self) -> bool {
        matches!(
            self.stack.last(),
            None | Some(Branch::True | Branch::ElseTrue)
        )
    }

    /// Back to no `\if` open, keeping the stack's room for the next transaction.
    pub fn reset(&mut self) {
        self.stack.clear();
        self.active = true;
    }

    /// What a meta-command of this role does at this point.
    #[inline]
    pub fn effect(&self, role: Role) -> Effect {
        match role {
            Role::If if self.active() => Effect::Evaluate,
            Role::If => Effect::Apply,
            Role::Elif if self.stack.last() == Some(&Branch::False) => Effect::Evaluate,
            Role::Elif | Role::Else | Role::Endif => Effect::Apply,
            Role::Other if self.active() => Effect::Execute,
            Role::Other => Effect::Skip,
        }
    }

    /// Moves the stack for a conditional command of this role; `truth` is the
    /// evaluated condition when [`CondStack::effect`] said [`Effect::Evaluate`].
    pub fn apply(&mut self, role: Role, truth: bool) {
        let evaluated = self.effect(role) == Effect::Evaluate;
        match role {
            Role::If => self.stack.push(if !evaluated {
                Branch::Ignored
            } else if truth {
                Branch::True
            } else {
                Branch::False
            }),
            Role::Elif => {
                if let Some(top) = self.stack.last_mut() {
                    *top = match *top {
                        Branch::True => Branch::Ignored,
                        Branch::False if truth => Branch::True,
                        other => other,
                    };
                }
            }
            Role::Else => {
                if let Some(top) = self.stack.last_mut() {
                    *top = match *top {
                        Branch::False => Branch::ElseTrue,
                        _ => Branch::ElseFalse,
                    };
                }
            }
            Role::Endif => {
                self.stack.pop();
            }
            Role::Other => {}
        }
        self.active = self.top_runs();
    }
}

/// A command's part in `\if` blocks, decoded once per script: the run loop asks it of
/// every command, and a byte is cheaper to match than the command.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    If,
    Elif,
    Else,
    Endif,
    /// Any other command.
    Other,
}

impl Role {
    pub fn of(meta: &MetaCommand) -> Role {
        match meta {
            MetaCommand::If(_) => Role::If,
            MetaCommand::Elif(_) => Role::Elif,
            MetaCommand::Else => Role::Else,
            MetaCommand::Endif => Role::Endif,
            _ => Role::Other,
        }
    }

    /// The role of each command of a script.
    pub fn of_each(commands: &[Command]) -> Vec<Role> {
        commands
            .iter()
            .map(|c| match &c.kind {
                CommandKind::Meta(meta) => Role::of(meta),
                CommandKind::Sql(_) => Role::Other,
            })
            .collect()
    }
}

/// For each command, where a run whose branch stops running there goes next: for an
/// `\if`, `\elif` or `\else`, the next `\elif`, `\else` or `\endif` of the same `\if`;
/// for any other command the one after it. Everything in between is in the branch
/// being skipped (nested `\if` blocks included, which are balanced: the parser checks
/// the nesting), so jumping there is what skipping each command would come to.
pub fn branch_jumps(commands: &[Command]) -> Vec<usize> {
    let mut jumps: Vec<usize> = (1..=commands.len()).collect();
    // the last branch marker of each open \if
    let mut open: Vec<usize> = Vec::new();
    for (i, command) in commands.iter().enumerate() {
        let CommandKind::Meta(meta) = &command.kind else {
            continue;
        };
        match meta {
            MetaCommand::If(_) => open.push(i),
            MetaCommand::Elif(_) | MetaCommand::Else | MetaCommand::Endif => {
                if let Some(last) = open.last_mut() {
                    jumps[*last] = i;
                    *last = i;
                }
                if matches!(meta, MetaCommand::Endif) {
                    open.pop();
                }
            }
            _ => {}
        }
    }
    jumps
}

#[cfg(test)]
mod tests {
    use super::*;
    use pgbench_script::ast::{Expr, Value};

    fn cond() -> Expr {
        Expr::Const(Value::Bool(true))
    }

    /// Runs a sequence of conditionals with the given truth values for the evaluated
    /// ones; returns which of the marker commands (`None` entries) ran.
    fn run(seq: &[(Option<MetaCommand>, bool)]) -> Vec<bool> {
        let mut s = CondStack::default();
        let mut ran = Vec::new();
        for (meta, truth) in seq {
            match meta {
                Some(m) => {
                    if s.effect(Role::of(m)) != Effect::Skip {
                        s.apply(Role::of(m), *truth);
                    }
                }
                None => ran.push(s.active()),
            }
        }
        ran
    }

    #[test]
    fn branches_run_as_in_pgbench() {
        use MetaCommand::*;
        // \if false / A / \elif true / B / \elif true / C / \else / D / \endif / E
        let seq = vec![
            (Some(If(cond())), false),
            (None, false),
            (Some(Elif(cond())), true),
            (None, false),
            (Some(Elif(cond())), true),
            (None, false),
            (Some(Else), false),
            (None, false),
            (Some(Endif), false),
            (None, false),
        ];
        assert_eq!(run(&seq), vec![false, true, false, false, true]);
    }

    #[test]
    fn nested_ifs_in_skipped_branches_are_not_evaluated() {
        let mut s = CondStack::default();
        s.apply(Role::If, false);
        assert_eq!(s.effect(Role::If), Effect::Apply);
        s.apply(Role::If, true);
        assert!(!s.active());
        assert_eq!(s.effect(Role::Elif), Effect::Apply);
        s.apply(Role::Else, false);
        assert!(!s.active(), "else of an ignored if stays skipped");
        s.apply(Role::Endif, false);
        s.apply(Role::Else, false);
        assert!(s.active(), "outer else runs");
    }

    /// The cached answer of `active` follows every move of the stack (its debug
    /// assertion compares it with the stack), and a reset runs again.
    #[test]
    fn active_follows_the_stack_and_a_reset() {
        use MetaCommand::*;
        let mut s = CondStack::default();
        assert!(s.active());
        for (meta, truth, runs) in [
            (If(cond()), true, true),
            (If(cond()), false, false),
            (Elif(cond()), false, false),
            (Else, false, true),
            (Endif, false, true),
            (Elif(cond()), true, false),
            (If(cond()), true, false),
        ] {
            s.apply(Role::of(&meta), truth);
            assert_eq!(s.active(), runs, "after {meta:?}");
        }
        s.reset();
        assert!(s.active());
        assert_eq!(s.effect(Role::If), Effect::Evaluate);
    }

    #[test]
    fn jumps_go_to_the_next_branch_of_the_same_if() {
        let text = "\\if 1\nSELECT 1;\n\\if 0\nSELECT 2;\n\\else\nSELECT 3;\n\\endif\n\\elif 1\nSELECT 4;\n\\else\nSELECT 5;\n\\endif\nSELECT 6;\n";
        let script = pgbench_script::parse_script("t", "t", text).unwrap();
        // 0 \if, 1 S1, 2 \if, 3 S2, 4 \else, 5 S3, 6 \endif, 7 \elif, 8 S4, 9 \else,
        // 10 S5, 11 \endif, 12 S6
        assert_eq!(
            branch_jumps(&script.commands),
            vec![7, 2, 4, 4, 6, 6, 7, 9, 9, 11, 11, 12, 13]
        );
    }
}
