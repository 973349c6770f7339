//! Vendor operator tables (`mappings/<target>/operators/*.toml`): the
//! operators kernel rules may call, with their parameters as the vendor's
//! headers declare them, the releases that have them and where upstream the
//! header lives. Recipes say which operator calls compute a recognised kernel
//! pattern.
use std::collections::BTreeMap;

use cuport_model::LineIndex;
use serde::Deserialize;
use toml::Spanned;

use crate::diag::{DiagKind, Diagnostic, Location};

/// One operator file as written.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
struct RawOperatorFile {
    meta: RawMeta,
    #[serde(default)]
    operator: Vec<Spanned<Operator>>,
    #[serde(default)]
    dtype: Vec<Spanned<Dtype>>,
    #[serde(default)]
    vector: Vec<Spanned<VectorType>>,
    #[serde(default)]
    recipe: Vec<Spanned<Recipe>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
struct RawMeta {
    target: String,
    library: String,
    /// Whether the rows were checked against the vendor's headers (false
    /// for CNNL, whose header cuport cannot see): an unchecked table's
    /// operators are unconfirmed, gate nothing by release and get no
    /// generated code.
    #[serde(default = "checked_by_default")]
    header_checked: bool,
    /// Why, in one sentence, for the diagnostics that name its operators.
    #[serde(default)]
    note: Option<String>,
    /// The prefix of the vendor's enum constants (`CNNL_`): attribute
    /// values may name them (`CNNL_OP_TENSOR_ADD`).
    #[serde(default)]
    constants: Option<String>,
}

fn checked_by_default() -> bool {
    true
}

/// What a parameter of an operator is to a kernel rule.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum ParamRole {
    /// A tensor the operator reads.
    Input,
    /// A tensor the operator writes.
    Output,
    /// A tensor the operator reads and updates in place (`...Ref`).
    Inout,
    /// Not a tensor: a scalar, an integer array, a flag.
    Attribute,
}

impl ParamRole {
    pub fn id(self) -> &'static str {
        match self {
            ParamRole::Input => "input",
            ParamRole::Output => "output",
            ParamRole::Inout => "inout",
            ParamRole::Attribute => "attribute",
        }
    }

    pub fn is_tensor(self) -> bool {
        self != ParamRole::Attribute
    }
}

/// One parameter of `<operator>GetWorkspaceSize`, before `workspaceSize`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct OperatorParam {
    pub name: String,
    /// The C type exactly as the header declares it (`const aclTensor*`);
    /// empty in a table no header checked.
    #[serde(rename = "type", default)]
    pub c_type: String,
    pub role: ParamRole,
    /// The operator accepts a null pointer here (`...Optional`).
    #[serde(default)]
    pub optional: bool,
}

/// Where upstream an operator's header lives at some tags.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct HeaderSource {
    pub repository: String,
    #[serde(default)]
    pub tags: Vec<String>,
    pub path: String,
    /// The commit read, where the source is a call rather than a header
    /// at release tags.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub commit: Option<String>,
    /// The line of the call at that commit.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub line: Option<u32>,
}

impl std::fmt::Display for HeaderSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} {}", self.repository, self.path)?;
        if let Some(line) = self.line {
            write!(f, ":{line}")?;
        }
        match (&self.commit, self.tags.as_slice()) {
            (Some(commit), _) => write!(f, " @ {}", &commit[..commit.len().min(12)]),
            (None, []) => Ok(()),
            (None, tags) => write!(f, " @ {}", tags.join(", ")),
        }
    }
}

/// One vendor operator (an aclnn two-phase function pair).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct Operator {
    pub name: String,
    /// The header to include, relative to the SDK's include directory.
    pub header: String,
    /// What it computes, in the vendor's terms.
    pub computes: String,
    /// The SDK releases whose headers declare it with exactly `params`.
    pub releases: Vec<String>,
    pub params: Vec<OperatorParam>,
    #[serde(default)]
    pub source: Option<HeaderSource>,
    #[serde(default)]
    pub sources: Vec<HeaderSource>,
    /// The argument order seen at the cited call, where no header gives
    /// the declaration.
    #[serde(default)]
    pub call: Option<String>,
    /// The descriptor and workspace calls the cited code makes first.
    #[serde(default)]
    pub setup: Option<String>,
    /// A vendor documentation page that also describes it.
    #[serde(default)]
    pub doc: Option<String>,
}

impl Operator {
    pub fn param(&self, name: &str) -> Option<&OperatorParam> {
        self.params.iter().find(|p| p.name == name)
    }

    /// Every upstream source of the header, whichever way the row wrote it.
    pub fn header_sources(&self) -> impl Iterator<Item = &HeaderSource> {
        self.source.iter().chain(&self.sources)
    }
}

