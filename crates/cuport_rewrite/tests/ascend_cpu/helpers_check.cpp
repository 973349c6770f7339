// Runs the cuport_blaslt_*, cuport_blas_* and cuport_dnn_* helpers on the CPU stand-in (fake_acl.cpp) and
// compares each result with a direct column-major computation. Prints one
// line per case and "helpers_check: all passed" at the end; exits 1 on the
// first mismatch.
#include "cuport_ascend_decls.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>

namespace {

using Matrix = std::vector<float>;  // column-major

float value(int seed, int i) { return static_cast<float>(((seed * 131 + i * 17) % 23) - 11) / 8.0f; }

Matrix filled(int seed, size_t count) {
    Matrix m(count);
    for (size_t i = 0; i < count; ++i) m[i] = value(seed, static_cast<int>(i));
    return m;
}

double gelu(double x) { return 0.5 * x * (1 + std::tanh(0.7978845608028654 * (x + 0.044715 * x * x * x))); }
double gelu_grad(double x) {
    double t = std::tanh(0.7978845608028654 * (x + 0.044715 * x * x * x));
    return 0.5 * (1 + t) + 0.5 * x * (1 - t * t) * 0.7978845608028654 * (1 + 3 * 0.044715 * x * x);
}

// op(X)(i, j) of a column-major X with leading dimension ld.
float op_at(const Matrix &x, bool transposed, int ld, int i, int j) {
    return transposed ? x[j + static_cast<size_t>(i) * ld] : x[i + static_cast<size_t>(j) * ld];
}

int failures = 0;

void expect_close(const char *name, const Matrix &got, const Matrix &want) {
    double worst = 0;
    for (size_t i = 0; i < want.size(); ++i) worst = std::fmax(worst, std::fabs(got[i] - want[i]));
    std::printf("%-44s max |error| %.2e %s\n", name, worst, worst < 1e-4 ? "ok" : "MISMATCH");
    if (!(worst < 1e-4)) ++failures;
}

void check(const char *what, aclError status) {
    if (status != ACL_SUCCESS) {
        std::printf("%s failed: %d\n", what, status);
        std::exit(1);
    }
}

struct Case {
    const char *name;
    int m, n, k;
    bool ta, tb;
    int epilogue;
    float beta;
    int batches;  // 0: unbatched
    bool a_row_major;
};

void set_desc(cuport_blaslt_matmul_desc_t desc, cuport_blaslt_matmul_desc_attr_t attr, const void *v, size_t size) {
    check("cuport_blaslt_matmul_desc_set_attribute", cuport_blaslt_matmul_desc_set_attribute(desc, attr, v, size));
}

void run(cuport_blaslt_handle_t lt, const Case &c) {
    int batches = c.batches > 0 ? c.batches : 1;
    int a_rows = c.ta ? c.k : c.m, a_cols = c.ta ? c.m : c.k;
    int b_rows = c.tb ? c.n : c.k, b_cols = c.tb ? c.k : c.n;
    size_t a_size = static_cast<size_t>(a_rows) * a_cols, b_size = static_cast<size_t>(b_rows) * b_cols;
    size_t d_size = static_cast<size_t>(c.m) * c.n;
    Matrix a = filled(1, a_size * batches), b = filled(2, b_size * batches), d = filled(3, d_size * batches);
    Matrix bias = filled(4, static_cast<size_t>(c.m > c.n ? c.m : c.n));
    Matrix aux = filled(5, d_size);
    Matrix a_stored = a;
    if (c.a_row_major) {  // the same logical A, stored row by row
        for (int i = 0; i < a_rows; ++i)
            for (int j = 0; j < a_cols; ++j) a_stored[static_cast<size_t>(i) * a_cols + j] = a[i + static_cast<size_t>(j) * a_rows];
    }

    // Reference, column-major.
    Matrix want_d = d, want_aux = aux, want_bias = bias;
    for (int bt = 0; bt < batches; ++bt) {
        for (int j = 0; j < c.n; ++j) {
            for (int i = 0; i < c.m; ++i) {
                double sum = 0;
                for (int p = 0; p < c.k; ++p) {
                    Matrix ab(a.begin() + static_cast<long>(bt * a_size), a.begin() + static_cast<long>((bt + 1) * a_size));
                    Matrix bb(b.begin() + static_cast<long>(bt * b_size), b.begin() + static_cast<long>((bt + 1) * b_size));
                    sum += static_cast<double>(op_at(ab, c.ta, a_rows, i, p)) * op_at(bb, c.tb, b_rows, p, j);
                }
                size_t at = bt * d_size + i + static_cast<size_t>(j) * c.m;
                double x = sum + c.beta * d[at];
                bool bias_added = c.epilogue == CUPORT_BLASLT_EPILOGUE_BIAS || c.epilogue == CUPORT_BLASLT_EPILOGUE_GELU_AUX_BIAS ||
                                  c.epilogue == CUPORT_BLASLT_EPILOGUE_RELU_BIAS;
                if (bias_added) x += bias[i];
                if (c.epilogue == CUPORT_BLASLT_EPILOGUE_GELU_AUX_BIAS) {
                    want_aux[at] = static_cast<float>(x);
                    x = gelu(x);
                }
                if (c.epilogue == CUPORT_BLASLT_EPILOGUE_RELU_BIAS) x = std::fmax(x, 0.0);
                if (c.epilogue == CUPORT_BLASLT_EPILOGUE_DGELU) x *= gelu_grad(aux[at]);
                want_d[at] = static_cast<float>(x);
            }
        }
    }
    if (c.epilogue == CUPORT_BLASLT_EPILOGUE_BGRADB) {
        for (int j = 0; j < c.n; ++j) {
            double sum = 0;
            for (int p = 0; p < c.k; ++p) sum += op_at(b, c.tb, b_rows, p, j);
            want_bias[j] = static_cast<float>(sum);
        }
    }

    cuport_blaslt_matmul_desc_t desc;
    check("desc_create", cuport_blaslt_matmul_desc_create(&desc, CUPORT_BLAS_COMPUTE_32F, ACL_FLOAT));
    cuport_blas_op_t op_a = c.ta ? CUPORT_OP_T : CUPORT_OP_N, op_b = c.tb ? CUPORT_OP_T : CUPORT_OP_N;
    set_desc(desc, CUPORT_BLASLT_MATMUL_DESC_TRANSA, &op_a, sizeof(op_a));
    set_desc(desc, CUPORT_BLASLT_MATMUL_DESC_TRANSB, &op_b, sizeof(op_b));
    cuport_blaslt_epilogue_t epilogue = static_cast<cuport_blaslt_epilogue_t>(c.epilogue);
    set_desc(desc, CUPORT_BLASLT_MATMUL_DESC_EPILOGUE, &epilogue, sizeof(epilogue));
    const float *bias_ptr = bias.data();
    set_desc(desc, CUPORT_BLASLT_MATMUL_DESC_BIAS_POINTER, &bias_ptr, sizeof(bias_ptr));
    float *aux_ptr = aux.data();
    int64_t aux_ld = c.m;
    set_desc(desc, CUPORT_BLASLT_MATMUL_DESC_EPILOGUE_AUX_POINTER, &aux_ptr, sizeof(aux_ptr));
    set_desc(desc, CUPORT_BLASLT_MATMUL_DESC_EPILOGUE_AUX_LD, &aux_ld, sizeof(aux_ld));

    cuport_blaslt_layout_t la, lb, ld;
    check("layout_create", cuport_blaslt_layout_create(&la, ACL_FLOAT, a_rows, a_cols, c.a_row_major ? a_cols : a_rows));
    check("layout_create", cuport_blaslt_layout_create(&lb, ACL_FLOAT, b_rows, b_cols, b_rows));
    check("layout_create", cuport_blaslt_layout_create(&ld, ACL_FLOAT, c.m, c.n, c.m));
    if (c.a_row_major) {
        cuport_blaslt_order_t row = CUPORT_BLASLT_ORDER_ROW;
        check("order", cuport_blaslt_layout_set_attribute(la, CUPORT_BLASLT_MATRIX_LAYOUT_ORDER, &row, sizeof(row)));
    }
    if (c.batches > 0) {
        int32_t count = c.batches;
        int64_t strides[3] = {static_cast<int64_t>(a_size), static_cast<int64_t>(b_size), static_cast<int64_t>(d_size)};
        cuport_blaslt_layout_t layouts[3] = {la, lb, ld};
        for (int l = 0; l < 3; ++l) {
            check("batch", cuport_blaslt_layout_set_attribute(layouts[l], CUPORT_BLASLT_MATRIX_LAYOUT_BATCH_COUNT, &count, sizeof(count)));
            check("stride", cuport_blaslt_layout_set_attribute(layouts[l], CUPORT_BLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &strides[l], sizeof(strides[l])));
        }
    }
    cuport_blaslt_preference_t pref;
    check("pref", cuport_blaslt_preference_create(&pref));
    cuport_blaslt_heuristic_t heuristic;
    int found = 0;
    check("heuristic", cuport_blaslt_algo_get_heuristic(lt, desc, la, lb, ld, ld, pref, 1, &heuristic, &found));
    if (found != 1) {
        std::printf("%s: no algorithm\n", c.name);
        std::exit(1);
    }
    float alpha = 1.0f, beta = c.beta;
    check(c.name, cuport_blaslt_matmul(lt, desc, &alpha, a_stored.data(), la, b.data(), lb, &beta, d.data(), ld, d.data(), ld,
                                       &heuristic.algo, nullptr, 0, nullptr));
    expect_close(c.name, d, want_d);
    if (c.epilogue == CUPORT_BLASLT_EPILOGUE_GELU_AUX_BIAS) expect_close("  aux (pre-activation)", aux, want_aux);
    if (c.epilogue == CUPORT_BLASLT_EPILOGUE_BGRADB) expect_close("  bias gradient", bias, want_bias);
    cuport_blaslt_preference_destroy(pref);
    cuport_blaslt_layout_destroy(la);
    cuport_blaslt_layout_destroy(lb);
    cuport_blaslt_layout_destroy(ld);
    cuport_blaslt_matmul_desc_destroy(desc);
}

// An epilogue the helper cannot run: the heuristic query finds no algorithm.
void unsupported_epilogue_finds_no_algorithm(cuport_blaslt_handle_t lt) {
    cuport_blaslt_matmul_desc_t desc;
    check("desc_create", cuport_blaslt_matmul_desc_create(&desc, CUPORT_BLAS_COMPUTE_32F, ACL_FLOAT));
    int32_t relu_aux = 130;  // CUBLASLT_EPILOGUE_RELU_AUX: a bit-mask output
    set_desc(desc, CUPORT_BLASLT_MATMUL_DESC_EPILOGUE, &relu_aux, sizeof(relu_aux));
    cuport_blaslt_layout_t l;
    check("layout_create", cuport_blaslt_layout_create(&l, ACL_FLOAT, 4, 4, 4));
    cuport_blaslt_preference_t pref;
    check("pref", cuport_blaslt_preference_create(&pref));
    cuport_blaslt_heuristic_t heuristic;
    int found = 7;
    aclError st = cuport_blaslt_algo_get_heuristic(lt, desc, l, l, l, l, pref, 1, &heuristic, &found);
    bool ok = st == ACL_ERROR_FEATURE_UNSUPPORTED && found == 0;
    std::printf("%-44s %s\n", "RELU_AUX: no algorithm, FEATURE_UNSUPPORTED", ok ? "ok" : "MISMATCH");
    failures += ok ? 0 : 1;
    int32_t wrong_size = 0;
    ok = cuport_blaslt_matmul_desc_set_attribute(desc, CUPORT_BLASLT_MATMUL_DESC_TRANSA, &wrong_size, 2) == ACL_ERROR_INVALID_PARAM;
    std::printf("%-44s %s\n", "attribute of the wrong size: INVALID_PARAM", ok ? "ok" : "MISMATCH");
    failures += ok ? 0 : 1;
    cuport_blaslt_preference_destroy(pref);
    cuport_blaslt_layout_destroy(l);
    cuport_blaslt_matmul_desc_destroy(desc);
}

// cuBLAS's column-major C = alpha op(A) op(B) + beta C through
// cuport_blas_sgemm (ldc > m: the packed-copy path) and the strided batch.
void blas_gemm(cuport_blas_handle_t blas, bool ta, bool tb, int batches) {
    const int m = 4, n = 3, k = 5, ldc = 6;
    int a_rows = ta ? k : m, b_rows = tb ? n : k;
    size_t a_size = static_cast<size_t>(m) * k, b_size = static_cast<size_t>(k) * n, c_size = static_cast<size_t>(ldc) * n;
    int count = batches > 0 ? batches : 1;
    Matrix a = filled(6, a_size * count), b = filled(7, b_size * count), c = filled(8, c_size * count);
    float alpha = 2.0f, beta = 0.5f;
    Matrix want = c;
    for (int bt = 0; bt < count; ++bt) {
        Matrix ab(a.begin() + static_cast<long>(bt * a_size), a.begin() + static_cast<long>((bt + 1) * a_size));
        Matrix bb(b.begin() + static_cast<long>(bt * b_size), b.begin() + static_cast<long>((bt + 1) * b_size));
        for (int j = 0; j < n; ++j)
            for (int i = 0; i < m; ++i) {
                double sum = 0;
                for (int p = 0; p < k; ++p) sum += static_cast<double>(op_at(ab, ta, a_rows, i, p)) * op_at(bb, tb, b_rows, p, j);
                size_t at = bt * c_size + i + static_cast<size_t>(j) * ldc;
                want[at] = static_cast<float>(alpha * sum + beta * c[at]);
            }
    }
    cuport_blas_op_t op_a = ta ? CUPORT_OP_T : CUPORT_OP_N, op_b = tb ? CUPORT_OP_T : CUPORT_OP_N;
    aclError st = batches > 0
        ? cuport_blas_sgemm_strided_batched(blas, op_a, op_b, m, n, k, &alpha, a.data(), a_rows, static_cast<long long>(a_size),
                                            b.data(), b_rows, static_cast<long long>(b_size), &beta, c.data(), ldc,
                                            static_cast<long long>(c_size), batches)
        : cuport_blas_sgemm(blas, op_a, op_b, m, n, k, &alpha, a.data(), a_rows, b.data(), b_rows, &beta, c.data(), ldc);
    check("cuport_blas_sgemm", st);
    char name[64];
    std::snprintf(name, sizeof name, "cuBLAS sgemm%s %c%c, alpha 2, beta 0.5, ldc 6", batches > 0 ? " batched" : "",
                  ta ? 'T' : 'N', tb ? 'T' : 'N');
    expect_close(name, c, want);
}

// y = alpha op(A) x + beta y with a strided y (incy 2).
void blas_gemv(cuport_blas_handle_t blas, bool trans) {
    const int m = 5, n = 3, lda = 6, incy = 2;
    int rows = trans ? n : m, cols = trans ? m : n;
    Matrix a = filled(9, static_cast<size_t>(lda) * n), x = filled(10, static_cast<size_t>(cols));
    Matrix y = filled(11, static_cast<size_t>(rows) * incy);
    float alpha = 1.5f, beta = -1.0f;
    Matrix want = y;
    for (int i = 0; i < rows; ++i) {
        double sum = 0;
        for (int j = 0; j < cols; ++j) sum += static_cast<double>(op_at(a, trans, lda, i, j)) * x[j];
        want[static_cast<size_t>(i) * incy] = static_cast<float>(alpha * sum + beta * y[static_cast<size_t>(i) * incy]);
    }
    check("cuport_blas_sgemv", cuport_blas_sgemv(blas, trans ? CUPORT_OP_T : CUPORT_OP_N, m, n, &alpha, a.data(), lda,
                                                 x.data(), 1, &beta, y.data(), incy));
    expect_close(trans ? "cuBLAS sgemv T, incy 2" : "cuBLAS sgemv N, incy 2", y, want);
}

struct ConvShape {
    int n, c, h, w, k, r, s, groups, pad_h, pad_w, stride_h, stride_w, dil_h, dil_w;
};

// cudnnConvolutionForward (cross-correlation) with groups, beta != 0.
void dnn_conv(cuport_dnn_handle_t dnn, const ConvShape &v) {
    cuport_dnn_tensor_desc_t x_desc, y_desc;
    cuport_dnn_filter_desc_t w_desc;
    cuport_dnn_conv_desc_t conv;
    check("tensor desc", cuport_dnn_create_tensor_desc(&x_desc));
    check("tensor desc", cuport_dnn_set_tensor_4d_desc(x_desc, ACL_FORMAT_NCHW, ACL_FLOAT, v.n, v.c, v.h, v.w));
    check("filter desc", cuport_dnn_create_filter_desc(&w_desc));
    check("filter desc", cuport_dnn_set_filter_4d_desc(w_desc, ACL_FLOAT, ACL_FORMAT_NCHW, v.k, v.c / v.groups, v.r, v.s));
    check("conv desc", cuport_dnn_create_conv_desc(&conv));
    check("conv desc", cuport_dnn_set_conv_2d_desc(conv, v.pad_h, v.pad_w, v.stride_h, v.stride_w, v.dil_h, v.dil_w,
                                                   CUPORT_DNN_CROSS_CORRELATION, ACL_FLOAT));
    check("groups", cuport_dnn_set_conv_group_count(conv, v.groups));
    int on = 0, oc = 0, oh = 0, ow = 0;
    check("output dim", cuport_dnn_get_conv_2d_fwd_output_dim(conv, x_desc, w_desc, &on, &oc, &oh, &ow));
    int want_h = (v.h + 2 * v.pad_h - v.dil_h * (v.r - 1) - 1) / v.stride_h + 1;
    int want_w = (v.w + 2 * v.pad_w - v.dil_w * (v.s - 1) - 1) / v.stride_w + 1;
    bool dims_ok = on == v.n && oc == v.k && oh == want_h && ow == want_w;
    std::printf("%-44s %s\n", "conv output dimensions", dims_ok ? "ok" : "MISMATCH");
    failures += dims_ok ? 0 : 1;
    check("tensor desc", cuport_dnn_create_tensor_desc(&y_desc));
    check("tensor desc", cuport_dnn_set_tensor_4d_desc(y_desc, ACL_FORMAT_NCHW, ACL_FLOAT, on, oc, oh, ow));
    Matrix x = filled(12, static_cast<size_t>(v.n) * v.c * v.h * v.w);
    Matrix w = filled(13, static_cast<size_t>(v.k) * (v.c / v.groups) * v.r * v.s);
    Matrix y = filled(14, static_cast<size_t>(on) * oc * oh * ow);
    Matrix want = y;
    float alpha = 1.0f, beta = 0.5f;
    int cg = v.c / v.groups, kg = v.k / v.groups;
    for (int b = 0; b < on; ++b)
        for (int k = 0; k < oc; ++k)
            for (int p = 0; p < oh; ++p)
                for (int q = 0; q < ow; ++q) {
                    double sum = 0;
                    for (int c = 0; c < cg; ++c)
                        for (int r = 0; r < v.r; ++r)
                            for (int s2 = 0; s2 < v.s; ++s2) {
                                int hh = p * v.stride_h - v.pad_h + r * v.dil_h, ww = q * v.stride_w - v.pad_w + s2 * v.dil_w;
                                if (hh < 0 || ww < 0 || hh >= v.h || ww >= v.w) continue;
                                int cin = (k / kg) * cg + c;
                                sum += static_cast<double>(x[((static_cast<size_t>(b) * v.c + cin) * v.h + hh) * v.w + ww]) *
                                       w[((static_cast<size_t>(k) * cg + c) * v.r + r) * v.s + s2];
                            }
                    size_t at = ((static_cast<size_t>(b) * oc + k) * oh + p) * ow + q;
                    want[at] = static_cast<float>(alpha * sum + beta * y[at]);
                }
    check("cuport_dnn_conv_forward", cuport_dnn_conv_forward(dnn, &alpha, x_desc, x.data(), w_desc, w.data(), conv,
                                                             CUPORT_DNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM, nullptr, 0,
                                                             &beta, y_desc, y.data()));
    expect_close("cuDNN conv forward: groups 2, stride, pad, dilation", y, want);
    cuport_dnn_destroy_tensor_desc(x_desc);
    cuport_dnn_destroy_tensor_desc(y_desc);
    cuport_dnn_destroy_filter_desc(w_desc);
    cuport_dnn_destroy_conv_desc(conv);
}

// cudnnSoftmaxForward over the channels (per pixel) or the whole image.
void dnn_softmax(cuport_dnn_handle_t dnn, cuport_dnn_softmax_algo_t algo, cuport_dnn_softmax_mode_t mode, const char *name) {
    const int n = 2, c = 3, h = 2, w = 2, per = c * h * w;
    cuport_dnn_tensor_desc_t desc;
    check("tensor desc", cuport_dnn_create_tensor_desc(&desc));
    check("tensor desc", cuport_dnn_set_tensor_4d_desc(desc, ACL_FORMAT_NCHW, ACL_FLOAT, n, c, h, w));
    Matrix x = filled(15, static_cast<size_t>(n) * per), y(x.size(), 0.0f), want(x.size());
    bool channel = mode == CUPORT_DNN_SOFTMAX_MODE_CHANNEL;
    for (int b = 0; b < n; ++b)
        for (int pixel = 0; pixel < (channel ? h * w : 1); ++pixel) {
            std::vector<size_t> members;
            for (int i = 0; i < (channel ? c : per); ++i)
                members.push_back(static_cast<size_t>(b) * per + (channel ? static_cast<size_t>(i) * h * w + pixel : i));
            double top = -1e300, sum = 0;
            for (size_t m : members) top = std::fmax(top, x[m]);
            for (size_t m : members) sum += std::exp(x[m] - top);
            for (size_t m : members) {
                double v = x[m] - top;
                want[m] = static_cast<float>(algo == CUPORT_DNN_SOFTMAX_LOG ? v - std::log(sum) : std::exp(v) / sum);
            }
        }
    float alpha = 1.0f, beta = 0.0f;
    check("cuport_dnn_softmax_forward", cuport_dnn_softmax_forward(dnn, algo, mode, &alpha, desc, x.data(), &beta, desc, y.data()));
    expect_close(name, y, want);
    cuport_dnn_destroy_tensor_desc(desc);
}

}  // namespace

