// Uniform locations of every kernel, by name: the kernels include this file and so does the GL
// backend (src/gl/gl_internal.h), so the C side sets a uniform by the name the kernel declares it
// under, never by a bare number. GLSL 4.30 and ES 3.10 take only a literal in a layout
// qualifier, so each location is its own macro. Plain #defines and // comments: valid C too.
#ifndef TGL_LOCATIONS_GLSL
#define TGL_LOCATIONS_GLSL

// Every kernel that walks its data in either direction (common/sweep.glsl).
#define LOC_SWEEP 15

// Buffer textures and images: 60 + the binding they read (common/texel.glsl says why they have
// explicit locations).
#define LOC_TEXTURE0 60
#define LOC_TEXTURE1 61
#define LOC_TEXTURE2 62
#define LOC_TEXTURE3 63
#define LOC_TEXTURE5 65 // attention's mask (common/attention_io.glsl)

// Element-wise kernels (elementwise/*.comp, map/map.comp): the count, then each operand's
// offset in order (inputs, then the output: operand i at LOC_EW_OFF0 + i), then the float
// parameters (fill and scale_add, whose two operands leave 8 and 9 free).
#define LOC_EW_N 0
#define LOC_EW_OFF0 1
#define LOC_EW_OFF1 2
#define LOC_EW_OFF2 3
#define LOC_EW_OFF3 4
#define LOC_EW_OFF4 5
#define LOC_EW_OFF5 6
#define LOC_EW_OFF6 7
#define LOC_EW_OFF7 8
#define LOC_EW_PARAM0 8
#define LOC_EW_OFF8 9
#define LOC_EW_PARAM1 9

// tgl_map's numbers (map/map.comp): an array of up to 256 floats (the expression's node limit)
// from here, above every other kernel's locations.
#define LOC_MAP_NUM0 64

// The f16 casts (cast/*.comp).
#define LOC_CAST_N 0
#define LOC_CAST_IN_OFF 1
#define LOC_CAST_OUT_OFF 2

// The driver check (check/inlined_uniform.comp).
#define LOC_CHECK_COUNT 0

// Reductions (reduce/*.comp); arg_reduce uses 2, 3 and 6 for its carry.
#define LOC_RED_LEN 0
#define LOC_RED_INNER 1
#define LOC_RED_CHUNK 2
#define LOC_RED_J_BASE 2
#define LOC_RED_CARRY 3
#define LOC_RED_SPLITS 3
#define LOC_RED_X_OFF 4
#define LOC_RED_Y_OFF 5
#define LOC_RED_SCALE 6
#define LOC_RED_V_OFF 6
#define LOC_RED_GROUPS 7

// Row-wise ops (norm/rows.comp, norm/softmax_lanes.comp).
#define LOC_ROWS_COLS 0
#define LOC_ROWS_ROWS 1
#define LOC_ROWS_X_OFF 2
#define LOC_ROWS_Y_OFF 3
#define LOC_ROWS_W_OFF 4
#define LOC_ROWS_B_OFF 5
#define LOC_ROWS_EPS 6

// RoPE (llm/rope.comp).
#define LOC_ROPE_PAIRS 0
#define LOC_ROPE_X_OFF 1
#define LOC_ROPE_Y_OFF 2
#define LOC_ROPE_HEAD_DIM 3
#define LOC_ROPE_HEADS 4
#define LOC_ROPE_SEQ 5
#define LOC_ROPE_ROW0 6

// RoPE over descriptors (llm/rope_t.comp).
#define LOC_ROPE_T_ITEMS 0
#define LOC_ROPE_T_HALF 1
#define LOC_ROPE_T_RHALF 2
#define LOC_ROPE_T_HEADS 3
#define LOC_ROPE_T_SEQ 4
#define LOC_ROPE_T_X_OFF 5
#define LOC_ROPE_T_Y_OFF 6
#define LOC_ROPE_T_POS_OFF 7
#define LOC_ROPE_T_POS_BASE 8
#define LOC_ROPE_T_STRIDES 9 // uint[8]: 9..16