/// A C element type a kernel's pointers may have, and the target's name
/// for it (`float` → `ACL_FLOAT`).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct Dtype {
    pub c_type: String,
    pub target: String,
}

/// A CUDA vector type a kernel may take pointers to (`float4*`: llm.c's
/// encoder loads 128 bits at a time): `lanes` consecutive `scalar`s. The
/// target has no such type, so the operator function takes the buffer as
/// `void*` and its tensor reads it as scalars.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct VectorType {
    pub c_type: String,
    /// A `c-type` of the `[[dtype]]` rows.
    pub scalar: String,
    pub lanes: u32,
}

/// The operator calls that compute one recognised kernel pattern. Argument
/// values may name the pattern's slots (`$x`, `$out`, `$n`), which a
/// proposal fills from the kernel.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct Recipe {
    pub pattern: String,
    pub calls: Vec<RecipeCall>,
    /// Why these calls compute the pattern, where it is not plain.
    #[serde(default)]
    pub note: Option<String>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct RecipeCall {
    pub operator: String,
    pub args: BTreeMap<String, String>,
}

/// Every operator, dtype and recipe of one target's tables.
#[derive(Debug, Clone, Default)]
pub struct OperatorTable {
    pub target: String,
    /// No row was checked against the vendor's headers (a `header-checked
    /// = false` file): every operator is unconfirmed.
    pub unchecked: bool,
    /// Why the table is unchecked, from its `[meta]`.
    pub note: Option<String>,
    /// The prefix of the vendor's enum constants, which attribute values
    /// may name.
    pub constants: Option<String>,
    pub operators: Vec<Operator>,
    pub dtypes: Vec<Dtype>,
    pub vectors: Vec<VectorType>,
    pub recipes: Vec<Recipe>,
}

impl OperatorTable {
    /// The built-in tables of `target` (`ascend`), with the problems found
    /// in them (none for the shipped files; `tests/operator_tables.rs`).
    pub fn builtin(target: &str) -> (OperatorTable, Vec<Diagnostic>) {
        let prefix = format!("mappings/{target}/operators/");
        let files = crate::embedded::OPERATOR_FILES
            .iter()
            .filter(|(path, _)| path.starts_with(&prefix));
        let mut table = OperatorTable {
            target: target.to_string(),
            ..OperatorTable::default()
        };
        let mut diags = Vec::new();
        for (path, text) in files {
            diags.extend(table.add_file(path, text));
        }
        (table, diags)
    }

    /// Adds one operator file, returning its problems.
    pub fn add_file(&mut self, name: &str, text: &str) -> Vec<Diagnostic> {
        let index = LineIndex::new(text.as_bytes());
        let at = |offset: usize| location(name, &index, offset);
        let raw: RawOperatorFile = match toml::from_str(text) {
            Ok(raw) => raw,
            Err(err) => return vec![syntax_error(&at, &err)],
        };
        let mut diags = Vec::new();
        if raw.meta.target != self.target {
            diags.push(diag(
                at(0),
                DiagKind::Conflict,
                format!(
                    "meta.target is `{}` in a table of `{}`",
                    raw.meta.target, self.target
                ),
            ));
        }
        let _library = raw.meta.library;
        if !raw.meta.header_checked {
            self.unchecked = true;
        }
        if raw.meta.note.is_some() {
            self.note = raw.meta.note;
        }
        if raw.meta.constants.is_some() {
            self.constants = raw.meta.constants;
        }
        let checked = raw.meta.header_checked;
        for op in raw.operator {
            let place = at(op.span().start);
            diags.extend(self.check_operator(op.get_ref(), checked, &place));
            self.operators.push(op.into_inner());
        }
        self.dtypes
            .extend(raw.dtype.into_iter().map(Spanned::into_inner));
        for vector in raw.vector {
            let place = at(vector.span().start);
            diags.extend(self.check_vector(vector.get_ref(), &place));
            self.vectors.push(vector.into_inner());
        }
        for recipe in raw.recipe {
            let place = at(recipe.span().start);
            diags.extend(self.check_recipe(recipe.get_ref(), &place));
            self.recipes.push(recipe.into_inner());
        }
        diags
    }

    pub fn operator(&self, name: &str) -> Option<&Operator> {
        self.operators.iter().find(|o| o.name == name)
    }

    pub fn recipe(&self, pattern: &str) -> Option<&Recipe> {
        self.recipes.iter().find(|r| r.pattern == pattern)
    }

    /// The target's name of a C element type (`float` → `ACL_FLOAT`).
    pub fn dtype(&self, c_type: &str) -> Option<&str> {
        self.dtypes
            .iter()
            .find(|d| d.c_type == c_type)
            .map(|d| d.target.as_str())
    }

