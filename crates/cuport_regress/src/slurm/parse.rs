//! Reading what Slurm's commands print: `sbatch --parsable`,
//! `scontrol show job -o` and `sacct -X -n -P`.

/// One job, or one task of an array job, as Slurm describes it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct JobRecord {
    /// The array's job id (the job's own id when it is not an array).
    pub array_job_id: String,
    pub tasks: TaskIds,
    /// `COMPLETED`, `RUNNING`, ...: the first word of Slurm's state.
    pub state: String,
    pub reason: Option<String>,
    /// `EXIT:SIGNAL`.
    pub exit_code: Option<String>,
    pub node: Option<String>,
    pub partition: Option<String>,
}

/// Which array tasks a record stands for.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum TaskIds {
    /// Not an array job.
    #[default]
    None,
    /// One task, running or finished.
    One(u32),
    /// Tasks not started yet, e.g. `2-7%2`.
    Pending(String),
}

impl JobRecord {
    /// Whether the job will not change any more.
    pub fn is_final(&self) -> bool {
        is_final_state(&self.state)
    }

    /// `ARRAY_TASK`, or the plain job id.
    pub fn display_id(&self) -> String {
        match &self.tasks {
            TaskIds::One(t) => format!("{}_{t}", self.array_job_id),
            TaskIds::Pending(t) => format!("{}_[{t}]", self.array_job_id),
            TaskIds::None => self.array_job_id.clone(),
        }
    }
}

/// States after which Slurm does nothing more with a job (`squeue(1)`'s
/// JOB STATE CODES that are not transitional).
pub fn is_final_state(state: &str) -> bool {
    matches!(
        state,
        "COMPLETED"
            | "FAILED"
            | "CANCELLED"
            | "TIMEOUT"
            | "NODE_FAIL"
            | "PREEMPTED"
            | "OUT_OF_MEMORY"
            | "BOOT_FAIL"
            | "DEADLINE"
            | "REVOKED"
            | "SPECIAL_EXIT"
    )
}

/// The job id of `sbatch --parsable` (`ID` or `ID;CLUSTER`).
pub fn parse_parsable(stdout: &str) -> Option<String> {
    let line = stdout.lines().map(str::trim).rfind(|l| !l.is_empty())?;
    let id = line.split(';').next()?.trim();
    (!id.is_empty() && id.chars().all(|c| c.is_ascii_digit())).then(|| id.to_owned())
}

/// `scontrol show job -o`: one record per line of `Key=Value` words.
/// Values may contain spaces (a `Command=` path); a word without `=` that
/// does not look like a key continues the previous value.
pub fn parse_scontrol(stdout: &str) -> Vec<JobRecord> {
    stdout
        .lines()
        .filter(|l| l.trim_start().starts_with("JobId="))
        .map(|line| {
            let fields = key_values(line);
            let get = |k: &str| {
                fields
                    .iter()
                    .find(|(key, _)| *key == k)
                    .map(|(_, v)| v.trim().to_owned())
                    .filter(|v| !v.is_empty() && v != "(null)")
            };
            let job_id = get("JobId").unwrap_or_default();
            let tasks = match get("ArrayTaskId") {
                None => TaskIds::None,
                Some(t) => t
                    .parse::<u32>()
                    .map(TaskIds::One)
                    .unwrap_or(TaskIds::Pending(t)),
            };
            JobRecord {
                array_job_id: get("ArrayJobId").unwrap_or(job_id),
                tasks,
                state: first_word(&get("JobState").unwrap_or_default()),
                reason: get("Reason").filter(|r| r != "None"),
                exit_code: get("ExitCode"),
                node: get("NodeList").or_else(|| get("BatchHost")),
                partition: get("Partition"),
            }
        })
        .collect()
}

fn key_values(line: &str) -> Vec<(&str, String)> {
    let mut fields: Vec<(&str, String)> = Vec::new();
    for word in line.split_whitespace() {
        match word.split_once('=') {
            Some((key, value)) if is_key(key) => fields.push((key, value.to_owned())),
            _ => {
                if let Some((_, value)) = fields.last_mut() {
                    value.push(' ');
                    value.push_str(word);
                }
            }
        }
    }
    fields
}

fn is_key(key: &str) -> bool {
    key.chars().next().is_some_and(|c| c.is_ascii_uppercase())
        && key
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | ':' | '/'))
}

fn first_word(state: &str) -> String {
    state.split_whitespace().next().unwrap_or("").to_owned()
}

/// The columns [`parse_sacct`] expects, for `sacct -o`.
pub const SACCT_FORMAT: &str = "JobID,State,ExitCode,NodeList,Partition,Reason";

