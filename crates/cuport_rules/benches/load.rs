//! Load time of the built-in tables: `cargo bench -p cuport_rules --bench load`.
use cuport_model::Target;
use cuport_rules::{Flavour, RuleSet};

fn main() {
    divan::main();
}

#[divan::bench]
fn builtin_rule_set() -> usize {
    match RuleSet::builtin() {
        Ok(set) => set.sources().len(),
        Err(_) => 0,
    }
}

/// Layering one small user file over the built-ins (only that file is parsed).
#[divan::bench]
fn with_user_file(bencher: divan::Bencher) {
    let Ok(set) = RuleSet::builtin() else {
        return;
    };
    let path = std::env::temp_dir().join(format!("cuport-bench-{}.toml", std::process::id()));
    let user = "[meta]\ntarget = \"hip\"\nsource = \"bench\"\ncode = \"CP9000\"\n\n[[entry]]\ncuda = \"cudaMalloc\"\nstatus = \"renamed\"\nto = \"hipMallocManaged\"\n";
    if std::fs::write(&path, user).is_err() {
        return;
    }
    bencher
        .with_inputs(|| set.clone())
        .bench_values(|set| set.with_user_file(&path, 1).is_ok());
    let _ = std::fs::remove_file(&path);
}

#[divan::bench]
fn lookup_hit_and_miss(bencher: divan::Bencher) {
    let Ok(set) = RuleSet::builtin() else {
        return;
    };
    bencher.bench(|| {
        let hit = set
            .lookup(Target::Hip, divan::black_box("cudaMemcpy"))
            .is_some();
        let miss = set
            .lookup(Target::Hip, divan::black_box("cudaNoSuchThing"))
            .is_some();
        hit ^ miss
    });
}

#[divan::bench]
fn lookup_roc_and_device_string(bencher: divan::Bencher) {
    let Ok(set) = RuleSet::builtin() else {
        return;
    };
    bencher.bench(|| {
        let roc = set
            .lookup_flavour(
                Target::Hip,
                Flavour::Roc,
                divan::black_box("cublasSgemm_v2"),
            )
            .is_some();
        let device = set
            .lookup(Target::Ascend, divan::black_box("cuda:1"))
            .is_some();
        roc ^ device
    });
}