    /// The vector type `c_type` (`float4`), if the tables list it.
    pub fn vector(&self, c_type: &str) -> Option<&VectorType> {
        self.vectors.iter().find(|v| v.c_type == c_type)
    }

    /// Whether `value` names an element type: a C type of the tables or
    /// the target's name for one.
    pub fn is_dtype(&self, value: &str) -> bool {
        let value = value.trim();
        self.dtypes
            .iter()
            .any(|d| d.c_type == value || d.target == value)
    }

    /// Whether `name` is one of the vendor's enum constants (by prefix).
    pub fn is_constant(&self, name: &str) -> bool {
        self.constants
            .as_deref()
            .is_some_and(|prefix| name.starts_with(prefix))
    }

    /// How far the facts of `op` are confirmed, in words for a proposal or
    /// a diagnostic.
    pub fn status(&self, op: &Operator) -> String {
        if !self.unchecked {
            return format!("checked against the headers of {}", op.releases.join(", "));
        }
        let from = op
            .header_sources()
            .next()
            .map_or_else(String::new, |s| format!("; argument order from {s}"));
        format!("unconfirmed: not checked against {}{from}", op.header)
    }

    fn check_operator(&self, op: &Operator, checked: bool, at: &Location) -> Vec<Diagnostic> {
        let mut diags = Vec::new();
        if self.operator(&op.name).is_some() {
            diags.push(diag(
                at.clone(),
                DiagKind::Duplicate,
                format!("operator `{}` is listed twice", op.name),
            ));
        }
        if op.header_sources().next().is_none() {
            diags.push(diag(
                at.clone(),
                DiagKind::MissingField,
                format!("operator `{}` names no upstream source", op.name),
            ));
        }
        if checked {
            for param in op.params.iter().filter(|p| p.c_type.trim().is_empty()) {
                diags.push(diag(
                    at.clone(),
                    DiagKind::MissingField,
                    format!(
                        "operator `{}`: parameter `{}` has no `type` (a header-checked table gives each)",
                        op.name, param.name
                    ),
                ));
            }
        } else {
            diags.extend(unchecked_problems(op, at));
        }
        for release in &op.releases {
            let tagged = op
                .header_sources()
                .any(|s| s.tags.iter().any(|t| t.trim_start_matches('v') == release));
            if !tagged {
                diags.push(diag(
                    at.clone(),
                    DiagKind::MissingField,
                    format!(
                        "operator `{}`: release {release} has no source tag",
                        op.name
                    ),
                ));
            }
        }
        diags
    }

    /// A vector row's scalar must be a dtype row (listed above it) and it
    /// must have at least two lanes.
    fn check_vector(&self, vector: &VectorType, at: &Location) -> Vec<Diagnostic> {
        let mut diags = Vec::new();
        if self.dtype(&vector.scalar).is_none() {
            diags.push(diag(
                at.clone(),
                DiagKind::UnknownName,
                format!(
                    "vector `{}` has scalar `{}`, which no [[dtype]] row above it declares",
                    vector.c_type, vector.scalar
                ),
            ));
        }
        if vector.lanes < 2 {
            diags.push(diag(
                at.clone(),
                DiagKind::Conflict,
                format!(
                    "vector `{}` has {} lanes; a vector row needs at least 2",
                    vector.c_type, vector.lanes
                ),
            ));
        }
        diags
    }

    fn check_recipe(&self, recipe: &Recipe, at: &Location) -> Vec<Diagnostic> {
        let mut diags = Vec::new();
        for call in &recipe.calls {
            let Some(op) = self.operator(&call.operator) else {
                diags.push(diag(
                    at.clone(),
                    DiagKind::UnknownName,
                    format!(
                        "recipe `{}` calls `{}`, which no operator row declares",
                        recipe.pattern, call.operator
                    ),
                ));
                continue;
            };
            for arg in call.args.keys().filter(|a| op.param(a).is_none()) {
                diags.push(diag(
                    at.clone(),
                    DiagKind::UnknownName,
                    format!(
                        "recipe `{}`: `{}` has no parameter `{arg}`",
                        recipe.pattern, op.name
                    ),
                ));
            }
        }
        diags
    }
}

/// An unchecked row stands on a cited call: a commit and a line, and the
/// argument order seen there; it claims no release.
fn unchecked_problems(op: &Operator, at: &Location) -> Vec<Diagnostic> {
    let mut diags = Vec::new();
    let mut say = |message: String| {
        diags.push(diag(
            at.clone(),
            DiagKind::MissingField,
            format!("operator `{}`: {message}", op.name),
        ));
    };
    let cited = op
        .header_sources()
        .any(|s| s.commit.is_some() && s.line.is_some());
    if !cited {
        say(
            "an unchecked row needs a source with `commit` and `line` (the call it rests on)"
                .into(),
        );
    }
    if op.call.as_deref().is_none_or(|c| c.trim().is_empty()) {
        say("an unchecked row needs `call`, the argument order seen at its source".into());
    }
    if !op.releases.is_empty() {
        say("an unchecked row claims no `releases` (no header of any release was read)".into());
    }
    diags
}

