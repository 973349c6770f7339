//! changes.csv (one row per applied edit) and unsupported.csv (one row per
//! site left for a person), for spreadsheets and trackers.
use crate::document::ReportDocument;
use crate::error::ReportError;

const CHANGES_HEADER: [&str; 9] = [
    "file",
    "line",
    "column",
    "cuda_name",
    "target",
    "rule_code",
    "status",
    "original",
    "effort_hours",
];

const UNSUPPORTED_HEADER: [&str; 10] = [
    "file",
    "line",
    "column",
    "cuda_name",
    "guidance",
    "rule_code",
    "level",
    "library",
    "effort",
    "effort_hours",
];

/// Every applied edit. Effort is that of approximate diagnostics at the
/// edit (the review it needs); other edits cost none.
pub fn changes_csv(document: &ReportDocument) -> Result<String, ReportError> {
    let mut w = csv::Writer::from_writer(Vec::new());
    w.write_record(CHANGES_HEADER).map_err(encode)?;
    for file in &document.files {
        for e in &file.edits {
            let hours: f64 = file
                .diagnostics
                .iter()
                .filter(|d| d.level == crate::Level::Approximate && d.start == e.start)
                .map(|d| d.effort_hours)
                .fold(0.0, |sum, h| sum + h);
            w.write_record([
                file.path.as_str(),
                &e.line.to_string(),
                &e.column.to_string(),
                &e.cuda_name,
                e.replacement.trim_end_matches(['\r', '\n']),
                &e.code.to_string(),
                e.status.id(),
                &e.original,
                &hours.to_string(),
            ])
            .map_err(encode)?;
        }
    }
    finish(w)
}

/// Every manual or unsupported diagnostic, with what to do about it.
pub fn unsupported_csv(document: &ReportDocument) -> Result<String, ReportError> {
    let mut w = csv::Writer::from_writer(Vec::new());
    w.write_record(UNSUPPORTED_HEADER).map_err(encode)?;
    for file in &document.files {
        for d in file.diagnostics.iter().filter(|d| d.level.is_unported()) {
            w.write_record([
                file.path.as_str(),
                &d.line.to_string(),
                &d.column.to_string(),
                &d.cuda_name,
                d.guidance(),
                &d.code.to_string(),
                d.level.id(),
                d.library.id(),
                d.effort.map_or("", cuport_model::Effort::id),
                &d.effort_hours.to_string(),
            ])
            .map_err(encode)?;
        }
    }
    finish(w)
}

/// A table with `header` and one row per record, its fields in order (the
/// header names them: a test of each table checks both).
pub(crate) fn csv_records<T: serde::Serialize>(
    header: &[&str],
    records: &[T],
) -> Result<String, ReportError> {
    let mut writer = csv::WriterBuilder::new()
        .has_headers(false)
        .from_writer(Vec::new());
    writer.write_record(header).map_err(encode)?;
    for record in records {
        writer.serialize(record).map_err(encode)?;
    }
    finish(writer)
}

pub(crate) fn finish(w: csv::Writer<Vec<u8>>) -> Result<String, ReportError> {
    let bytes = w.into_inner().map_err(|e| ReportError::Encode {
        what: "CSV table",
        error: e.to_string(),
    })?;
    String::from_utf8(bytes).map_err(|e| ReportError::Encode {
        what: "CSV table",
        error: e.to_string(),
    })
}

pub(crate) fn encode(error: csv::Error) -> ReportError {
    ReportError::Encode {
        what: "CSV table",
        error: error.to_string(),
    }
}