// Row gathers from weight tables (llm/gather_w.comp).
#define LOC_GW_COUNT 0
#define LOC_GW_COLS 1
#define LOC_GW_W_OFF 2
#define LOC_GW_W_RS 3
#define LOC_GW_W_CS 4
#define LOC_GW_ID0 5
#define LOC_GW_ID_ROWS 6
#define LOC_GW_IDS_OFF 7
#define LOC_GW_IDS_STRIDE 8
#define LOC_GW_Y_OFF 9
#define LOC_GW_Y_RS 10
#define LOC_GW_Y_CS 11

// Row gathers (llm/gather_rows.comp).
#define LOC_GATHER_COUNT 0
#define LOC_GATHER_IDS_OFF 1
#define LOC_GATHER_TABLE_ROWS 2
#define LOC_GATHER_COLS 3
#define LOC_GATHER_T_OFF 4
#define LOC_GATHER_Y_OFF 5
#define LOC_GATHER_FIRST 6
#define LOC_GATHER_ROW0 7
#define LOC_GATHER_WIN_ROWS 8

// Broadcasts and permutes (shape/strided.comp); the arrays take TGL_MAX_DIMS locations each.
#define LOC_STRIDED_N 0
#define LOC_STRIDED_START 1
#define LOC_STRIDED_NDIM 2
#define LOC_STRIDED_A_OFF 3
#define LOC_STRIDED_B_OFF 4
#define LOC_STRIDED_Y_OFF 5
#define LOC_STRIDED_SHAPE 8
#define LOC_STRIDED_A_STRIDE 16
#define LOC_STRIDED_B_STRIDE 24
#define LOC_STRIDED_Y_STRIDE 32
#define LOC_STRIDED_INNER 40
#define LOC_STRIDED_A_STEP 41
#define LOC_STRIDED_B_STEP 42

// Tiled permutes (shape/transpose.comp); the arrays take TGL_MAX_DIMS - 2 locations each.
#define LOC_TR_EXT_P 0
#define LOC_TR_EXT_L 1
#define LOC_TR_A_L 2
#define LOC_TR_Y_P 3
#define LOC_TR_A_OFF 4
#define LOC_TR_Y_OFF 5
#define LOC_TR_NREST 6
#define LOC_TR_Z_START 7
#define LOC_TR_REST_EXT 8
#define LOC_TR_REST_A 16
#define LOC_TR_REST_Y 24

// Matrix-vector products (gemm/matvec.comp).
#define LOC_MV_ROWS 0
#define LOC_MV_COLS 1
#define LOC_MV_W_OFF 2
#define LOC_MV_X_OFF 3
#define LOC_MV_Y_OFF 4
#define LOC_MV_ALPHA 12 // EPILOGUE (gemm/matvec.comp, gemm/matvec_lanes.comp)
#define LOC_MV_BETA 13

// Products with a weight in any weight format (gemm/matvec_w.comp) and the block conversions
// (tensor/quantize.comp): offsets and row strides of block operands in bytes, else in elements.
#define LOC_MVW_ROWS 0
#define LOC_MVW_COLS 1
#define LOC_MVW_N 2
#define LOC_MVW_W_OFF 3
#define LOC_MVW_W_RS 4
#define LOC_MVW_W_CS 5
#define LOC_MVW_X_OFF 6
#define LOC_MVW_X_RS 7
#define LOC_MVW_X_CS 8
#define LOC_MVW_Y_OFF 9
#define LOC_MVW_Y_RS 10
#define LOC_MVW_Y_CS 11
#define LOC_MVW_ALPHA 12 // EPILOGUE
#define LOC_MVW_BETA 13

// GEMM (common/gemm_io.glsl).
#define LOC_GEMM_M 0
#define LOC_GEMM_N 1
#define LOC_GEMM_K 2
#define LOC_GEMM_LDA 3
#define LOC_GEMM_LDB 4
#define LOC_GEMM_LDC 5
#define LOC_GEMM_A_OFF 6
#define LOC_GEMM_B_OFF 7
#define LOC_GEMM_C_OFF 8
#define LOC_GEMM_STRIDE_A 9
#define LOC_GEMM_STRIDE_B 10
#define LOC_GEMM_STRIDE_C 11
#define LOC_GEMM_ALPHA 12
#define LOC_GEMM_BETA 13

