//! The rule-file format exactly as written in TOML (see `mappings/README.md`).
//! Field docs become `mappings/schema.json`. Fields that checks report on are
//! `Spanned` so errors can name a line and column.
use std::collections::BTreeMap;

use cuport_model::{Effort, Library, Target};
use schemars::{JsonSchema, Schema, SchemaGenerator};
use serde::{Deserialize, Serialize};
use toml::Spanned;

use crate::model::{Flavour, NameKind, Status};

/// One rule file: metadata, the target's declarations and the mappings.
#[derive(Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub(crate) struct RuleFile {
    pub(crate) meta: Meta,
    /// Explicit mappings, one CUDA name each. They win over patterns.
    #[serde(default)]
    pub(crate) entry: Vec<RawEntry>,
    /// `[[kernel]]` rules: read by `kernel_rules::load_kernel_rules`, which
    /// checks them against the operator tables.
    #[serde(default, rename = "kernel")]
    #[schemars(skip)]
    pub(crate) _kernel: Vec<toml::Value>,
    /// Mechanical renames that apply only to the target names listed in `exists`.
    #[serde(default)]
    pub(crate) pattern: Vec<RawPattern>,
    /// CUDA names the target has no counterpart for.
    #[serde(default)]
    pub(crate) unsupported: Vec<RawUnsupported>,
    /// Value maps for CUDA enums, used by templates as `${n:map-name}`.
    #[serde(default)]
    pub(crate) enum_map: Vec<RawEnumMap>,
    /// Target function signatures (for the declarations header and arity checks).
    #[serde(default)]
    pub(crate) function: Vec<RawFunction>,
    /// Helper functions the shim implements; templates may call them.
    #[serde(default)]
    pub(crate) helper: Vec<RawFunction>,
    /// Target types, declared by a C declaration.
    #[serde(default, rename = "type")]
    pub(crate) types: Vec<RawType>,
    /// Target enums (C enums or integer constants).
    #[serde(default, rename = "enum")]
    pub(crate) enums: Vec<RawTargetEnum>,
    /// CUDA enums, so that enum maps can be checked for gaps.
    #[serde(default)]
    pub(crate) cuda_enum: Vec<RawCudaEnum>,
    /// How an argument of a CUDA call is written for the target (a cast or a
    /// macro its declaration needs), unless the argument already has it.
    #[serde(default)]
    pub(crate) argument: Vec<RawArgument>,
}

/// File-wide settings; entries inherit them unless they set their own.
#[derive(Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub(crate) struct Meta {
    /// The target every rule in this file is for (absent only in CUDA fact files).
    #[serde(default)]
    #[schemars(schema_with = "target_schema")]
    #[serde(
        serialize_with = "spans::optional",
        deserialize_with = "spans::read_optional"
    )]
    pub(crate) target: Option<Spanned<Target>>,
    /// `roc` for HIP rules that apply only with `--hip-libs=roc` (rocBLAS, rocSPARSE, ...).
    #[serde(default)]
    #[schemars(with = "Option<Flavour>")]
    #[serde(
        serialize_with = "spans::optional",
        deserialize_with = "spans::read_optional"
    )]
    pub(crate) flavour: Option<Spanned<Flavour>>,
    /// The CUDA library the rules belong to, unless an entry says otherwise.
    #[serde(default)]
    #[schemars(schema_with = "library_schema")]
    pub(crate) library: Option<Library>,
    /// Where the facts come from (vendor header, doc page, table).
    pub(crate) source: String,
    /// Default reference for entries that need one.
    #[serde(default)]
    pub(crate) reference: Option<String>,
    /// Default rule code (`CP` + 4 digits) for entries without their own.
    #[serde(default)]
    #[schemars(with = "Option<String>")]
    #[serde(
        serialize_with = "spans::optional",
        deserialize_with = "spans::read_optional"
    )]
    pub(crate) code: Option<Spanned<String>>,
    /// Default kind of the CUDA names in this file.
    #[serde(default)]
    pub(crate) kind: Option<NameKind>,
    /// Headers to include for entries in this file.
    #[serde(default)]
    pub(crate) headers: Vec<String>,
    /// Python imports to add for entries in this file.
    #[serde(default)]
    pub(crate) imports: Vec<String>,
    /// Libraries to link for entries in this file.
    #[serde(default)]
    pub(crate) libraries: Vec<String>,
    /// Target versions the file's facts hold for (`CANN >= 8.0`).
    #[serde(default)]
    pub(crate) target_version: Option<String>,
}

