//! The per-API support analysis: every PyTorch API a project uses, with
//! what the vendor's list for the selected adapter release and chip says
//! of it (`cuport analyze --to ascend|mlu`).
use std::collections::BTreeMap;

use cuport_analyze::TorchApiInventory;
use cuport_rules::api_support::{SupportLists, SupportStatus, VersionList};
use serde::Serialize;

use crate::csv_out::csv_records;
use crate::error::ReportError;
use crate::python_guidance::{
    advice_records, custom_op_records, third_party_records, AdviceRecord, CudaSources,
    CustomOpRecord, ThirdPartyRecord,
};

/// Name and version of the JSON document.
pub const API_SUPPORT_FORMAT: &str = "cuport-api-support";
pub const API_SUPPORT_VERSION: u32 = 2;

/// One use of one API and its support.
#[derive(Debug, Clone, Serialize)]
pub struct SupportRecord {
    pub file: String,
    pub line: u32,
    pub column: u32,
    pub api: String,
    pub status: SupportStatus,
    /// The known torch_npu versions whose list supports it on the chip.
    pub versions: String,
    /// The chips the selected version supports it on.
    pub chips: String,
    pub note: String,
    /// The vendor document of the row, with the lists' commit.
    pub source: String,
}

/// A method call on a receiver whose type the file does not show.
#[derive(Debug, Clone, Serialize)]
pub struct UnresolvedRecord {
    pub file: String,
    pub line: u32,
    pub column: u32,
    pub method: String,
}

#[derive(Debug, Serialize)]
pub struct ApiSupportReport {
    pub format: &'static str,
    pub format_version: u32,
    pub target: String,
    /// The PyTorch adapter (`torch_npu`, `torch_mlu`) and its release.
    pub adapter: String,
    pub release: String,
    pub chip: String,
    pub lists_source: String,
    /// Python files read, and those tree-sitter could not parse.
    pub files: usize,
    pub unparsed_files: Vec<String>,
    pub records: Vec<SupportRecord>,
    pub unresolved: Vec<UnresolvedRecord>,
    /// Uses of CUDA-only packages, with the target's alternative.
    pub third_party: Vec<ThirdPartyRecord>,
    /// Kernels of the CUDA extensions the project builds.
    pub custom_ops: Vec<CustomOpRecord>,
    /// Precision and performance advice the uses trigger.
    pub advice: Vec<AdviceRecord>,
}

impl ApiSupportReport {
    /// Uses per status (every status present, zero included).
    pub fn counts(&self) -> BTreeMap<SupportStatus, usize> {
        let mut counts: BTreeMap<SupportStatus, usize> = [
            SupportStatus::Supported,
            SupportStatus::Restricted,
            SupportStatus::Unsupported,
            SupportStatus::Unknown,
        ]
        .into_iter()
        .map(|s| (s, 0))
        .collect();
        for record in &self.records {
            *counts.entry(record.status).or_default() += 1;
        }
        counts
    }

    /// Distinct APIs with `status`, most used first: (api, uses, first record).
    pub fn apis_with(&self, status: SupportStatus) -> Vec<(&str, usize, &SupportRecord)> {
        let mut by_api: BTreeMap<&str, (usize, &SupportRecord)> = BTreeMap::new();
        for record in self.records.iter().filter(|r| r.status == status) {
            by_api.entry(&record.api).or_insert((0, record)).0 += 1;
        }
        let mut apis: Vec<_> = by_api
            .into_iter()
            .map(|(api, (uses, first))| (api, uses, first))
            .collect();
        apis.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
        apis
    }
}

/// What `cuport migrate` makes of an API on the target (`torch.cuda.synchronize`
/// → `torch.npu.synchronize`), from the rule tables.
pub type PortOf<'a> = &'a dyn Fn(&str) -> Option<String>;

/// Joins the files' API uses with the lists of `version` on `chip`, and
/// their package uses, extension builds and advice triggers with the
/// target's guidance.
pub fn api_support_report(
    files: &[(String, TorchApiInventory)],
    lists: &SupportLists,
    selected: (&VersionList, &str),
    port_of: PortOf<'_>,
    cuda_sources: &CudaSources<'_>,
) -> ApiSupportReport {
    let (version, chip) = selected;
    let mut records = Vec::new();
    let mut unresolved = Vec::new();
    // A name that is only named (`torch.float64`) and that no list knows
    // was found for the advice, not for the support table.
    for (path, inventory) in files {
        for api_use in inventory
            .uses
            .iter()
            .filter(|u| u.called || lists.lists(&u.api))
        {
            let mut record = record(path, api_use, lists, version, chip);
            if let Some(port) = port_of(&record.api) {
                record.note = join_note(
                    &record.note,
                    &format!("`cuport migrate` ports it to `{port}`"),
                );
            }
            records.push(record);
        }
        unresolved.extend(inventory.unresolved.iter().map(|u| UnresolvedRecord {
            file: path.clone(),
            line: u.line,
            column: u.column,
            method: u.method.clone(),
        }));
    }
    ApiSupportReport {
        format: API_SUPPORT_FORMAT,
        format_version: API_SUPPORT_VERSION,
        target: lists.target.to_string(),
        adapter: lists.adapter.clone(),
        release: version.version.clone(),
        chip: chip.to_owned(),
        lists_source: lists.source.clone(),
        files: files.len(),
        unparsed_files: files
            .iter()
            .filter(|(_, i)| i.unparsed)
            .map(|(p, _)| p.clone())
            .collect(),
        records,
        unresolved,
        third_party: third_party_records(files, &lists.guidance),
        custom_ops: custom_op_records(files, cuda_sources),
        advice: advice_records(files, cuda_sources.library_uses, &lists.guidance),
    }
}

fn record(
    path: &str,
    api_use: &cuport_analyze::ApiUse,
    lists: &SupportLists,
    version: &VersionList,
    chip: &str,
) -> SupportRecord {
    let row = version.row(&api_use.api);
    let status = row.map_or(SupportStatus::Unknown, |r| r.status(chip));
    let mut note = row.map(|r| r.note.clone()).unwrap_or_default();
    if matches!(status, SupportStatus::Unsupported | SupportStatus::Unknown) {
        if let Some(newer) = lists.first_newer_supporting(version, &api_use.api, chip) {
            note = join_note(
                &note,
                &format!("supported on {chip} from {} {newer}", lists.adapter),
            );
        }
    }
    if status == SupportStatus::Unknown && row.is_none() {
        note = join_note(
            "not in the vendor's list for this version: not verified on NPU",
            &note,
        );
    }
    SupportRecord {
        file: path.to_owned(),
        line: api_use.line,
        column: api_use.column,
        api: api_use.api.clone(),
        status,
        versions: lists.supporting_versions(&api_use.api, chip).join(";"),
        chips: row
            .map(|r| r.supported_on().collect::<Vec<_>>().join(";"))
            .unwrap_or_default(),
        note,
        source: row.map_or_else(String::new, |r| r.source.clone()),
    }
}

fn join_note(note: &str, more: &str) -> String {
    match (note.is_empty(), more.is_empty()) {
        (true, _) => more.to_owned(),
        (false, true) => note.to_owned(),
        (false, false) => format!("{note}; {more}"),
    }
}

/// `api_support.csv`: `file,line,column,api,status,versions,chips,note,source`.
pub fn api_support_csv(report: &ApiSupportReport) -> Result<String, ReportError> {
    let header = [
        "file", "line", "column", "api", "status", "versions", "chips", "note", "source",
    ];
    csv_records(&header, &report.records)
}