// tgl_gemm_fused's epilogue (common/epilogue.glsl), in the GEMM and matvec_w kernels.
#define LOC_EPI_ACT 14
#define LOC_EPI_SLOPE 15
#define LOC_EPI_GATE 16
#define LOC_EPI_BIAS 17
#define LOC_EPI_BIAS_OFF 18

// Convolution (common/conv_io.glsl).
#define LOC_CONV_C 0
#define LOC_CONV_H 1
#define LOC_CONV_W 2
#define LOC_CONV_OC 3
#define LOC_CONV_OH 4
#define LOC_CONV_OW 5
#define LOC_CONV_KH 6
#define LOC_CONV_KW 7
#define LOC_CONV_SH 8
#define LOC_CONV_SW 9
#define LOC_CONV_PH 10
#define LOC_CONV_PW 11
#define LOC_CONV_DH 12
#define LOC_CONV_DW 13
#define LOC_CONV_ICG 14
#define LOC_CONV_OCG 15
#define LOC_CONV_COLS 16
#define LOC_CONV_IN_OFF 17
#define LOC_CONV_F_OFF 18
#define LOC_CONV_B_OFF 19
#define LOC_CONV_OUT_OFF 20
#define LOC_CONV_K_CHUNK 21
#define LOC_CONV_SPLIT_STRIDE 22
#define LOC_CONV_GROUPS 23
#define LOC_CONV_ACT 24
#define LOC_CONV_SLOPE 25
#define LOC_CONV_RESIDUAL 26
#define LOC_CONV_IMG_OFF 27 // conv2d_winograd's OUTPUT: the input's offset in its binding 4
#define LOC_CONV_LD 28      // conv2d_winograd's INPUT and OUTPUT: V's and M's row length (u_cols or more)

// tgl_pool2d (conv/pool2d.comp): arrays of two, (h, w)
#define LOC_POOL_N 0
#define LOC_POOL_START 1
#define LOC_POOL_X_OFF 2
#define LOC_POOL_Y_OFF 3
#define LOC_POOL_INCLUDE_PAD 4
#define LOC_POOL_I_OFF 5
#define LOC_POOL_IN 6        // [2]
#define LOC_POOL_OUT 8       // [2]
#define LOC_POOL_KERNEL 10   // [2]
#define LOC_POOL_STRIDE 12   // [2]
#define LOC_POOL_PAD 14      // [2]
#define LOC_POOL_DILATION 16 // [2]

// Transposed convolution (conv/conv_transpose2d.comp).
#define LOC_CTR_N 0
#define LOC_CTR_START 1
#define LOC_CTR_IN_H 2
#define LOC_CTR_IN_W 3
#define LOC_CTR_OUT_H 4
#define LOC_CTR_OUT_W 5
#define LOC_CTR_KH 6
#define LOC_CTR_KW 7
#define LOC_CTR_SH 8
#define LOC_CTR_SW 9
#define LOC_CTR_PH 10
#define LOC_CTR_PW 11
#define LOC_CTR_DH 12
#define LOC_CTR_DW 13
#define LOC_CTR_IC 14
#define LOC_CTR_OC 15
#define LOC_CTR_ICG 16
#define LOC_CTR_OCG 17
#define LOC_CTR_IN_OFF 18
#define LOC_CTR_F_OFF 19
#define LOC_CTR_B_OFF 20
#define LOC_CTR_OUT_OFF 21
// conv/interpolate.comp (tgl_interpolate)
#define LOC_INTERP_N 0
#define LOC_INTERP_START 1
#define LOC_INTERP_X_OFF 2
#define LOC_INTERP_Y_OFF 3
#define LOC_INTERP_ALIGN 4
#define LOC_INTERP_IN 6    // [2]
#define LOC_INTERP_OUT 8   // [2]
#define LOC_INTERP_SCALE 10 // [2]