/// One CUDA name mapped for the file's target.
#[derive(Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub(crate) struct RawEntry {
    /// The CUDA name: function, type, enum value, macro, header, dotted Python path or device string.
    #[schemars(with = "String")]
    #[serde(serialize_with = "spans::one", deserialize_with = "spans::read_one")]
    pub(crate) cuda: Spanned<String>,
    pub(crate) status: Status,
    /// The target name (absent for `unsupported`; for `rewrite` defaults to the template's callee).
    #[serde(default)]
    pub(crate) to: Option<String>,
    /// Argument template for `rewrite`: `$1..$n`, `${n:enum-map}`, `${n..}`, literals.
    #[serde(default)]
    #[schemars(with = "Option<String>")]
    #[serde(
        serialize_with = "spans::optional",
        deserialize_with = "spans::read_optional"
    )]
    pub(crate) template: Option<Spanned<String>>,
    /// Parameter names of the CUDA function (their count is the arity templates are checked against).
    #[serde(default)]
    pub(crate) cuda_params: Option<Vec<String>>,
    #[serde(default)]
    pub(crate) kind: Option<NameKind>,
    #[serde(default)]
    #[schemars(schema_with = "optional_library_schema")]
    pub(crate) library: Option<Library>,
    /// What differs, what to check, how to port (required for approximate and manual).
    #[serde(default)]
    pub(crate) note: Option<String>,
    /// Vendor doc page or header the mapping relies on (required unless mechanical).
    #[serde(default)]
    pub(crate) reference: Option<String>,
    #[serde(default)]
    #[schemars(with = "Option<String>")]
    #[serde(
        serialize_with = "spans::optional",
        deserialize_with = "spans::read_optional"
    )]
    pub(crate) code: Option<Spanned<String>>,
    /// Required for `manual`.
    #[serde(default, deserialize_with = "table_effort")]
    #[schemars(schema_with = "table_effort_schema")]
    pub(crate) effort: Option<Effort>,
    #[serde(default)]
    pub(crate) headers: Option<Vec<String>>,
    #[serde(default)]
    pub(crate) imports: Option<Vec<String>>,
    #[serde(default)]
    pub(crate) libraries: Option<Vec<String>>,
    /// Target versions where the mapping holds (`ROCm >= 6.0`).
    #[serde(default)]
    pub(crate) target_version: Option<String>,
    /// CUDA versions where the CUDA name exists.
    #[serde(default)]
    pub(crate) cuda_version: Option<CudaVersion>,
    /// What the port becomes for an SDK release older than `target-version`
    /// states (`--rocm-version 5.2`: `__shfl_down_sync` → `__shfl_down`).
    #[serde(default)]
    pub(crate) older_sdk: Option<RawOlderSdk>,
    /// The target name for a call with a given number of arguments, where
    /// CUDA's C++ overloads map to target functions of other names
    /// (`cudaEventCreate(&e, flags)` is hipEventCreateWithFlags).
    #[serde(default)]
    pub(crate) overloads: Vec<RawOverload>,
    /// The fact was not confirmed in a vendor header or doc; never `exact` or `renamed`.
    #[serde(default)]
    pub(crate) unconfirmed: bool,
}

/// One C++ overload of a CUDA function, told apart by its argument count.
#[derive(Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub(crate) struct RawOverload {
    /// The number of arguments the CUDA call passes.
    pub(crate) arguments: usize,
    /// The target function such a call is renamed to.
    pub(crate) to: String,
}

/// The rewrite for releases older than an entry's `target-version`.
#[derive(Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub(crate) struct RawOlderSdk {
    /// Argument template, as an entry's `template`.
    #[schemars(with = "String")]
    #[serde(serialize_with = "spans::one", deserialize_with = "spans::read_one")]
    pub(crate) template: Spanned<String>,
    /// What the older form loses (the diagnostic says it).
    pub(crate) note: String,
    /// The headers that declare the older form (replacing the entry's
    /// `headers` for those releases; the dual-stack shim includes them).
    #[serde(default)]
    pub(crate) headers: Option<Vec<String>>,
}

/// When a CUDA API appeared, was deprecated or removed.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema, PartialEq, Eq)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct CudaVersion {
    #[serde(default)]
    pub added: Option<String>,
    #[serde(default)]
    pub deprecated: Option<String>,
    #[serde(default)]
    pub removed: Option<String>,
}

