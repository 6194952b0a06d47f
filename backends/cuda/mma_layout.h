/* Fragment layouts of the CUDA engine's mma.sync shapes: which element of
 * A, B and C/D the e-th value held by lane `lane` (0..31) is. Plain integer
 * functions, so CPU tests can check them against an emulation of the PTX
 * ISA's fragment tables (tests/test_mma_layout.c).
 * g = lane / 4 ("groupID"), t = lane % 4 ("threadID_in_group").
 * S##_b_from_a(e): the lane's A element whose row is B element e's column
 * and whose column is its k (each f64/tf32 shape has one: the mass kernel
 * takes a B weight from the A weight it already loaded, mass_fragments.h). */
#ifndef PARTILE_CUDA_MMA_LAYOUT_H
#define PARTILE_CUDA_MMA_LAYOUT_H

#include "common/portable.h"

/* f64 m8n8k4: A 1, B 1, C 2 per lane. */
#define f64_m8n8k4_A_N 1
#define f64_m8n8k4_B_N 1
#define f64_m8n8k4_C_N 2
#define f64_m8n8k4_b_from_a(e) (e)
static inline PARTILE_HD void f64_m8n8k4_a_pos(int lane, int e, int *row, int *col)
{ (void)e; *row = lane >> 2; *col = lane & 3; }
static inline PARTILE_HD void f64_m8n8k4_b_pos(int lane, int e, int *row, int *col)
{ (void)e; *row = lane & 3; *col = lane >> 2; }
static inline PARTILE_HD void f64_m8n8k4_c_pos(int lane, int e, int *row, int *col)
{ *row = lane >> 2; *col = 2 * (lane & 3) + e; }

/* The m16n8 shapes share one pattern: A element e at row g + 8·(e mod 2),
 * column t + 4·(e / 2); B element e at row t + 4·e, column g (f64, tf32);
 * C element e at row g + 8·(e / 2), column 2t + (e mod 2). So B element e is
 * A element 2e transposed. */
static inline PARTILE_HD void m16n8_a_pos(int lane, int e, int *row, int *col)
{ *row = (lane >> 2) + 8 * (e & 1); *col = (lane & 3) + 4 * (e >> 1); }
static inline PARTILE_HD void m16n8_b_pos(int lane, int e, int *row, int *col)
{ *row = (lane & 3) + 4 * e; *col = lane >> 2; }
static inline PARTILE_HD void m16n8_c_pos(int lane, int e, int *row, int *col)
{ *row = (lane >> 2) + 8 * (e >> 1); *col = 2 * (lane & 3) + (e & 1); }

#define f64_m16n8k4_A_N 2
#define f64_m16n8k4_B_N 1
#define f64_m16n8k4_C_N 4
#define f64_m16n8k4_a_pos m16n8_a_pos
#define f64_m16n8k4_b_pos m16n8_b_pos
#define f64_m16n8k4_c_pos m16n8_c_pos
#define f64_m16n8k4_b_from_a(e) (2 * (e))

#define f64_m16n8k8_A_N 4
#define f64_m16n8k8_B_N 2
#define f64_m16n8k8_C_N 4
#define f64_m16n8k8_a_pos m16n8_a_pos
#define f64_m16n8k8_b_pos m16n8_b_pos
#define f64_m16n8k8_c_pos m16n8_c_pos
#define f64_m16n8k8_b_from_a(e) (2 * (e))

#define f64_m16n8k16_A_N 8
#define f64_m16n8k16_B_N 4
#define f64_m16n8k16_C_N 4
#define f64_m16n8k16_a_pos m16n8_a_pos
#define f64_m16n8k16_b_pos m16n8_b_pos
#define f64_m16n8k16_c_pos m16n8_c_pos
#define f64_m16n8k16_b_from_a(e) (2 * (e))

#define tf32_m16n8k8_A_N 4
#define tf32_m16n8k8_B_N 2
#define tf32_m16n8k8_C_N 4
#define tf32_m16n8k8_a_pos m16n8_a_pos
#define tf32_m16n8k8_b_pos m16n8_b_pos
#define tf32_m16n8k8_c_pos m16n8_c_pos
#define tf32_m16n8k8_b_from_a(e) (2 * (e))

/* 16-bit inputs come two to a 32-bit register; element e is half (e mod 2)
 * of register e / 2. A: row g + 8·((e/2) mod 2), column 2t + (e mod 2) +
 * 8·(e/4); B: row 2t + (e mod 2) + 8·(e/2), column g. */
static inline PARTILE_HD void m16n8k16_h_a_pos(int lane, int e, int *row, int *col)
{ *row = (lane >> 2) + 8 * ((e >> 1) & 1); *col = 2 * (lane & 3) + (e & 1) + 8 * (e >> 2); }
static inline PARTILE_HD void m16n8k16_h_b_pos(int lane, int e, int *row, int *col)
{ *row = 2 * (lane & 3) + (e & 1) + 8 * (e >> 1); *col = lane >> 2; }

#define f16_m16n8k16_A_N 8
#define f16_m16n8k16_B_N 4
#define f16_m16n8k16_C_N 4
#define f16_m16n8k16_a_pos m16n8k16_h_a_pos
#define f16_m16n8k16_b_pos m16n8k16_h_b_pos
#define f16_m16n8k16_c_pos m16n8_c_pos

#define bf16_m16n8k16_A_N 8
#define bf16_m16n8k16_B_N 4
#define bf16_m16n8k16_C_N 4
#define bf16_m16n8k16_a_pos m16n8k16_h_a_pos
#define bf16_m16n8k16_b_pos m16n8k16_h_b_pos
#define bf16_m16n8k16_c_pos m16n8_c_pos

#endif