int main() {
    cuport_blaslt_handle_t lt;
    check("create", cuport_blaslt_create(&lt));
    const Case cases[] = {
        {"plain, A^T B", 5, 4, 3, true, false, CUPORT_BLASLT_EPILOGUE_DEFAULT, 0.0f, 0, false},
        {"A B^T, accumulate (beta 1)", 3, 6, 4, false, true, CUPORT_BLASLT_EPILOGUE_DEFAULT, 1.0f, 0, false},
        {"bias + GELU, keeping the pre-activation", 6, 5, 4, true, false, CUPORT_BLASLT_EPILOGUE_GELU_AUX_BIAS, 0.0f, 0, false},
        {"bias + ReLU", 4, 3, 5, false, false, CUPORT_BLASLT_EPILOGUE_RELU_BIAS, 0.0f, 0, false},
        {"DGELU with the saved pre-activation", 4, 5, 3, false, false, CUPORT_BLASLT_EPILOGUE_DGELU, 0.0f, 0, false},
        {"BGRADB, accumulate", 3, 4, 6, false, true, CUPORT_BLASLT_EPILOGUE_BGRADB, 1.0f, 0, false},
        {"strided batch of 3, A^T B", 4, 4, 2, true, false, CUPORT_BLASLT_EPILOGUE_DEFAULT, 0.0f, 3, false},
        {"row-major A", 3, 5, 4, false, false, CUPORT_BLASLT_EPILOGUE_DEFAULT, 0.0f, 0, true},
    };
    for (const Case &c : cases) run(lt, c);
    unsupported_epilogue_finds_no_algorithm(lt);
    cuport_blaslt_destroy(lt);
    cuport_blas_handle_t blas;
    check("cuport_blas_create", cuport_blas_create(&blas));
    for (int t = 0; t < 4; ++t) blas_gemm(blas, (t & 1) != 0, (t & 2) != 0, 0);
    blas_gemm(blas, true, false, 3);
    blas_gemv(blas, false);
    blas_gemv(blas, true);
    cuport_blas_destroy(blas);
    cuport_dnn_handle_t dnn;
    check("cuport_dnn_create", cuport_dnn_create(&dnn));
    dnn_conv(dnn, ConvShape{2, 4, 7, 6, 6, 3, 2, 2, 1, 0, 2, 1, 1, 2});
    dnn_softmax(dnn, CUPORT_DNN_SOFTMAX_ACCURATE, CUPORT_DNN_SOFTMAX_MODE_CHANNEL, "cuDNN softmax, per channel");
    dnn_softmax(dnn, CUPORT_DNN_SOFTMAX_ACCURATE, CUPORT_DNN_SOFTMAX_MODE_INSTANCE, "cuDNN softmax, per instance");
    dnn_softmax(dnn, CUPORT_DNN_SOFTMAX_LOG, CUPORT_DNN_SOFTMAX_MODE_CHANNEL, "cuDNN log-softmax, per channel");
    cuport_dnn_destroy(dnn);
    if (failures != 0) {
        std::printf("helpers_check: %d failed\n", failures);
        return 1;
    }
    std::printf("helpers_check: all passed\n");
    return 0;
}
