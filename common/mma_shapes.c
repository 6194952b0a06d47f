/* The tile shapes of each engine. The table is data; the engines' kernels
 * index it by position, so keep the order in step with backends/cuda and
 * backends/hip (each asserts the count). */
#include "common/backend.h"

#define SHAPE(M, N, K, FIN, FACC, NAME, INSN, REQ, BITWISE)                    \
    { { M, N, K, FIN, FACC }, NAME, INSN, REQ, 0, BITWISE },
/* The reference engine computes every shape, with the FP64 chain order. */
#define REFERENCE_SHAPE(M, N, K, FIN, FACC, NAME, INSN, REQ, BITWISE)          \
    { { M, N, K, FIN, FACC }, NAME, "fma() chain", "", 1, FIN == PARTILE_FP64 },

#define CUDA_SHAPES(X) \
    X(8, 8, 4, PARTILE_FP64, PARTILE_FP64, "f64.m8n8k4", \
          "mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64", "sm_80", 1) \
    X(16, 8, 4, PARTILE_FP64, PARTILE_FP64, "f64.m16n8k4", \
          "mma.sync.aligned.m16n8k4.row.col.f64.f64.f64.f64", "sm_90", 1) \
    X(16, 8, 8, PARTILE_FP64, PARTILE_FP64, "f64.m16n8k8", \
          "mma.sync.aligned.m16n8k8.row.col.f64.f64.f64.f64", "sm_90", 1) \
    X(16, 8, 16, PARTILE_FP64, PARTILE_FP64, "f64.m16n8k16", \
          "mma.sync.aligned.m16n8k16.row.col.f64.f64.f64.f64", "sm_90", 1) \
    X(16, 8, 8, PARTILE_TF32, PARTILE_FP32, "tf32.m16n8k8", \
          "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32", "sm_80", 0) \
    X(16, 8, 16, PARTILE_FP16, PARTILE_FP32, "f16.m16n8k16", \
          "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32", "sm_80", 0) \
    X(16, 8, 16, PARTILE_BF16, PARTILE_FP32, "bf16.m16n8k16", \
          "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32", "sm_80", 0)

const partile_mma_shape_t partile_cuda_shapes[] = { CUDA_SHAPES(SHAPE) };
const int partile_cuda_shape_count =
    (int)(sizeof partile_cuda_shapes / sizeof partile_cuda_shapes[0]);

/* HIP FP64 bitwise equality is a claim of the engine (it assumes the
 * forward-chain order measured on NVIDIA); unverified on AMD hardware. */
#define HIP_SHAPES(X) \
    X(16, 16, 4, PARTILE_FP64, PARTILE_FP64, "f64.16x16x4", \
          "v_mfma_f64_16x16x4f64", "gfx90a", 1) \
    X(16, 16, 4, PARTILE_FP32, PARTILE_FP32, "f32.16x16x4", \
          "v_mfma_f32_16x16x4f32", "gfx90a", 0) \
    X(16, 16, 8, PARTILE_TF32, PARTILE_FP32, "xf32.16x16x8", \
          "v_mfma_f32_16x16x8_xf32", "gfx940", 0) \
    X(16, 16, 16, PARTILE_FP16, PARTILE_FP32, "f16.16x16x16", \
          "v_mfma_f32_16x16x16f16", "gfx90a", 0) \
    X(16, 16, 16, PARTILE_BF16, PARTILE_FP32, "bf16.16x16x16", \
          "v_mfma_f32_16x16x16bf16_1k", "gfx90a", 0)

const partile_mma_shape_t partile_hip_shapes[] = { HIP_SHAPES(SHAPE) };
const int partile_hip_shape_count =
    (int)(sizeof partile_hip_shapes / sizeof partile_hip_shapes[0]);

const partile_mma_shape_t partile_reference_shapes[] = {
    CUDA_SHAPES(REFERENCE_SHAPE) HIP_SHAPES(REFERENCE_SHAPE)
};
const int partile_reference_shape_count =
    (int)(sizeof partile_reference_shapes / sizeof partile_reference_shapes[0]);

size_t partile_format_bytes(partile_format_t format)
{
    return format == PARTILE_FP64 ? 8 : 4;
}

const char *partile_format_name(partile_format_t format)
{
    switch (format) {
    case PARTILE_FP64: return "fp64";
    case PARTILE_FP32: return "fp32";
    case PARTILE_TF32: return "tf32";
    case PARTILE_FP16: return "fp16";
    case PARTILE_BF16: return "bf16";
    default: return "?";
    }
}