pub(crate) fn location(file: &str, index: &LineIndex, offset: usize) -> Location {
    let lc = index.line_col(offset);
    Location {
        file: file.to_string(),
        line: lc.line,
        column: lc.column,
    }
}

pub(crate) fn diag(location: Location, kind: DiagKind, message: String) -> Diagnostic {
    Diagnostic {
        location,
        kind,
        message,
    }
}

pub(crate) fn syntax_error(at: &dyn Fn(usize) -> Location, err: &toml::de::Error) -> Diagnostic {
    let offset = err.span().map_or(0, |s| s.start);
    diag(at(offset), DiagKind::Syntax, err.message().to_string())
}

/// The parameters of `function` as `header` declares it: each `(type,
/// name)` with whitespace normalised and `*` attached to the type, or
/// `None` when the header does not declare it. Comments are skipped.
pub fn declared_parameters(header: &str, function: &str) -> Option<Vec<(String, String)>> {
    let code = strip_comments(header);
    let mut from = 0;
    while let Some(found) = code[from..].find(function) {
        let start = from + found;
        from = start + function.len();
        let before = code[..start].chars().next_back();
        if before.is_some_and(|c| c.is_alphanumeric() || c == '_') {
            continue;
        }
        let rest = code[from..].trim_start();
        let Some(args) = rest.strip_prefix('(') else {
            continue;
        };
        let close = args.find(')')?;
        return Some(split_parameters(&args[..close]));
    }
    None
}

fn split_parameters(list: &str) -> Vec<(String, String)> {
    list.split(',')
        .map(|p| p.split_whitespace().collect::<Vec<_>>().join(" "))
        .filter(|p| !p.is_empty() && p != "void")
        .map(|p| {
            let cut = p.rfind([' ', '*']).map_or(0, |i| i + 1);
            let (ty, name) = p.split_at(cut);
            (ty.trim().replace(" *", "*"), name.to_string())
        })
        .collect()
}

fn strip_comments(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while !rest.is_empty() {
        if let Some(after) = rest.strip_prefix("/*") {
            rest = after.find("*/").map_or("", |end| &after[end + 2..]);
            out.push(' ');
        } else if let Some(after) = rest.strip_prefix("//") {
            rest = after.find('\n').map_or("", |end| &after[end..]);
        } else {
            let ch = rest.chars().next().unwrap_or(' ');
            out.push(ch);
            rest = &rest[ch.len_utf8()..];
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn declared_parameters_skips_comments_and_longer_names() {
        let header = "/* aclnnAddGetWorkspaceSize(int x) */\n\
            int aclnnAddsGetWorkspaceSize(float y);\n\
            int aclnnAddGetWorkspaceSize(\n  const aclTensor *self, // first\n  aclTensor* out);";
        let params = declared_parameters(header, "aclnnAddGetWorkspaceSize");
        assert_eq!(
            params,
            Some(vec![
                ("const aclTensor*".to_string(), "self".to_string()),
                ("aclTensor*".to_string(), "out".to_string()),
            ])
        );
        assert_eq!(
            declared_parameters(header, "aclnnMulGetWorkspaceSize"),
            None
        );
    }

    #[test]
    fn builtin_ascend_tables_load_without_problems() {
        let (table, diags) = OperatorTable::builtin("ascend");
        assert!(diags.is_empty(), "{diags:#?}");
        assert!(table.operator("aclnnAdd").is_some());
        assert_eq!(table.dtype("float"), Some("ACL_FLOAT"));
    }

    #[test]
    fn a_recipe_calling_an_unknown_parameter_is_reported_with_its_line() {
        let mut table = OperatorTable {
            target: "ascend".into(),
            ..OperatorTable::default()
        };
        let text = "[meta]\ntarget = \"ascend\"\nlibrary = \"aclnn\"\n\n\
            [[operator]]\nname = \"aclnnExp\"\nheader = \"h\"\ncomputes = \"e\"\n\
            releases = [\"9.1.0\"]\nparams = []\n\
            source = { repository = \"r\", tags = [\"v9.1.0\"], path = \"p\" }\n\n\
            [[recipe]]\npattern = \"exp\"\ncalls = [{ operator = \"aclnnExp\", args = { x = \"$x\" } }]\n";
        let diags = table.add_file("t.toml", text);
        assert_eq!(diags.len(), 1, "{diags:#?}");
        assert_eq!(diags[0].location.line, 13, "the `[[recipe]]` line");
        assert!(diags[0].message.contains("no parameter `x`"));
    }
}