/// A glob rename (`cuda*` → `hip*`) limited to target names listed in `exists`.
#[derive(Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub(crate) struct RawPattern {
    #[schemars(with = "String")]
    #[serde(serialize_with = "spans::one", deserialize_with = "spans::read_one")]
    pub(crate) code: Spanned<String>,
    /// CUDA-side glob with exactly one `*`.
    #[schemars(with = "String")]
    #[serde(serialize_with = "spans::one", deserialize_with = "spans::read_one")]
    pub(crate) from: Spanned<String>,
    /// Target-side glob with exactly one `*`.
    pub(crate) to: String,
    /// Target names that exist; the pattern maps only the CUDA names that produce one of these.
    #[schemars(with = "Vec<String>")]
    #[serde(serialize_with = "spans::each", deserialize_with = "spans::read_each")]
    pub(crate) exists: Vec<Spanned<String>>,
    /// CUDA names the pattern must not map (an explicit entry or unsupported list handles them).
    #[serde(default)]
    #[schemars(with = "Vec<String>")]
    #[serde(serialize_with = "spans::each", deserialize_with = "spans::read_each")]
    pub(crate) exceptions: Vec<Spanned<String>>,
    /// `renamed` (default) or `exact` when `from` equals `to`.
    #[serde(default)]
    pub(crate) status: Option<Status>,
    /// The release every listed name needs (`HIP >= 5.3.0`): a generated
    /// table keeps one pattern block per first release, so that version
    /// gating holds for pattern names as it does for entries.
    #[serde(default)]
    pub(crate) target_version: Option<String>,
    #[serde(default)]
    pub(crate) kind: Option<NameKind>,
    #[serde(default)]
    #[schemars(schema_with = "optional_library_schema")]
    pub(crate) library: Option<Library>,
    #[serde(default)]
    pub(crate) note: Option<String>,
    #[serde(default)]
    pub(crate) reference: Option<String>,
    #[serde(default)]
    pub(crate) headers: Option<Vec<String>>,
    #[serde(default)]
    pub(crate) imports: Option<Vec<String>>,
    #[serde(default)]
    pub(crate) libraries: Option<Vec<String>>,
}

/// CUDA names with no counterpart on the target, sharing one note.
#[derive(Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub(crate) struct RawUnsupported {
    #[serde(default)]
    #[schemars(with = "Option<String>")]
    #[serde(
        serialize_with = "spans::optional",
        deserialize_with = "spans::read_optional"
    )]
    pub(crate) code: Option<Spanned<String>>,
    /// What to do instead.
    pub(crate) note: String,
    #[schemars(with = "Vec<String>")]
    #[serde(serialize_with = "spans::each", deserialize_with = "spans::read_each")]
    pub(crate) names: Vec<Spanned<String>>,
    #[serde(default)]
    pub(crate) kind: Option<NameKind>,
    #[serde(default)]
    #[schemars(schema_with = "optional_library_schema")]
    pub(crate) library: Option<Library>,
    #[serde(default)]
    pub(crate) reference: Option<String>,
}

/// CUDA enum value → target value, for templates and enum-value lookups.
#[derive(Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub(crate) struct RawEnumMap {
    #[schemars(with = "String")]
    #[serde(serialize_with = "spans::one", deserialize_with = "spans::read_one")]
    pub(crate) name: Spanned<String>,
    /// The CUDA enum (declared in a `[[cuda-enum]]`) whose every value must be mapped or listed in `unmapped`.
    #[schemars(with = "String")]
    #[serde(serialize_with = "spans::one", deserialize_with = "spans::read_one")]
    pub(crate) cuda_enum: Spanned<String>,
    #[serde(default)]
    #[schemars(with = "Option<String>")]
    #[serde(
        serialize_with = "spans::optional",
        deserialize_with = "spans::read_optional"
    )]
    pub(crate) code: Option<Spanned<String>>,
    #[schemars(with = "BTreeMap<String, String>")]
    #[serde(serialize_with = "spans::one", deserialize_with = "spans::read_one")]
    pub(crate) map: Spanned<BTreeMap<String, String>>,
    /// CUDA values deliberately left out (a template meeting one fails).
    #[serde(default)]
    pub(crate) unmapped: Vec<String>,
    #[serde(default)]
    #[schemars(schema_with = "optional_library_schema")]
    pub(crate) library: Option<Library>,
    /// Helper that converts a value at run time when the argument is not a literal.
    #[serde(default)]
    pub(crate) fallback: Option<String>,
    /// The target enum (declared in an `[[enum]]` of the same target) every mapped value must belong to.
    #[serde(default)]
    #[schemars(with = "Option<String>")]
    #[serde(
        serialize_with = "spans::optional",
        deserialize_with = "spans::read_optional"
    )]
    pub(crate) target_enum: Option<Spanned<String>>,
    /// Also resolve each mapped CUDA value as an enum-value name (default true).
    #[serde(default = "yes")]
    pub(crate) entries: bool,
    #[serde(default)]
    pub(crate) note: Option<String>,
    #[serde(default)]
    pub(crate) reference: Option<String>,
}

