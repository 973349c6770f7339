//! One portable name in one backend section of a shim header: a macro that
//! forwards to the backend's name, a function-like macro built from the
//! rule's argument template, or a declaration that the compiler refuses to
//! use with the rule's guidance as the message.
use std::fmt::Write as _;

use cuport_model::Target;
use cuport_rules::{NameKind, Resolved, Status};

/// How a portable name is provided on one backend.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Provision {
    /// `#define P NAME` (renamed, exact, approximate without a template).
    Alias { to: String, approximate: bool },
    /// `#define P(a1, a2) BODY`.
    Macro { params: Vec<String>, body: String },
    /// A declaration marked unavailable, so using it fails to compile with
    /// `message` (an unsupported or manual name); unused, it costs nothing.
    Unavailable { kind: NameKind, message: String },
}

/// What `cuda_name` (resolved on `target`) becomes in the target's section.
pub(crate) fn provision(cuda_name: &str, resolved: &Resolved<'_>, target: Target) -> Provision {
    let template = resolved.template();
    match (resolved.status(), template) {
        (Status::Rewrite | Status::Approximate, Some(template)) => {
            macro_provision(resolved, template)
        }
        (Status::Exact | Status::Renamed | Status::Approximate | Status::Rewrite, _)
            if resolved.target_name.is_some() =>
        {
            Provision::Alias {
                to: resolved
                    .target_name
                    .as_deref()
                    .unwrap_or(cuda_name)
                    .to_owned(),
                approximate: resolved.status() == Status::Approximate,
            }
        }
        _ => Provision::Unavailable {
            kind: resolved.kind(),
            message: unavailable_message(cuda_name, resolved, target),
        },
    }
}

/// An older release's form: for a type or value whose older form is a
/// bare name (`hip_bfloat16` before HIP 6.2), an alias (a function-like
/// macro would not replace a type); otherwise a macro, as for a template.
pub(crate) fn older_provision(
    resolved: &Resolved<'_>,
    template: &cuport_rules::Template,
) -> Provision {
    match template.plain_name() {
        Some(name) if resolved.kind() != NameKind::Function => Provision::Alias {
            to: name.to_owned(),
            approximate: true,
        },
        _ => macro_provision(resolved, template),
    }
}

/// `#define P(a1, a2) BODY` from `template` (the rule's, or its
/// `older-sdk` form for a shim made for an older release).
pub(crate) fn macro_provision(
    resolved: &Resolved<'_>,
    template: &cuport_rules::Template,
) -> Provision {
    // Arguments the template never reads (CUDA's trailing defaults, such
    // as cudaStreamWaitEvent's flags on Ascend) are taken by `...`, so a
    // call may pass them or leave them out, as on CUDA.
    let declared = resolved
        .cuda_params()
        .map_or(template.max_arg(), <[String]>::len);
    let named = template.rest_from().unwrap_or(template.max_arg());
    let mut params: Vec<String> = (1..=named).map(|i| format!("cuport_a{i}")).collect();
    let refs: Vec<&str> = params.iter().map(String::as_str).collect();
    let body = template.macro_body(&refs);
    if template.rest_from().is_some() || declared > named {
        params.push("...".to_owned());
    }
    Provision::Macro { params, body }
}

/// An alias whose calls need [[argument]] wraps (`(void**)` where HIP has
/// no `T**` overload) becomes a function-like macro that writes them, when
/// the CUDA parameters are known; otherwise it stays an alias.
pub(crate) fn with_argument_rules(
    provided: Provision,
    resolved: &Resolved<'_>,
    rules: &[&cuport_rules::ArgumentRule],
) -> Provision {
    let (Provision::Alias { to, .. }, Some(params)) = (&provided, resolved.cuda_params()) else {
        return provided;
    };
    if rules.is_empty() {
        return provided;
    }
    let args: Vec<String> = (1..=params.len())
        .map(|position| {
            let placeholder = format!("${position}");
            rules
                .iter()
                .find(|r| r.position == position)
                .map_or_else(|| placeholder.clone(), |r| r.around(&placeholder))
        })
        .collect();
    match cuport_rules::Template::parse(&format!("{to}({})", args.join(", "))) {
        Ok(template) => macro_provision(resolved, &template),
        Err(_) => provided,
    }
}

fn unavailable_message(cuda_name: &str, resolved: &Resolved<'_>, target: Target) -> String {
    let what = match resolved.status() {
        Status::Unsupported => "has no counterpart",
        _ => "needs a manual port",
    };
    let mut message = format!("{cuda_name} {what} on {target}");
    if let Some(note) = resolved.note() {
        let _ = write!(message, ": {note}");
    }
    if let Some(code) = resolved.code() {
        let _ = write!(message, " [{code}]");
    }
    message
}

/// Writes the provision of `portable` as C.
pub(crate) fn write(out: &mut String, portable: &str, provision: &Provision) {
    let _ = match provision {
        Provision::Alias {
            to,
            approximate: false,
        } => writeln!(out, "#define {portable} {to}"),
        Provision::Alias {
            to,
            approximate: true,
        } => writeln!(out, "#define {portable} {to} /* approximate */"),
        Provision::Macro { params, body } => {
            writeln!(out, "#define {portable}({}) {body}", params.join(", "))
        }
        Provision::Unavailable { kind, message } => {
            let wrapper = match kind {
                NameKind::Type => "CUPORT_UNAVAILABLE_TYPE",
                NameKind::EnumValue | NameKind::Macro => "CUPORT_UNAVAILABLE_VALUE",
                _ => "CUPORT_UNAVAILABLE_FUNCTION",
            };
            writeln!(out, "{wrapper}({portable}, \"{}\");", c_string(message))
        }
    };
}

/// `text` as the inside of a C string literal on one line.
pub(crate) fn c_string(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' | '\r' | '\t' => out.push(' '),
            c if c.is_control() => {}
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_are_escaped_for_c() {
        assert_eq!(c_string("say \"hi\"\\\n"), "say \\\"hi\\\"\\\\ ");
    }

    #[test]
    fn unavailable_names_are_declared_by_kind() {
        let mut out = String::new();
        let provision = Provision::Unavailable {
            kind: NameKind::Type,
            message: "m".into(),
        };
        write(&mut out, "cuportX_t", &provision);
        assert_eq!(out, "CUPORT_UNAVAILABLE_TYPE(cuportX_t, \"m\");\n");
    }
}