// The element-wise descriptor ops (tensor/elementwise.comp): the arrays hold one entry per dim
// (TGL_MAX_DIMS, 8); operand k's are BASEk and STRIDEk.
#define LOC_TEW_N 0
#define LOC_TEW_START 1
#define LOC_TEW_NDIM 2
#define LOC_TEW_OP 3
#define LOC_TEW_OUT_BASE 4
#define LOC_TEW_BASE0 5
#define LOC_TEW_BASE1 6
#define LOC_TEW_BASE2 7
#define LOC_TEW_VALUE 8
#define LOC_TEW_STEP 9
#define LOC_TEW_INDEX0 10
#define LOC_TEW_SHAPE 16
#define LOC_TEW_OUT_STRIDE 24
#define LOC_TEW_STRIDE0 32
#define LOC_TEW_STRIDE1 40
#define LOC_TEW_STRIDE2 48
// RANDOM and DROPOUT (one input: STRIDE1 and STRIDE2 free); all below 63, the SPIR-V
// programs' active-location mask (src/gl/gl_spirv.c)
#define LOC_TEW_ORIGIN LOC_TEW_STRIDE1
#define LOC_TEW_WHOLE LOC_TEW_STRIDE2
#define LOC_TEW_SEED 11   // [2]
#define LOC_TEW_OFFSET 13 // [2]
#define LOC_TEW_EXTRA 56
#define LOC_TEW_FIRST_INDEX 57 // [2]
#define LOC_TEW_CONSECUTIVE 59
// GATHER (two inputs: STRIDE2 free; 60 on are its textures')
#define LOC_TEW_AXIS_STRIDE LOC_TEW_STRIDE2
#define LOC_TEW_CHUNK_LO 49
#define LOC_TEW_CHUNK_LEN 50
#define LOC_TEW_DIV_M 64 // [8]
#define LOC_TEW_DIV_S 72 // [8]

// tgl_map_t (tensor/map.comp): arrays u_base[8] (the inputs'), u_shape[8], u_out_stride[8],
// u_stride[64] (input k's dim d at 8 * k + d) and u_num[] (the expression's numbers, up to 256).
#define LOC_TMAP_N 0
#define LOC_TMAP_START 1
#define LOC_TMAP_NDIM 2
#define LOC_TMAP_OUT_BASE 3
#define LOC_TMAP_ZERO 4
#define LOC_TMAP_BASE 8
#define LOC_TMAP_SHAPE 16
#define LOC_TMAP_OUT_STRIDE 24
#define LOC_TMAP_STRIDE 32
#define LOC_TMAP_NUM 96

// tensor/reduce.comp and tensor/rows.comp (the row-wise ops: OUT_STEP .. PARAMS)
#define LOC_RDT_N 0
#define LOC_RDT_START 1
#define LOC_RDT_NDIM 2
#define LOC_RDT_OP 3
#define LOC_RDT_LEN 4
#define LOC_RDT_STEP 5
#define LOC_RDT_IN_BASE 6
#define LOC_RDT_OUT_BASE 7
#define LOC_RDT_OUT_STEP 8
#define LOC_RDT_W_BASE 9
#define LOC_RDT_W_STEP 10
#define LOC_RDT_B_BASE 11
#define LOC_RDT_B_STEP 12
#define LOC_RDT_EPS 13
#define LOC_RDT_PARAMS 14
#define LOC_RDT_SHAPE 16
#define LOC_RDT_IN_STRIDE 24
#define LOC_RDT_OUT_STRIDE 32
// tensor/scan.comp: the row-wise ones it shares above, then its own in the weights' places
#define LOC_SCAN_IDX_BASE 9
#define LOC_SCAN_IDX_STEP 10
#define LOC_SCAN_CHUNK 11
#define LOC_SCAN_CHUNKS 12
#define LOC_SCAN_PASS 13
#define LOC_SCAN_HAS_IDX 14
#define LOC_SCAN_IDX_STRIDE 40
#define LOC_SCAN_EPOCH 3 // SCAN_ONE_PASS: this call's tag of a published chunk total

// tensor/compact.comp (tgl_masked_select, tgl_nonzero)
#define LOC_CMP_N 0
#define LOC_CMP_START 1
#define LOC_CMP_NDIM 2
#define LOC_CMP_FLAG_BASE 3
#define LOC_CMP_VAL_BASE 4
#define LOC_CMP_PREFIX_BASE 5
#define LOC_CMP_OUT_BASE 6
#define LOC_CMP_OUT_STEP 7
#define LOC_CMP_OUT_COL 8
#define LOC_CMP_POS_LO 9
#define LOC_CMP_POS_LEN 10
#define LOC_CMP_SHAPE 16
#define LOC_CMP_LO 24
#define LOC_CMP_FLAG_STRIDE 32
#define LOC_CMP_VAL_STRIDE 40

