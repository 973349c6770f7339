//! The `register` storage class. C++17 removed it; nvcc still accepts it,
//! clang-based compilers reject it (`-Wregister`). Where the target's
//! compiler does (`[register-storage-class]` of its profile), the port
//! removes the keyword from C++ sources: it has no effect in C++, so the
//! code means the same. C files (`.c`) keep it: C still has it.
use cuport_model::Language;

use crate::diagnostic::codes;
use crate::edit::{Edit, EditKind};
use crate::options::Mode;
use crate::plan::{FileInput, Planned};

const KEYWORD: &str = "register";

pub(super) fn remove_register_storage_class(input: &FileInput<'_>, planned: &mut Planned) {
    let Mode::OneWay(target) = input.options.mode else {
        return;
    };
    let c_source = input.language == Language::Cpp && input.path.ends_with(".c");
    if !target.profile().register_storage_class.rejected || c_source {
        return;
    }
    let src = input.src;
    if memchr::memmem::find(src, KEYWORD.as_bytes()).is_none() {
        return;
    }
    for &(at, word) in input.code_words() {
        if word != KEYWORD {
            continue;
        }
        let blanks = src[at + KEYWORD.len()..]
            .iter()
            .take_while(|b| matches!(b, b' ' | b'\t'))
            .count();
        let range = cuport_model::TextRange::new(at, at + KEYWORD.len() + blanks);
        if !planned.overlaps_an_edit(range) {
            planned.edits.push(Edit {
                range,
                replacement: String::new(),
                code: codes::REGISTER_REMOVED,
                cuda_name: KEYWORD.to_owned(),
                kind: EditKind::Port,
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use cuport_model::{Language, Target};

    use super::super::testing::run_pass_on;
    use super::super::REMOVE_REGISTER_STORAGE_CLASS;
    use crate::edit::apply_edits;
    use crate::options::MigrateOptions;

    fn port(path: &str, language: Language, src: &str, target: Target) -> String {
        let options = MigrateOptions::new(target);
        let added = run_pass_on(
            path,
            &REMOVE_REGISTER_STORAGE_CLASS,
            language,
            src,
            &options,
        );
        String::from_utf8_lossy(&apply_edits(src.as_bytes(), added.edits).0).into_owned()
    }

    #[test]
    fn register_is_removed_from_cpp_sources_for_hip() {
        let src =
            "__device__ float f(float a) {\n  register float d = a; // register kept here\n  \
                   const char *s = \"register\";\n  return d;\n}\n";
        assert_eq!(
            port("k.cu", Language::Cuda, src, Target::Hip),
            "__device__ float f(float a) {\n  float d = a; // register kept here\n  \
             const char *s = \"register\";\n  return d;\n}\n"
        );
        let header = "#define REG register\nregister\tint g;\n";
        assert_eq!(
            port("q.h", Language::Cpp, header, Target::Hip),
            "#define REG \nint g;\n"
        );
    }

    #[test]
    fn c_files_and_targets_that_accept_it_keep_register() {
        let src = "int f(void) { register int i = 0; return i; }\n";
        assert_eq!(port("k.c", Language::Cpp, src, Target::Hip), src);
        assert_eq!(port("k.cu", Language::Cuda, src, Target::Ascend), src);
    }
}
