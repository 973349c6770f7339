//! Throughput of the one-pass accuracy metrics (target: ≥ 1 GB/s per core,
//! counting the bytes of both tensors). Run:
//! `cargo bench -p cuport_regress --bench metrics`
use cuport_regress::dtype::DType;
use cuport_regress::metrics::compare;
use cuport_regress::rng::generate_input;
use cuport_regress::tensor::Tensor;
use divan::counter::BytesCount;
use divan::Bencher;

const LEN: usize = 1 << 22;

fn main() {
    divan::main();
}

fn pair(actual: DType, expected: DType) -> (Tensor, Tensor) {
    let values = generate_input(1, 0, LEN, DType::F64);
    let noisy: Vec<f64> = values
        .iter()
        .enumerate()
        .map(|(i, v)| v * (1.0 + 1e-6 * (i % 7) as f64))
        .collect();
    (
        Tensor::from_f64(actual, vec![LEN], &noisy),
        Tensor::from_f64(expected, vec![LEN], &values),
    )
}

fn bench_pair(bencher: Bencher, actual: DType, expected: DType) {
    let (a, e) = pair(actual, expected);
    let bytes = LEN * (actual.size_bytes() + expected.size_bytes());
    bencher.counter(BytesCount::new(bytes)).bench(|| {
        compare(
            divan::black_box(&a),
            divan::black_box(&e),
            actual.default_tolerance(),
        )
    });
}

#[divan::bench(sample_count = 20)]
fn f32_vs_f32(bencher: Bencher) {
    bench_pair(bencher, DType::F32, DType::F32);
}

#[divan::bench(sample_count = 20)]
fn f32_vs_f64_oracle(bencher: Bencher) {
    bench_pair(bencher, DType::F32, DType::F64);
}

#[divan::bench(sample_count = 20)]
fn f16_vs_f16(bencher: Bencher) {
    bench_pair(bencher, DType::F16, DType::F16);
}

#[divan::bench(sample_count = 20)]
fn bf16_vs_f64_oracle(bencher: Bencher) {
    bench_pair(bencher, DType::Bf16, DType::F64);
}
