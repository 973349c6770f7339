//! The C++ text of one Ascend C skeleton. Names used are those of the
//! Ascend C documentation and public samples (`AscendC::TPipe`, `TQue`,
//! `GlobalTensor`, `LocalTensor`, `DataCopy`, `GetBlockIdx`, `GM_ADDR`);
//! anything not confirmed there is marked UNCONFIRMED in the output.
use super::buffer::{buffers, Buffer};
use super::params::{ascend_type, camel_case, ParamKind};
use super::todos::todos;
use super::KernelShape;

/// Lines of C++ being built.
#[derive(Default)]
struct Text(String);

impl Text {
    fn line(&mut self, line: impl AsRef<str>) {
        self.0.push_str(line.as_ref());
        self.0.push('\n');
    }
}

pub(crate) fn render(k: &KernelShape) -> String {
    let buffers = buffers(&k.params);
    let mut t = Text::default();
    header(&mut t, k, &buffers);
    class(&mut t, k, &buffers);
    entry(&mut t, k);
    cuda_body(&mut t, k);
    t.0
}

/// `const` pointers are read (VECIN), the others written (VECOUT); a
/// kernel without any `const` pointer reads and writes each one.
fn class_name(k: &KernelShape) -> String {
    format!("Kernel{}", camel_case(k.name))
}

fn header(t: &mut Text, k: &KernelShape, buffers: &[Buffer]) {
    t.line(format!(
        "// Ascend C skeleton for the CUDA kernel `{}` ({}:{}), written by cuport.",
        k.name, k.source, k.line
    ));
    t.line("// A starting point for a manual port, not a translation: the structure follows");
    t.line("// the vector samples of the Ascend C documentation (one instance per AI Core,");
    t.line("// CopyIn -> Compute -> CopyOut over tiles of the Unified Buffer, double-buffered");
    t.line("// queues). The CUDA body is kept as a comment at the end of this file.");
    if let Some(operator) = &k.operator {
        t.line("//");
        t.line(format!(
            "// Consider first: this kernel looks like {operator} (then no kernel is needed)."
        ));
    }
    t.line("//");
    t.line(format!(
        "// Host launch (replaces `{}<<<grid, block, smem, stream>>>`):",
        k.name
    ));
    let names: Vec<&str> = k.params.iter().map(|p| p.name.as_str()).collect();
    t.line(format!(
        "//   {}<<<blockDim, nullptr, stream>>>({});  // blockDim = number of AI Cores",
        k.name,
        names.join(", ")
    ));
    t.line("//   aclrtSynchronizeStream(stream);");
    t.line("//");
    t.line("// TODO:");
    for todo in todos(k, buffers) {
        t.line(format!("//   - {todo}"));
    }
    t.line("");
    t.line("#include \"kernel_operator.h\"");
    t.line("");
    t.line("#ifndef GM_ADDR");
    t.line("// The spelling the Ascend C documentation recommends for global-memory arguments.");
    t.line("#define GM_ADDR __gm__ uint8_t*");
    t.line("#endif");
    t.line("");
    t.line("namespace {");
    t.line("");
    t.line("constexpr int32_t BUFFER_NUM = 2;  // queue depth 2: double buffering");
    t.line("// TODO: elements one core handles and elements per tile; derive them from the");
    t.line("// data size, the number of cores and the Unified Buffer capacity.");
    t.line("constexpr uint32_t BLOCK_LENGTH = 2048;");
    t.line("constexpr uint32_t TILE_LENGTH = 256;");
    t.line("");
}

fn template_header(k: &KernelShape) -> Option<String> {
    if k.template.is_empty() {
        return None;
    }
    let params: Vec<String> = k
        .template
        .iter()
        .map(|p| match &p.value_type {
            None => format!("typename {}", p.name),
            Some(ty) => format!("{ty} {}", p.name),
        })
        .collect();
    Some(format!("template <{}>", params.join(", ")))
}

/// Init's parameters: the kernel's, with pointers as `GM_ADDR`.
fn init_params(k: &KernelShape, substitute: bool) -> Vec<String> {
    k.params
        .iter()
        .map(|p| match &p.kind {
            ParamKind::Pointer { .. } => format!("GM_ADDR {}", p.name),
            ParamKind::Scalar { ty } => {
                let ty = if substitute {
                    placeholder_types(k, ty)
                } else {
                    ascend_type(ty)
                };
                format!("{ty} {}", p.name)
            }
        })
        .collect()
}