fn yes() -> bool {
    true
}

/// An argument of a CUDA call that the target's declaration takes in
/// another form: `hipHostGetDevicePointer(void**, ...)` for CUDA's
/// `T**` overload, `hipFuncSetCacheConfig(const void*, ...)` for CUDA's
/// overload taking the kernel. Written only where the argument does not
/// already have it and the selected release needs it.
#[derive(Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub(crate) struct RawArgument {
    /// The CUDA function whose calls it applies to.
    #[schemars(with = "String")]
    #[serde(serialize_with = "spans::one", deserialize_with = "spans::read_one")]
    pub(crate) cuda: Spanned<String>,
    /// The argument's position in the CUDA call (1-based).
    pub(crate) position: usize,
    /// The argument as the target takes it; `$` stands for the argument
    /// (`(void**)$`, `reinterpret_cast<const void*>($)`, `HIP_SYMBOL($)`).
    #[schemars(with = "String")]
    #[serde(serialize_with = "spans::one", deserialize_with = "spans::read_one")]
    pub(crate) wrap: Spanned<String>,
    /// Spellings an argument that already has the conversion starts with,
    /// compared without white space (`(void**)`,
    /// `reinterpret_cast<void**>(`); the wrap's own text before `$` always
    /// counts.
    #[serde(default)]
    pub(crate) already: Vec<String>,
    /// `name`: only an argument that is a name (`x`, `ns::x`) is wrapped;
    /// `any` (the default): any argument.
    #[serde(default)]
    pub(crate) when: ArgumentShape,
    /// A type (`void*`): the argument `&v` of a variable this file declares
    /// with it needs nothing.
    #[serde(default)]
    pub(crate) declared: Option<String>,
    /// `PRODUCT >= VERSION` from which the target's declarations take the
    /// argument as written (an overload): ports made for that release or a
    /// newer one (or for no release) get no wrap.
    #[serde(default)]
    pub(crate) not_needed_from: Option<String>,
    /// Why the target needs it (its declaration).
    pub(crate) note: String,
    /// The header or document that says so.
    pub(crate) reference: String,
}

/// Which arguments an [`RawArgument`] rule wraps.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum ArgumentShape {
    #[default]
    Any,
    Name,
}

/// A C function signature as documented by the vendor.
#[derive(Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub(crate) struct RawFunction {
    #[schemars(with = "String")]
    #[serde(serialize_with = "spans::one", deserialize_with = "spans::read_one")]
    pub(crate) name: Spanned<String>,
    /// Return type (`aclError`).
    pub(crate) returns: String,
    /// Parameters with types and names (`size_t destMax`); `...` for variadic.
    pub(crate) params: Vec<String>,
    /// What a helper does and which target APIs it uses.
    #[serde(default)]
    pub(crate) note: Option<String>,
    /// The vendor header that declares it, as included (`aclnnop/aclnn_mm.h`);
    /// absent: one of the file's `headers`. Checks against real SDK headers
    /// use it to tell names they can verify from names only a stub declares.
    #[serde(default)]
    pub(crate) header: Option<String>,
}

#[derive(Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub(crate) struct RawType {
    #[schemars(with = "String")]
    #[serde(serialize_with = "spans::one", deserialize_with = "spans::read_one")]
    pub(crate) name: Spanned<String>,
    /// C declaration (`typedef void *aclrtStream;`).
    pub(crate) decl: String,
    /// The vendor header that declares it, as included (`aclnnop/aclnn_mm.h`);
    /// absent: one of the file's `headers`. Checks against real SDK headers
    /// use it to tell names they can verify from names only a stub declares.
    #[serde(default)]
    pub(crate) header: Option<String>,
}

