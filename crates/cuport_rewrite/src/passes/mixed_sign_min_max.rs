//! CUDA's `min`/`max` for a signed and an unsigned integer of one rank
//! (`min(int, unsigned int)`, which compares as unsigned), where the
//! target has no such overload (`[mixed-sign-min-max]` of its profile; HIP
//! resolves the call to a floating-point template). Where the file's text
//! says both arguments' types, the signed one is cast to the unsigned type,
//! which is the conversion CUDA's overload makes: the call then means on
//! the target what it meant on CUDA. A call whose types the text does not
//! settle is left alone.
use cuport_model::{MixedSignMinMax, TextRange};

use super::calls::plain_calls;
use crate::diagnostic::codes;
use crate::edit::{Edit, EditKind};
use crate::integer_types::{DeclaredIntegers, IntegerType};
use crate::plan::{FileInput, Planned};
use crate::source_text::{after_literal, closing_bracket, is_word};

pub(super) fn cast_mixed_sign_arguments(input: &FileInput<'_>, planned: &mut Planned) {
    let targets = input.options.targets();
    let Some(profile) = targets
        .iter()
        .map(|t| t.profile())
        .find(|p| p.mixed_sign_min_max.cast.is_some())
    else {
        return;
    };
    let facts = &profile.mixed_sign_min_max;
    let src = input.src;
    // Most files call neither: a byte search spares them the word scan.
    if !facts.calls.iter().any(|c| mentions_call(src, c)) {
        return;
    }
    let calls = plain_calls(input, |w| facts.calls.iter().any(|c| c == w));
    if calls.is_empty() {
        return;
    }
    let declared = DeclaredIntegers::of_words(
        src,
        input.code_words(),
        &profile.builtin_coordinates.variables,
    );
    let pairs: Vec<[IntegerType; 2]> = facts
        .pairs
        .iter()
        .filter_map(|[s, u]| Some([IntegerType::parse(s)?, IntegerType::parse(u)?]))
        .collect();
    for (callee, name) in calls {
        let Some(([first, second], close)) = two_arguments(src, callee.end) else {
            continue;
        };
        let types = [first, second].map(|a| declared.type_of(&src[a.start..a.end], a.start));
        let Some((signed, unsigned)) = lacking_pair(&pairs, types) else {
            continue;
        };
        let argument = if signed == 0 { first } else { second };
        let [open_cast, close_cast] = cast_edits(facts, argument, unsigned, name);
        if !cuts_an_edit(planned, argument) {
            planned.edits.extend([open_cast, close_cast]);
            continue;
        }
        let call = TextRange::new(callee.start, close + 1);
        cast_inside_a_rewrite(src, planned, call, &[open_cast, close_cast]);
    }
}

/// Whether `name(` (spaces allowed before the parenthesis) appears in
/// `src` as a word, comments and literals included: a cheap test before
/// the word scan.
fn mentions_call(src: &[u8], name: &str) -> bool {
    memchr::memmem::find_iter(src, name.as_bytes()).any(|at| {
        let starts_word = at == 0 || !is_word(&src[at - 1]);
        let after = &src[at + name.len()..];
        let called = after
            .iter()
            .find(|b| !b.is_ascii_whitespace())
            .is_some_and(|&b| b == b'(');
        starts_word && called
    })
}

/// A call inside the text a template rewrite wrote (`__ldcs(&x[min(C - 1,
/// i)])` written `(*(&x[min(C - 1, i)]))`): the cast goes into that text,
/// where the call's text occurs in it once as written.
fn cast_inside_a_rewrite(src: &[u8], planned: &mut Planned, call: TextRange, cast: &[Edit; 2]) {
    let Some(rewrite) = planned
        .edits
        .iter_mut()
        .find(|e| e.range.start <= call.start && call.end <= e.range.end)
    else {
        return;
    };
    let written = String::from_utf8_lossy(&src[call.start..call.end]);
    if rewrite.replacement.matches(written.as_ref()).count() != 1 {
        return;
    }
    let local = |at: usize| at - call.start;
    let [open, close] = cast;
    let mut cast_call = written.clone().into_owned();
    cast_call.insert_str(local(close.range.start), &close.replacement);
    cast_call.insert_str(local(open.range.start), &open.replacement);
    rewrite.replacement = rewrite
        .replacement
        .replacen(written.as_ref(), &cast_call, 1);
}

/// Which argument is the signed one of a pair the profile lists
/// (`[signed, unsigned]`), and the unsigned type it is cast to.
fn lacking_pair(
    pairs: &[[IntegerType; 2]],
    types: [Option<IntegerType>; 2],
) -> Option<(usize, IntegerType)> {
    let [Some(a), Some(b)] = types else {
        return None;
    };
    let (signed, unsigned) = match (a.is_unsigned(), b.is_unsigned()) {
        (false, true) => (0, b),
        (true, false) => (1, a),
        _ => return None,
    };
    let signed_type = if signed == 0 { a } else { b };
    let listed = pairs.contains(&[signed_type, unsigned]);
    listed.then_some((signed, unsigned))
}

/// Whether a planned edit starts or ends strictly inside `range`'s
/// boundaries, so inserting before and after it would cut that edit.
fn cuts_an_edit(planned: &Planned, range: TextRange) -> bool {
    planned.edits.iter().any(|e| {
        let inside = |at: usize| e.range.start < at && at < e.range.end;
        inside(range.start) || inside(range.end)
    })
}