fn class(t: &mut Text, k: &KernelShape, buffers: &[Buffer]) {
    let name = class_name(k);
    if let Some(header) = template_header(k) {
        t.line(header);
    }
    t.line(format!("class {name} {{"));
    t.line("public:");
    t.line(format!("    __aicore__ inline {name}() {{}}"));
    let mut params = init_params(k, false);
    params.extend(["uint32_t blockLen".to_owned(), "uint32_t tileLen".into()]);
    t.line(format!(
        "    __aicore__ inline void Init({})",
        params.join(", ")
    ));
    t.line("    {");
    t.line("        blockLength = blockLen;");
    t.line("        tileLength = tileLen;");
    for p in &k.params {
        if let ParamKind::Scalar { .. } = p.kind {
            t.line(format!("        {0}_ = {0};", p.name));
        }
    }
    t.line("        // This core's slice of each buffer.");
    for b in buffers {
        t.line(format!(
            "        {}.SetGlobalBuffer(reinterpret_cast<__gm__ {}*>({}) + blockLength * AscendC::GetBlockIdx(), blockLength);",
            b.gm(),
            b.element,
            b.name
        ));
    }
    for b in buffers {
        for (queue, used) in [(b.in_queue(), b.input), (b.out_queue(), b.output)] {
            if used {
                t.line(format!(
                    "        pipe.InitBuffer({queue}, BUFFER_NUM, tileLength * sizeof({}));",
                    b.element
                ));
            }
        }
    }
    t.line("    }");
    t.line("");
    process(t);
    t.line("");
    t.line("private:");
    stages(t, k, buffers);
    members(t, k, buffers);
    t.line("};");
    t.line("");
    t.line("}  // namespace");
    t.line("");
}

fn process(t: &mut Text) {
    t.line("    __aicore__ inline void Process()");
    t.line("    {");
    t.line("        // TODO: a last, partial tile when blockLength % tileLength != 0.");
    t.line("        const uint32_t tiles = blockLength / tileLength;");
    t.line("        for (uint32_t i = 0; i < tiles; i++) {");
    t.line("            CopyIn(i);");
    t.line("            Compute(i);");
    t.line("            CopyOut(i);");
    t.line("        }");
    t.line("    }");
}

fn stages(t: &mut Text, k: &KernelShape, buffers: &[Buffer]) {
    let inputs: Vec<&Buffer> = buffers.iter().filter(|b| b.input).collect();
    let outputs: Vec<&Buffer> = buffers.iter().filter(|b| b.output).collect();
    t.line("    __aicore__ inline void CopyIn(uint32_t progress)");
    t.line("    {");
    for b in &inputs {
        let (e, local, queue) = (&b.element, b.local(), b.in_queue());
        t.line(format!(
            "        AscendC::LocalTensor<{e}> {local} = {queue}.AllocTensor<{e}>();"
        ));
        t.line(format!(
            "        AscendC::DataCopy({local}, {}[progress * tileLength], tileLength);",
            b.gm()
        ));
        t.line(format!("        {queue}.EnQue({local});"));
    }
    t.line("    }");
    t.line("");
    t.line("    __aicore__ inline void Compute(uint32_t progress)");
    t.line("    {");
    for b in &inputs {
        let (e, queue) = (&b.element, b.in_queue());
        t.line(format!(
            "        AscendC::LocalTensor<{e}> {}In = {queue}.DeQue<{e}>();",
            b.name
        ));
    }
    for b in &outputs {
        let (e, queue) = (&b.element, b.out_queue());
        t.line(format!(
            "        AscendC::LocalTensor<{e}> {}Out = {queue}.AllocTensor<{e}>();",
            b.name
        ));
    }
    t.line("        // TODO: the CUDA per-element code as whole-tile vector instructions.");
    if let Some(example) = vector_example(k, &inputs, &outputs) {
        t.line(format!("        // For this kernel perhaps: {example}"));
    }
    for b in &outputs {
        t.line(format!("        {}.EnQue({}Out);", b.out_queue(), b.name));
    }
    for b in &inputs {
        t.line(format!(
            "        {}.FreeTensor({}In);",
            b.in_queue(),
            b.name
        ));
    }
    t.line("    }");
    t.line("");
    t.line("    __aicore__ inline void CopyOut(uint32_t progress)");
    t.line("    {");
    for b in &outputs {
        let (e, local, queue) = (&b.element, b.local(), b.out_queue());
        t.line(format!(
            "        AscendC::LocalTensor<{e}> {local} = {queue}.DeQue<{e}>();"
        ));
        t.line(format!(
            "        AscendC::DataCopy({}[progress * tileLength], {local}, tileLength);",
            b.gm()
        ));
        t.line(format!("        {queue}.FreeTensor({local});"));
    }
    t.line("    }");
    t.line("");
}