// tensor/scatter.comp (tgl_scatter, tgl_index_add)
#define LOC_SCT_N 0
#define LOC_SCT_START 1
#define LOC_SCT_NDIM 2
#define LOC_SCT_AXIS 3
#define LOC_SCT_REDUCE 4
#define LOC_SCT_WORDS 5
#define LOC_SCT_SHIFT 6
#define LOC_SCT_A_BASE 7
#define LOC_SCT_B_BASE 8
#define LOC_SCT_TEMP_BASE 9
#define LOC_SCT_T_LO 10
#define LOC_SCT_T_LEN 11
#define LOC_SCT_C_BASE 12 // ATOMIC: out's element (0, ..) in its span, and its strides
#define LOC_SCT_SHAPE 16
#define LOC_SCT_LO 24
#define LOC_SCT_A_STRIDE 32
#define LOC_SCT_B_STRIDE 40
#define LOC_SCT_ROW 48
#define LOC_SCT_C_STRIDE 64 // [8] (above the textures 60..63)

// tensor/sort.comp and tensor/radix.comp (tgl_sort, tgl_topk; tensor/sort_line.glsl)
#define LOC_SRT_N 0
#define LOC_SRT_START 1
#define LOC_SRT_NDIM 2
#define LOC_SRT_LEN 3
#define LOC_SRT_LOG_P 4
#define LOC_SRT_SIZE 5
#define LOC_SRT_STRIDE 6
#define LOC_SRT_DESC 7
#define LOC_SRT_K 8
#define LOC_SRT_IN_BASE 9
#define LOC_SRT_IN_STEP 10
#define LOC_SRT_V_BASE 11
#define LOC_SRT_V_STEP 12
#define LOC_SRT_I_BASE 13
#define LOC_SRT_I_STEP 14
#define LOC_SRT_TEMP_BASE 15
#define LOC_SRT_HAS 16
#define LOC_SRT_LINE0 17
#define LOC_SRT_MINIMA 18
#define LOC_SRT_SHAPE 19 // [8] each, ending below 60: TOPK's in may be a texture (60)
#define LOC_SRT_LO 27
#define LOC_SRT_IN_STRIDE 35
#define LOC_SRT_V_STRIDE 43
#define LOC_SRT_I_STRIDE 51
// tensor/radix.comp's own (59, then past the textures')
#define LOC_SRT_SHIFT 59
#define LOC_SRT_TILES 66
#define LOC_SRT_KEYS 67
#define LOC_SRT_POS 68
#define LOC_SRT_KEYS_OUT 69
#define LOC_SRT_POS_OUT 70
#define LOC_SRT_COUNTS 71

// Attention (common/attention_io.glsl, attention/*.comp); decode, decode_combine and flash_reg
// use 10 for their own count, decode_combine 0 for its rows, decode 13 for its first chunk.
#define LOC_ATT_ROWS 0
#define LOC_ATT_SEQ_Q 0
#define LOC_ATT_SEQ_KV 1
#define LOC_ATT_KV_CAP 2
#define LOC_ATT_D 3
#define LOC_ATT_CAUSAL 4
#define LOC_ATT_Q_OFF 5
#define LOC_ATT_K_OFF 6
#define LOC_ATT_V_OFF 7
#define LOC_ATT_O_OFF 8
#define LOC_ATT_SCALE 9
#define LOC_ATT_BLOCKS 10
#define LOC_ATT_DECODE_CHUNKS 10
#define LOC_ATT_CHUNKS 11
#define LOC_ATT_CHUNK_KEYS 12
#define LOC_ATT_DECODE_CHUNK0 13
#define LOC_ATT_GROUP 14
#define LOC_ATT_GROUP_PHASE 15
#define LOC_ATT_WINDOW 16
#define LOC_ATT_SOFTCAP 17
#define LOC_ATT_ALIBI 18 // float[3]: 18 .. 20
#define LOC_ATT_HEADS 21
#define LOC_ATT_BH0 22
#define LOC_ATT_MASK 23 // uint[4]: 23 .. 26

#endif