/// `sacct -X -n -P -o` [`SACCT_FORMAT`]: `|`-separated rows; array tasks
/// are `ARRAY_TASK`, pending ones `ARRAY_[2-7%2]`; states may carry a
/// suffix (`CANCELLED by 0`).
pub fn parse_sacct(stdout: &str) -> Vec<JobRecord> {
    stdout
        .lines()
        .filter_map(|line| {
            let cols: Vec<&str> = line.trim_end().split('|').collect();
            let [id, state, exit, node, partition, reason, ..] = cols.as_slice() else {
                return None;
            };
            let (array_job_id, tasks) = split_sacct_id(id)?;
            let opt = |s: &str| {
                let s = s.trim();
                (!s.is_empty() && s != "None" && s != "None assigned").then(|| s.to_owned())
            };
            Some(JobRecord {
                array_job_id,
                tasks,
                state: first_word(state),
                reason: opt(reason),
                exit_code: opt(exit),
                node: opt(node),
                partition: opt(partition),
            })
        })
        .collect()
}

fn split_sacct_id(id: &str) -> Option<(String, TaskIds)> {
    let id = id.trim();
    if id.is_empty() || id.contains('.') {
        return None; // a step (`12.batch`), not the job
    }
    Some(match id.split_once('_') {
        None => (id.to_owned(), TaskIds::None),
        Some((job, task)) => {
            let tasks = match task.parse::<u32>() {
                Ok(t) => TaskIds::One(t),
                Err(_) => TaskIds::Pending(
                    task.trim_start_matches('[')
                        .trim_end_matches(']')
                        .to_owned(),
                ),
            };
            (job.to_owned(), tasks)
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    // Shapes below are what Slurm 22.05.8 printed on the test cluster
    // (regress/slurm/start-test-cluster.sh), trimmed to the fields read.
    const SCONTROL: &str = "\
JobId=8 ArrayJobId=6 ArrayTaskId=1 ArrayTaskThrottle=2 JobName=cuport-regress-ascend UserId=root(0) Account=(null) JobState=COMPLETED Reason=None Dependency=(null) ExitCode=0:0 Partition=ascend NodeList=localhost BatchHost=localhost Command=/tmp/run dir/jobs/ascend.sh WorkDir=/tmp
JobId=6 ArrayJobId=6 ArrayTaskId=2-5%2 ArrayTaskThrottle=2 JobState=PENDING Reason=JobArrayTaskLimit ExitCode=0:0 Partition=ascend NodeList=(null)
JobId=9 ArrayJobId=6 ArrayTaskId=0 JobState=CANCELLED Reason=None ExitCode=0:15 Partition=ascend NodeList=localhost
JobId=11 JobName=wrap JobState=TIMEOUT Reason=TimeLimit ExitCode=0:1 Partition=cuda NodeList=localhost
";

    #[test]
    fn scontrol_records() {
        let r = parse_scontrol(SCONTROL);
        assert_eq!(r.len(), 4);
        assert_eq!(r[0].display_id(), "6_1");
        assert_eq!(r[0].state, "COMPLETED");
        assert_eq!(r[0].reason, None);
        assert_eq!(r[0].node.as_deref(), Some("localhost"));
        assert_eq!(r[0].partition.as_deref(), Some("ascend"));
        assert!(r[0].is_final());
        assert_eq!(r[1].tasks, TaskIds::Pending("2-5%2".into()));
        assert_eq!(r[1].reason.as_deref(), Some("JobArrayTaskLimit"));
        assert_eq!(r[1].node, None);
        assert!(!r[1].is_final());
        assert_eq!(r[2].exit_code.as_deref(), Some("0:15"));
        assert_eq!(r[3].display_id(), "11");
        assert_eq!(r[3].state, "TIMEOUT");
        assert_eq!(r[3].reason.as_deref(), Some("TimeLimit"));
    }

    #[test]
    fn scontrol_values_with_spaces_stay_whole() {
        let fields = key_values("JobId=1 Command=/tmp/run dir/x.sh WorkDir=/tmp");
        assert_eq!(fields[1], ("Command", "/tmp/run dir/x.sh".to_owned()));
    }

    #[test]
    fn sacct_rows() {
        let out = "12_0|COMPLETED|0:0|node01|cuda|None\n12_1|CANCELLED by 0|0:15|node02|cuda|None\n\
                   12_[2-3%1]|PENDING|0:0|None assigned|cuda|JobArrayTaskLimit\n12_0.batch|COMPLETED|0:0|node01||\n\
                   13|NODE_FAIL|1:0|node03|ascend|None\n";
        let r = parse_sacct(out);
        assert_eq!(r.len(), 4);
        assert_eq!(r[0].display_id(), "12_0");
        assert_eq!(r[1].state, "CANCELLED");
        assert_eq!(r[2].tasks, TaskIds::Pending("2-3%1".into()));
        assert_eq!(r[2].node, None);
        assert_eq!(r[3].display_id(), "13");
        assert_eq!(r[3].state, "NODE_FAIL");
        assert_eq!(r[3].exit_code.as_deref(), Some("1:0"));
    }

    #[test]
    fn parsable_ids() {
        assert_eq!(parse_parsable("123\n"), Some("123".into()));
        assert_eq!(parse_parsable("124;cluster2\n"), Some("124".into()));
        assert_eq!(parse_parsable("Submitted batch job 5\n"), None);
        assert_eq!(parse_parsable(""), None);
    }
}