/// The cast as two insertions around the argument, so edits inside it
/// (a renamed call) still apply.
fn cast_edits(
    facts: &MixedSignMinMax,
    argument: TextRange,
    unsigned: IntegerType,
    name: &str,
) -> [Edit; 2] {
    let cast = facts
        .cast
        .as_deref()
        .unwrap_or_default()
        .replace("{type}", unsigned.spelling());
    let insert = |at: usize, text: String| Edit {
        range: TextRange::new(at, at),
        replacement: text,
        code: codes::MIXED_SIGN_CAST,
        cuda_name: name.to_owned(),
        kind: EditKind::Port,
    };
    [
        insert(argument.start, format!("{cast}(")),
        insert(argument.end, ")".to_owned()),
    ]
}

/// The two arguments of the call whose name ends at `name_end`, without
/// their surrounding spaces, and its closing `)`; `None` for any other
/// count.
fn two_arguments(src: &[u8], name_end: usize) -> Option<([TextRange; 2], usize)> {
    let open = name_end + src[name_end..].iter().position(|&b| b == b'(')?;
    let close = closing_bracket(src, open, b'(', b')')?;
    let mut pieces = Vec::new();
    let (mut depth, mut start, mut at) = (0usize, open + 1, open + 1);
    while at < close {
        match src[at] {
            b'(' | b'[' | b'{' => depth += 1,
            b')' | b']' | b'}' => depth = depth.saturating_sub(1),
            b',' if depth == 0 => {
                pieces.push(trimmed(src, start, at));
                start = at + 1;
            }
            quote @ (b'"' | b'\'') => {
                at = after_literal(src, at, close, quote);
                continue;
            }
            _ => {}
        }
        at += 1;
    }
    pieces.push(trimmed(src, start, close));
    match pieces.as_slice() {
        [a, b] if !a.is_empty() && !b.is_empty() => Some(([*a, *b], close)),
        _ => None,
    }
}

fn trimmed(src: &[u8], start: usize, end: usize) -> TextRange {
    let lead = src[start..end]
        .iter()
        .take_while(|b| b.is_ascii_whitespace())
        .count();
    let trail = src[start + lead..end]
        .iter()
        .rev()
        .take_while(|b| b.is_ascii_whitespace())
        .count();
    TextRange::new(start + lead, end - trail)
}

#[cfg(test)]
mod tests {
    use cuport_model::{Language, Target};

    use crate::integer_types::IntegerType;
    use crate::options::MigrateOptions;
    use crate::passes::testing::run_pass;
    use crate::passes::CAST_MIXED_SIGN_ARGUMENTS;

    fn ported(src: &str, options: &MigrateOptions) -> String {
        let planned = run_pass(&CAST_MIXED_SIGN_ARGUMENTS, Language::Cuda, src, options);
        let mut out = src.to_owned();
        let mut edits = planned.edits;
        edits.sort_by_key(|e| std::cmp::Reverse((e.range.start, e.range.end)));
        for edit in edits {
            out.replace_range(edit.range.start..edit.range.end, &edit.replacement);
        }
        out
    }

    #[test]
    fn the_signed_argument_is_cast_to_the_unsigned_type_on_hip() {
        let src = "__global__ void k(float* x, int C, size_t n, long s) {\n\
                   \x20 int i = threadIdx.x; int u = 2;\n\
                   \x20 x[min(C - 1, i + u*blockDim.x)] = 0;\n\
                   \x20 x[max(n, s)] = 1;\n\
                   \x20 x[min(C, u)] = 2;\n}\n\
                   unsigned host(int a, unsigned b) { return max(a, b); }\n";
        let hip = ported(src, &MigrateOptions::new(Target::Hip));
        assert!(
            hip.contains("x[min(static_cast<unsigned int>(C - 1), i + u*blockDim.x)]"),
            "{hip}"
        );
        assert!(
            hip.contains("x[max(n, static_cast<unsigned long>(s))]"),
            "{hip}"
        );
        assert!(hip.contains("x[min(C, u)]"), "{hip}");
        assert!(
            hip.contains("return max(static_cast<unsigned int>(a), b);"),
            "{hip}"
        );
        let dual = ported(src, &MigrateOptions::dual_stack(vec![Target::Hip]));
        assert_eq!(dual, hip, "the cast means the same on CUDA");
        assert_eq!(ported(src, &MigrateOptions::new(Target::Musa)), src);
    }

    #[test]
    fn calls_whose_types_the_text_does_not_settle_are_left_alone() {
        let src = "#define N 64\n__global__ void k(float* x, int C, float f, int* p) {\n\
                   \x20 x[0] = min(f, blockDim.x); x[1] = min(N, blockDim.x);\n\
                   \x20 x[2] = min(p[0], blockDim.x); x[3] = std::min(C, 4);\n\
                   \x20 x[4] = min(C, 4ll); x[5] = min(C, 4ull);\n}\n";
        assert_eq!(ported(src, &MigrateOptions::new(Target::Hip)), src);
    }

    #[test]
    fn every_listed_pair_is_a_signed_and_an_unsigned_integer_type() {
        for target in Target::ALL {
            for [signed, unsigned] in &target.profile().mixed_sign_min_max.pairs {
                let s = IntegerType::parse(signed);
                let u = IntegerType::parse(unsigned);
                assert!(
                    s.is_some_and(|t| !t.is_unsigned()) && u.is_some_and(IntegerType::is_unsigned),
                    "{target}: [{signed}, {unsigned}]"
                );
            }
        }
    }

    #[test]
    fn a_file_with_its_own_min_keeps_its_calls() {
        let src = "#define min(a, b) ((a) < (b) ? (a) : (b))\n\
                   __global__ void k(int* x, int C) { x[min(C, blockDim.x)] = 0; }\n";
        assert_eq!(ported(src, &MigrateOptions::new(Target::Hip)), src);
    }
}
