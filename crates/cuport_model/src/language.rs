use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The language (or build-file flavour) cuport analyses a file as.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, JsonSchema,
)]
#[serde(rename_all = "kebab-case")]
pub enum Language {
    /// `.cu` and `.cuh`: C++ with CUDA extensions.
    Cuda,
    /// C and C++ sources and headers; they may still call CUDA host APIs.
    Cpp,
    Python,
    /// `CMakeLists.txt` and `*.cmake`.
    Cmake,
    /// `pyproject.toml` (build hooks such as `torch.utils.cpp_extension`).
    PyprojectToml,
    Rust,
    /// `Makefile`, `makefile`, `GNUmakefile`, `*.mk` and `*.mak` (make's
    /// own names; nvcc builds are mostly written this way outside CMake).
    Makefile,
}

impl Language {
    pub const ALL: [Language; 7] = [
        Language::Cuda,
        Language::Cpp,
        Language::Python,
        Language::Cmake,
        Language::PyprojectToml,
        Language::Rust,
        Language::Makefile,
    ];

    /// Picks the language from a file name alone (never from its content, so
    /// that classification cannot be fooled into executing or trusting a file).
    pub fn from_file_name(name: &str) -> Option<Language> {
        if name == "CMakeLists.txt" {
            return Some(Language::Cmake);
        }
        if matches!(name, "Makefile" | "makefile" | "GNUmakefile") {
            return Some(Language::Makefile);
        }
        if name == "pyproject.toml" {
            return Some(Language::PyprojectToml);
        }
        let (_, ext) = name.rsplit_once('.')?;
        match ext {
            // `.asc`: Ascend C SIMT sources, CUDA-shaped kernels (what a SIMT
            // port writes), so a port can be checked or ported again.
            "cu" | "cuh" | "asc" => Some(Language::Cuda),
            "c" | "cc" | "cpp" | "cxx" | "c++" | "h" | "hpp" | "hxx" | "hh" | "inl" | "inc" => {
                Some(Language::Cpp)
            }
            "py" => Some(Language::Python),
            "cmake" => Some(Language::Cmake),
            "rs" => Some(Language::Rust),
            "mk" | "mak" => Some(Language::Makefile),
            _ => None,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Language::Cuda => "CUDA C++",
            Language::Cpp => "C/C++",
            Language::Python => "Python",
            Language::Cmake => "CMake",
            Language::PyprojectToml => "pyproject.toml",
            Language::Rust => "Rust",
            Language::Makefile => "Makefile",
        }
    }

    /// Whether the C-family token scanner applies.
    pub fn is_c_family(self) -> bool {
        matches!(self, Language::Cuda | Language::Cpp)
    }
}

impl std::fmt::Display for Language {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn file_names_map_to_languages() {
        assert_eq!(Language::from_file_name("k.cu"), Some(Language::Cuda));
        assert_eq!(Language::from_file_name("k.cuh"), Some(Language::Cuda));
        assert_eq!(Language::from_file_name("a.inl"), Some(Language::Cpp));
        assert_eq!(
            Language::from_file_name("CMakeLists.txt"),
            Some(Language::Cmake)
        );
        assert_eq!(
            Language::from_file_name("cuda.cmake"),
            Some(Language::Cmake)
        );
        assert_eq!(Language::from_file_name("setup.py"), Some(Language::Python));
        assert_eq!(
            Language::from_file_name("pyproject.toml"),
            Some(Language::PyprojectToml)
        );
        assert_eq!(
            Language::from_file_name("Makefile"),
            Some(Language::Makefile)
        );
        assert_eq!(
            Language::from_file_name("cuda.mk"),
            Some(Language::Makefile)
        );
        assert_eq!(Language::from_file_name("Makefile.am"), None);
        assert_eq!(Language::from_file_name("Cargo.toml"), None);
        assert_eq!(Language::from_file_name("README"), None);
    }
}
