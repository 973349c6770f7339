//! Tracks `#if`/`#ifdef`/`#elif`/`#else`/`#endif` so that every site knows
//! the branch it sits in. All branches are analysed: cuport ports every
//! configuration, not the one a particular compiler would see.
use crate::site::Condition;

#[derive(Debug, Default)]
pub(crate) struct ConditionTracker {
    pub(crate) conditions: Vec<Condition>,
    chains: Vec<Chain>,
}

/// One `#if ... #endif` group: the conditions of the branches seen so far.
#[derive(Debug)]
struct Chain {
    taken: Vec<String>,
    frame: u32,
    parent: Option<u32>,
}

impl ConditionTracker {
    /// The innermost branch the current position is in.
    pub(crate) fn current(&self) -> Option<u32> {
        self.chains.last().map(|c| c.frame)
    }

    /// `#if COND`, or `#ifdef`/`#ifndef` already turned into `defined(X)` text.
    pub(crate) fn open(&mut self, condition: String, line: u32) {
        let parent = self.current();
        let frame = self.push(condition.clone(), line, parent);
        self.chains.push(Chain {
            taken: vec![condition],
            frame,
            parent,
        });
    }

    /// `#elif COND` (or `#elifdef` text); `None` for `#else`.
    pub(crate) fn next_branch(&mut self, condition: Option<String>, line: u32) {
        let Some(chain) = self.chains.last() else {
            return;
        };
        let mut text: Vec<String> = chain.taken.iter().map(|c| format!("!({c})")).collect();
        if let Some(condition) = &condition {
            text.push(condition.clone());
        }
        let parent = chain.parent;
        let frame = self.push(text.join(" && "), line, parent);
        if let Some(chain) = self.chains.last_mut() {
            chain.frame = frame;
            if let Some(condition) = condition {
                chain.taken.push(condition);
            }
        }
    }

    pub(crate) fn close(&mut self) {
        self.chains.pop();
    }

    fn push(&mut self, text: String, line: u32, parent: Option<u32>) -> u32 {
        let index = u32::try_from(self.conditions.len()).unwrap_or(u32::MAX);
        self.conditions.push(Condition { text, line, parent });
        index
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn else_negates_every_earlier_branch() {
        let mut t = ConditionTracker::default();
        t.open("A".into(), 1);
        t.next_branch(Some("B".into()), 2);
        t.next_branch(None, 3);
        let frame = t.current().unwrap_or_default() as usize;
        assert_eq!(t.conditions[frame].text, "!(A) && !(B)");
        t.close();
        assert_eq!(t.current(), None);
    }

    #[test]
    fn nesting_records_parents() {
        let mut t = ConditionTracker::default();
        t.open("A".into(), 1);
        t.open("B".into(), 2);
        assert_eq!(t.conditions[1].parent, Some(0));
        t.close();
        t.close();
        t.close(); // a stray #endif is ignored
        assert_eq!(t.current(), None);
    }
}