/// `AscendC::Add(cOut, aIn, bIn, tileLength);` for a two-input,
/// one-output kernel that looks like an add (or multiply).
fn vector_example(k: &KernelShape, inputs: &[&Buffer], outputs: &[&Buffer]) -> Option<String> {
    let operator = k.operator.as_deref()?;
    let call = if operator.starts_with("`add`") {
        "Add"
    } else if operator.starts_with("`mul`") {
        "Mul"
    } else {
        return None;
    };
    let ([a, b], [out]) = (inputs, outputs) else {
        return None;
    };
    Some(format!(
        "AscendC::{call}({}Out, {}In, {}In, tileLength);",
        out.name, a.name, b.name
    ))
}

fn members(t: &mut Text, k: &KernelShape, buffers: &[Buffer]) {
    t.line("    AscendC::TPipe pipe;");
    t.line("    // QuePosition is the spelling of older samples; newer ones write TPosition.");
    for b in buffers {
        if b.input {
            t.line(format!(
                "    AscendC::TQue<AscendC::QuePosition::VECIN, BUFFER_NUM> {};",
                b.in_queue()
            ));
        }
        if b.output {
            t.line(format!(
                "    AscendC::TQue<AscendC::QuePosition::VECOUT, BUFFER_NUM> {};",
                b.out_queue()
            ));
        }
    }
    for b in buffers {
        t.line(format!(
            "    AscendC::GlobalTensor<{}> {};",
            b.element,
            b.gm()
        ));
    }
    for p in &k.params {
        if let ParamKind::Scalar { ty } = &p.kind {
            let ty = ascend_type(ty);
            let ty: Vec<&str> = ty.split_whitespace().filter(|w| *w != "const").collect();
            t.line(format!("    {} {}_{{}};", ty.join(" "), p.name));
        }
    }
    t.line("    uint32_t blockLength = 0;");
    t.line("    uint32_t tileLength = 0;");
}

/// The template arguments the entry uses: `float` for type parameters,
/// `1` for values; both placeholders the TODO list points at.
fn placeholder_args(k: &KernelShape) -> Option<String> {
    if k.template.is_empty() {
        return None;
    }
    let args: Vec<String> = k
        .template
        .iter()
        .map(|p| match p.value_type {
            None => format!("float /* {}: TODO */", p.name),
            Some(_) => format!("1 /* {}: TODO */", p.name),
        })
        .collect();
    Some(format!("<{}>", args.join(", ")))
}

/// `scalar_t` → `float` in the entry's signature, for template kernels.
fn placeholder_types(k: &KernelShape, ty: &str) -> String {
    ascend_type(ty)
        .split_whitespace()
        .map(|word| {
            let is_type_param = k
                .template
                .iter()
                .any(|p| p.value_type.is_none() && p.name == word);
            if is_type_param {
                "float"
            } else {
                word
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

fn entry(t: &mut Text, k: &KernelShape) {
    let params = init_params(k, true);
    t.line(format!(
        "extern \"C\" __global__ __aicore__ void {}({})",
        k.name,
        params.join(", ")
    ));
    t.line("{");
    let args = placeholder_args(k).unwrap_or_default();
    t.line(format!("    {}{args} op;", class_name(k)));
    let mut names: Vec<&str> = k.params.iter().map(|p| p.name.as_str()).collect();
    names.extend(["BLOCK_LENGTH", "TILE_LENGTH"]);
    t.line(format!("    op.Init({});", names.join(", ")));
    t.line("    op.Process();");
    t.line("}");
}

fn cuda_body(t: &mut Text, k: &KernelShape) {
    t.line("");
    t.line(format!(
        "// The CUDA kernel `{}` ({}:{}), for reference:",
        k.name, k.source, k.line
    ));
    for line in k.body.lines() {
        let line = line.trim_end();
        if line.is_empty() {
            t.line("//");
        } else {
            // A trailing backslash would continue the comment onto the next line.
            let guard = if line.ends_with('\\') {
                " (continued)"
            } else {
                ""
            };
            t.line(format!("// {line}{guard}"));
        }
    }
}