#[derive(Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub(crate) struct RawTargetEnum {
    #[schemars(with = "String")]
    #[serde(serialize_with = "spans::one", deserialize_with = "spans::read_one")]
    pub(crate) name: Spanned<String>,
    /// Enumerators, optionally with values (`ACL_MEMCPY_HOST_TO_DEVICE = 1`).
    pub(crate) values: Vec<String>,
    /// The vendor header that declares it, as included (`aclnnop/aclnn_mm.h`);
    /// absent: one of the file's `headers`. Checks against real SDK headers
    /// use it to tell names they can verify from names only a stub declares.
    #[serde(default)]
    pub(crate) header: Option<String>,
}

#[derive(Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub(crate) struct RawCudaEnum {
    #[schemars(with = "String")]
    #[serde(serialize_with = "spans::one", deserialize_with = "spans::read_one")]
    pub(crate) name: Spanned<String>,
    pub(crate) values: Vec<String>,
}

fn string_enum(ids: Vec<&'static str>) -> Schema {
    let value = serde_json::json!({ "type": "string", "enum": ids });
    Schema::try_from(value).unwrap_or_default()
}

fn target_schema(_: &mut SchemaGenerator) -> Schema {
    string_enum(Target::ALL.iter().map(|t| t.id()).collect())
}

fn library_schema(_: &mut SchemaGenerator) -> Schema {
    string_enum(Library::ALL.iter().map(|l| l.id()).collect())
}

/// A table's effort: `included` belongs to cuport's own diagnostics.
fn table_effort<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<Effort>, D::Error> {
    Ok(Option::<TableEffort>::deserialize(d)?.map(|effort| effort.0))
}

/// The efforts a rule table may give (`included` is cuport's own).
const TABLE_EFFORTS: &[&str] = &["low", "medium", "high"];

/// An [`Effort`] a table may give: an unknown name is answered with the
/// three it may use, and `included` with why not.
struct TableEffort(Effort);

impl<'de> Deserialize<'de> for TableEffort {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_enum("Effort", TABLE_EFFORTS, TableEffortVisitor)
            .map(TableEffort)
    }
}

/// Reads a table's effort: the enum (TOML and the stored tables both give
/// one), and its variant by name (TOML) or by index in `Effort::ALL` (the
/// stored tables).
#[derive(Clone, Copy)]
struct TableEffortVisitor;

impl<'de> serde::de::Visitor<'de> for TableEffortVisitor {
    type Value = Effort;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("low, medium or high")
    }

    fn visit_str<E: serde::de::Error>(self, name: &str) -> Result<Effort, E> {
        if name == Effort::Included.id() {
            return Err(E::custom(
                "`included` is for cuport's own diagnostics; a rule's effort is low, medium or high",
            ));
        }
        Effort::ALL
            .into_iter()
            .find(|effort| effort.id() == name && TABLE_EFFORTS.contains(&name))
            .ok_or_else(|| E::unknown_variant(name, TABLE_EFFORTS))
    }

    fn visit_u64<E: serde::de::Error>(self, index: u64) -> Result<Effort, E> {
        let effort = usize::try_from(index)
            .ok()
            .and_then(|i| Effort::ALL.get(i))
            .ok_or_else(|| E::invalid_value(serde::de::Unexpected::Unsigned(index), &self))?;
        self.visit_str(effort.id())
    }

    fn visit_enum<A: serde::de::EnumAccess<'de>>(self, data: A) -> Result<Effort, A::Error> {
        use serde::de::VariantAccess;
        let (effort, variant) = data.variant_seed(self)?;
        variant.unit_variant()?;
        Ok(effort)
    }
}

/// The variant's identifier, read by the same visitor.
impl<'de> serde::de::DeserializeSeed<'de> for TableEffortVisitor {
    type Value = Effort;

    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<Effort, D::Error> {
        d.deserialize_identifier(self)
    }
}

fn table_effort_schema(_: &mut SchemaGenerator) -> Schema {
    schemars::json_schema!({ "type": ["string", "null"], "enum": ["low", "medium", "high", null] })
}

fn optional_library_schema(gen: &mut SchemaGenerator) -> Schema {
    library_schema(gen)
}

/// How a `Spanned` value is stored. The build script stores the parsed
/// built-in tables (postcard), so that a run reads them back, with the
/// spans diagnostics point at, without parsing TOML: each spanned value as
/// `(start, end, value)`. Reading asks for the reserved struct
/// `toml::Spanned` reads, so TOML still hands over its spans (read by
/// `toml::Spanned` itself), and takes the stored tuple too.
/// `toml::Spanned`'s own `Serialize` writes the bare value.
pub(crate) mod spans {
    use std::fmt;
    use std::marker::PhantomData;

    use serde::de::value::MapAccessDeserializer;
    use serde::de::{Error, MapAccess, SeqAccess, Visitor};
    use serde::ser::{SerializeSeq, SerializeTuple};
    use serde::{Deserialize, Deserializer, Serialize, Serializer};
    use toml::Spanned;

    /// The names serde_spanned reserves; a deserializer that keeps spans
    /// (TOML's) recognises the struct by them.
    const NAME: &str = "$__serde_spanned_private_Spanned";
    const FIELDS: &[&str] = &[
        "$__serde_spanned_private_start",
        "$__serde_spanned_private_end",
        "$__serde_spanned_private_value",
    ];

    struct Stored<'a, T>(&'a Spanned<T>);

    impl<T: Serialize> Serialize for Stored<'_, T> {
        fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
            let span = self.0.span();
            let mut fields = serializer.serialize_tuple(3)?;
            fields.serialize_element(&span.start)?;
            fields.serialize_element(&span.end)?;
            fields.serialize_element(self.0.get_ref())?;
            fields.end()
        }
    }

    /// A spanned value read from TOML or from its stored form.
    struct Read<T>(Spanned<T>);

    impl<'de, T: Deserialize<'de>> Deserialize<'de> for Read<T> {
        fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
            deserializer
                .deserialize_struct(NAME, FIELDS, ReadVisitor(PhantomData))
                .map(Read)
        }
    }

    struct ReadVisitor<T>(PhantomData<T>);

    impl<'de, T: Deserialize<'de>> Visitor<'de> for ReadVisitor<T> {
        type Value = Spanned<T>;

        fn expecting(&self, formatter: &mut fmt::Formatter) -> fmt::Result {
            formatter.write_str("a value with its span")
        }

        fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Spanned<T>, A::Error> {
            Spanned::deserialize(MapAccessDeserializer::new(map))
        }

        fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Spanned<T>, A::Error> {
            let start: usize = seq
                .next_element()?
                .ok_or_else(|| A::Error::invalid_length(0, &self))?;
            let end: usize = seq
                .next_element()?
                .ok_or_else(|| A::Error::invalid_length(1, &self))?;
            let value: T = seq
                .next_element()?
                .ok_or_else(|| A::Error::invalid_length(2, &self))?;
            Ok(Spanned::new(start..end, value))
        }
    }

    pub(crate) fn one<T: Serialize, S: Serializer>(
        value: &Spanned<T>,
        serializer: S,
    ) -> Result<S::Ok, S::Error> {
        Stored(value).serialize(serializer)
    }

    pub(crate) fn read_one<'de, T: Deserialize<'de>, D: Deserializer<'de>>(
        deserializer: D,
    ) -> Result<Spanned<T>, D::Error> {
        Read::deserialize(deserializer).map(|read| read.0)
    }

    pub(crate) fn optional<T: Serialize, S: Serializer>(
        value: &Option<Spanned<T>>,
        serializer: S,
    ) -> Result<S::Ok, S::Error> {
        match value {
            Some(value) => serializer.serialize_some(&Stored(value)),
            None => serializer.serialize_none(),
        }
    }

    pub(crate) fn read_optional<'de, T: Deserialize<'de>, D: Deserializer<'de>>(
        deserializer: D,
    ) -> Result<Option<Spanned<T>>, D::Error> {
        Option::<Read<T>>::deserialize(deserializer).map(|read| read.map(|read| read.0))
    }

    pub(crate) fn each<T: Serialize, S: Serializer>(
        values: &[Spanned<T>],
        serializer: S,
    ) -> Result<S::Ok, S::Error> {
        let mut seq = serializer.serialize_seq(Some(values.len()))?;
        for value in values {
            seq.serialize_element(&Stored(value))?;
        }
        seq.end()
    }

    pub(crate) fn read_each<'de, T: Deserialize<'de>, D: Deserializer<'de>>(
        deserializer: D,
    ) -> Result<Vec<Spanned<T>>, D::Error> {
        Vec::<Read<T>>::deserialize(deserializer)
            .map(|read| read.into_iter().map(|read| read.0).collect())
    }
}
