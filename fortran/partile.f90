! partile — Fortran 2003 interface (ISO_C_BINDING) to the C API.
!
! The derived types mirror the C structs of include/partile/*.h field by
! field (bind(C)); the interfaces bind the C functions by name. Arrays are
! passed as c_ptr (c_loc of a target array on the host for the "reference"
! backend, or a pointer from partile_malloc for a GPU backend). Indices and
! counts are 0-based, as in C: perm(i) is the 0-based index of the particle
! sorted to position i - 1.
module partile
  use, intrinsic :: iso_c_binding
  implicit none
  private

  ! status codes (partile/status.h)
  integer(c_int), parameter, public :: PARTILE_SUCCESS = 0, &
       PARTILE_ERROR_NULL_POINTER = -1, PARTILE_ERROR_INVALID_ARGUMENT = -2, &
       PARTILE_ERROR_UNKNOWN_BACKEND = -3, PARTILE_ERROR_NOT_COMPILED = -4, &
       PARTILE_ERROR_NO_DEVICE = -5, PARTILE_ERROR_UNSUPPORTED = -6, &
       PARTILE_ERROR_SIZE_OVERFLOW = -7, PARTILE_ERROR_OUT_OF_MEMORY = -8, &
       PARTILE_ERROR_DEVICE = -9, PARTILE_ERROR_BAD_DEVICE_INDEX = -10, &
       PARTILE_ERROR_OUT_OF_DOMAIN = -11, PARTILE_ERROR_NOT_FINITE = -12, &
       PARTILE_ERROR_NOT_SORTED = -13
  ! partile/context.h
  integer(c_int), parameter, public :: PARTILE_COPY_HOST_TO_DEVICE = 0, &
       PARTILE_COPY_DEVICE_TO_HOST = 1, PARTILE_COPY_DEVICE_TO_DEVICE = 2
  ! partile/sort.h
  integer(c_int), parameter, public :: PARTILE_DTYPE_FLOAT64 = 0, PARTILE_DTYPE_FLOAT32 = 1, &
       PARTILE_DTYPE_INT32 = 2, PARTILE_DTYPE_INT64 = 3
  ! partile/deposit.h
  integer(c_int), parameter, public :: PARTILE_SHAPE_NGP = 0, PARTILE_SHAPE_CIC = 1, &
       PARTILE_SHAPE_TSC = 2, PARTILE_SHAPE_OVERLAP = 3, &
       PARTILE_CENTERING_NODE = 0, PARTILE_CENTERING_CELL = 1, &
       PARTILE_ORDER_BY_POINT = 0, PARTILE_ORDER_BY_CELL = 1
  integer(c_int), parameter, public :: PARTILE_MAX_COMPONENTS = 16

  type, bind(C), public :: partile_grid_t
     integer(c_int) :: dim = 0
     integer(c_int64_t) :: cells(3) = 1
     real(c_double) :: lower(3) = 0, spacing(3) = 1
     integer(c_int) :: periodic(3) = 0
  end type partile_grid_t

  type, bind(C), public :: partile_vectors_t
     integer(c_int) :: type = 0
     type(c_ptr) :: axis(3) = [c_null_ptr, c_null_ptr, c_null_ptr]
  end type partile_vectors_t

  type, bind(C), public :: partile_array_t
     type(c_ptr) :: data = c_null_ptr
     integer(c_int) :: type = 0
  end type partile_array_t

  ! partile_sort_interval's answer: steps between re-sorts, and the 95th
  ! percentile of |v| per axis it used
  type, bind(C), public :: partile_sort_advice_t
     integer(c_int64_t) :: n_sort = 0
     real(c_double) :: u_char(3) = 0
  end type partile_sort_advice_t

  ! partile_backend_query's answer as Fortran strings (partile_backend_info_t)
  type, public :: partile_backend_t
     character(len=:), allocatable :: name    ! "reference", "cuda", "hip"
     integer :: compiled = 0                  ! 1 if built into this library
     integer :: device_count = 0              ! usable devices (1 for reference)
     character(len=:), allocatable :: targets ! e.g. "sm_80 sm_90"
     character(len=:), allocatable :: note    ! why device_count is 0, or ""
  end type partile_backend_t

  type, bind(C) :: c_backend_info_t
     type(c_ptr) :: name = c_null_ptr
     integer(c_int) :: compiled = 0, device_count = 0
     type(c_ptr) :: targets = c_null_ptr, note = c_null_ptr
  end type c_backend_info_t

  ! partile/mass.h
  integer(c_int), parameter, public :: PARTILE_MASS_SCALAR = 0, PARTILE_MASS_TENSOR = 1
  integer(c_int), parameter, public :: PARTILE_MASS_BITWISE = 0, PARTILE_MASS_RELAXED = 1
  integer(c_int), parameter, public :: PARTILE_MASS_TILES = 0, PARTILE_MASS_FMA_PER_CELL = 1, &
       PARTILE_MASS_ATOMIC_UNSORTED = 2
  integer(c_int), parameter, public :: PARTILE_MASS_FP64 = 0, PARTILE_MASS_TF32 = 1
  ! partile/pairs.h
  integer(c_int), parameter, public :: PARTILE_PAIRS_LJ = 0, PARTILE_PAIRS_SPH_DENSITY = 1
  integer(c_int), parameter, public :: PARTILE_PAIRS_AUTO = 0, PARTILE_PAIRS_NAIVE = 1, &
       PARTILE_PAIRS_ALL_IN_SM = 2, PARTILE_PAIRS_X_PENCIL = 3, PARTILE_PAIRS_X_PENCIL_REG = 4
  integer(c_int), parameter, public :: PARTILE_PAIRS_STRATEGIES = 5

  type, bind(C), public :: partile_mass_layout_t
     integer(c_int64_t) :: points = 0
     integer(c_int) :: offsets = 0, components = 0
     integer(c_size_t) :: entries = 0
  end type partile_mass_layout_t

  type, bind(C), public :: partile_mass_params_t
     type(c_ptr) :: grid = c_null_ptr
     integer(c_int) :: shape = 1, kind = 0
     real(c_double) :: sigma = 1
     integer(c_int) :: accumulate = 0
     type(c_ptr) :: bfield = c_null_ptr
     real(c_double) :: beta_over_c = 0
     integer(c_int) :: mode = 0 ! 0 bitwise, 1 relaxed
     integer(c_int) :: algorithm = 0 ! 0 tiles, 1 FMA per cell, 2 unsorted atomics
     integer(c_int) :: precision = 0 ! 0 FP64, 1 TF32
     integer(c_int) :: order = 0 ! matrix-free apply's deposit: 0 by point, 1 by cell
  end type partile_mass_params_t

  type, bind(C), public :: partile_pair_params_t
     integer(c_int) :: interaction = 0
     real(c_double) :: cutoff = 0, epsilon = 0, sigma = 0
     integer(c_int) :: shifted = 0
     real(c_double) :: h = 0, mass = 0
     integer(c_int) :: strategy = 0 ! 0 auto, 1 naive, 2 all-in-sm, 3 x-pencil, 4 x-pencil-reg
  end type partile_pair_params_t

  type, bind(C), public :: partile_transfer_t
     type(c_ptr) :: grid = c_null_ptr
     integer(c_int) :: shape = 0, centering = 0, components = 1
     type(c_ptr) :: sizes = c_null_ptr
     integer(c_int) :: order = 0   ! PARTILE_ORDER_BY_POINT or _BY_CELL (deposit only)
  end type partile_transfer_t

  public :: partile_context_create, partile_context_destroy, partile_malloc, partile_free, &
       partile_memcpy, partile_grid_cell_count, partile_field_shape, partile_sort, &
       partile_resort, partile_permute, partile_deposit, partile_gather, partile_message, &
       partile_mass_layout, partile_mass_assemble, partile_mass_export_count, partile_mass_export, &
       partile_mass_apply_matfree, partile_mass_apply_assembled, partile_pairs, &
       partile_context_synchronize, partile_memset, partile_bin, partile_mass_apply_matfree_f32, &
       partile_pairs_select, partile_sort_interval, partile_backend_count, partile_backend_query, &
       partile_context_backend, partile_context_device, partile_pairs_strategy_name, &
       partile_pairs_strategy_from_name, partile_dtype_size, partile_version, &
       partile_context_set_stream, partile_context_get_stream, partile_status_string, &
       partile_last_error_detail

  interface
     integer(c_int) function c_context_create(backend, device, ctx) &
          bind(C, name="partile_context_create")
       import :: c_int, c_char, c_ptr
       character(kind=c_char), intent(in) :: backend(*)
       integer(c_int), value :: device
       type(c_ptr), intent(out) :: ctx
     end function c_context_create

     integer(c_int) function partile_context_destroy(ctx) bind(C, name="partile_context_destroy")
       import :: c_int, c_ptr
       type(c_ptr), value :: ctx
     end function partile_context_destroy

     integer(c_int) function partile_context_synchronize(ctx) &
          bind(C, name="partile_context_synchronize")
       import :: c_int, c_ptr
       type(c_ptr), value :: ctx
     end function partile_context_synchronize

     !> The GPU stream (a cudaStream_t or hipStream_t as c_ptr) the context issues its
     !> work on; c_null_ptr returns to the context's own (include/partile/context.h).
     integer(c_int) function partile_context_set_stream(ctx, stream) &
          bind(C, name="partile_context_set_stream")
       import :: c_int, c_ptr
       type(c_ptr), value :: ctx, stream
     end function partile_context_set_stream

     integer(c_int) function partile_context_get_stream(ctx, stream) &
          bind(C, name="partile_context_get_stream")
       import :: c_int, c_ptr
       type(c_ptr), value :: ctx
       type(c_ptr), intent(out) :: stream
     end function partile_context_get_stream

     integer(c_int) function partile_memset(ctx, dst, val, bytes) bind(C, name="partile_memset")
       import :: c_int, c_ptr, c_size_t
       type(c_ptr), value :: ctx, dst
       integer(c_int), value :: val
       integer(c_size_t), value :: bytes
     end function partile_memset

     integer(c_int) function partile_bin(ctx, grid, n, pos, cell, bad) bind(C, name="partile_bin")
       import :: c_int, c_ptr, c_size_t, partile_grid_t, partile_vectors_t
       type(c_ptr), value :: ctx
       type(partile_grid_t), intent(in) :: grid
       integer(c_size_t), value :: n
       type(partile_vectors_t), intent(in) :: pos
       type(c_ptr), value :: cell, bad
     end function partile_bin

     integer(c_int) function partile_malloc(ctx, bytes, ptr) bind(C, name="partile_malloc")
       import :: c_int, c_ptr, c_size_t
       type(c_ptr), value :: ctx
       integer(c_size_t), value :: bytes
       type(c_ptr), intent(out) :: ptr
     end function partile_malloc

     integer(c_int) function partile_free(ctx, ptr) bind(C, name="partile_free")
       import :: c_int, c_ptr
       type(c_ptr), value :: ctx, ptr
     end function partile_free

     integer(c_int) function partile_memcpy(ctx, dst, src, bytes, kind) bind(C, name="partile_memcpy")
       import :: c_int, c_ptr, c_size_t
       type(c_ptr), value :: ctx, dst, src
       integer(c_size_t), value :: bytes
       integer(c_int), value :: kind
     end function partile_memcpy

     integer(c_int) function partile_grid_cell_count(grid, count) &
          bind(C, name="partile_grid_cell_count")
       import :: c_int, c_int64_t, partile_grid_t
       type(partile_grid_t), intent(in) :: grid
       integer(c_int64_t), intent(out) :: count
     end function partile_grid_cell_count

     integer(c_int) function partile_field_shape(grid, centering, points, total) &
          bind(C, name="partile_field_shape")
       import :: c_int, c_int64_t, partile_grid_t
       type(partile_grid_t), intent(in) :: grid
       integer(c_int), value :: centering
       integer(c_int64_t), intent(out) :: points(3), total
     end function partile_field_shape

     integer(c_int) function partile_sort(ctx, grid, n, pos, offsets, perm, sorted_cell, bad) &
          bind(C, name="partile_sort")
       import :: c_int, c_ptr, c_size_t, partile_grid_t, partile_vectors_t
       type(c_ptr), value :: ctx
       type(partile_grid_t), intent(in) :: grid
       integer(c_size_t), value :: n
       type(partile_vectors_t), intent(in) :: pos
       type(c_ptr), value :: offsets, perm, sorted_cell, bad
     end function partile_sort

     integer(c_int) function partile_resort(ctx, grid, n, pos, old_offsets, old_cell, offsets, &
          perm, sorted_cell, bad) bind(C, name="partile_resort")
       import :: c_int, c_ptr, c_size_t, partile_grid_t, partile_vectors_t
       type(c_ptr), value :: ctx
       type(partile_grid_t), intent(in) :: grid
       integer(c_size_t), value :: n
       type(partile_vectors_t), intent(in) :: pos
       type(c_ptr), value :: old_offsets, old_cell, offsets, perm, sorted_cell, bad
     end function partile_resort

     integer(c_int) function partile_permute(ctx, n, perm, count, arrays, scratch, scratch_bytes) &
          bind(C, name="partile_permute")
       import :: c_int, c_ptr, c_size_t, partile_array_t
       type(c_ptr), value :: ctx
       integer(c_size_t), value :: n
       type(c_ptr), value :: perm
       integer(c_int), value :: count
       type(partile_array_t), intent(in) :: arrays(*)
       type(c_ptr), value :: scratch
       integer(c_size_t), value :: scratch_bytes
     end function partile_permute

     integer(c_int) function partile_deposit(ctx, t, n, pos, values, cell_offsets, field, bad) &
          bind(C, name="partile_deposit")
       import :: c_int, c_ptr, c_size_t, partile_transfer_t, partile_vectors_t
       type(c_ptr), value :: ctx
       type(partile_transfer_t), intent(in) :: t
       integer(c_size_t), value :: n
       type(partile_vectors_t), intent(in) :: pos
       type(c_ptr), value :: values, cell_offsets, field, bad
     end function partile_deposit

     integer(c_int) function partile_gather(ctx, t, n, pos, field, values, bad) &
          bind(C, name="partile_gather")
       import :: c_int, c_ptr, c_size_t, partile_transfer_t, partile_vectors_t
       type(c_ptr), value :: ctx
       type(partile_transfer_t), intent(in) :: t
       integer(c_size_t), value :: n
       type(partile_vectors_t), intent(in) :: pos
       type(c_ptr), value :: field, values, bad
     end function partile_gather

     integer(c_int) function partile_mass_layout(grid, shape, kind, layout) &
          bind(C, name="partile_mass_layout")
       import :: c_int, partile_grid_t, partile_mass_layout_t
       type(partile_grid_t), intent(in) :: grid
       integer(c_int), value :: shape, kind
       type(partile_mass_layout_t), intent(out) :: layout
     end function partile_mass_layout

     integer(c_int) function partile_mass_assemble(ctx, params, n, pos, cell_offsets, q, omega, &
          storage, bad) bind(C, name="partile_mass_assemble")
       import :: c_int, c_ptr, c_size_t, partile_mass_params_t, partile_vectors_t
       type(c_ptr), value :: ctx
       type(partile_mass_params_t), intent(in) :: params
       integer(c_size_t), value :: n
       type(partile_vectors_t), intent(in) :: pos
       type(c_ptr), value :: cell_offsets, q, omega, storage, bad
     end function partile_mass_assemble

     integer(c_int) function partile_mass_export_count(grid, shape, nnz) &
          bind(C, name="partile_mass_export_count")
       import :: c_int, c_int64_t, partile_grid_t
       type(partile_grid_t), intent(in) :: grid
       integer(c_int), value :: shape
       integer(c_int64_t), intent(out) :: nnz
     end function partile_mass_export_count

     integer(c_int) function partile_mass_export(grid, shape, kind, storage, indptr, indices, data) &
          bind(C, name="partile_mass_export")
       import :: c_int, c_ptr, partile_grid_t
       type(partile_grid_t), intent(in) :: grid
       integer(c_int), value :: shape, kind
       type(c_ptr), value :: storage, indptr, indices, data
     end function partile_mass_export

     integer(c_int) function partile_mass_apply_matfree(ctx, params, n, pos, cell_offsets, q, omega, &
          x, y, bad) bind(C, name="partile_mass_apply_matfree")
       import :: c_int, c_ptr, c_size_t, partile_mass_params_t, partile_vectors_t
       type(c_ptr), value :: ctx
       type(partile_mass_params_t), intent(in) :: params
       integer(c_size_t), value :: n
       type(partile_vectors_t), intent(in) :: pos
       type(c_ptr), value :: cell_offsets, q, omega, x, y, bad
     end function partile_mass_apply_matfree

     !> FP32 matrix-free apply: q, x, y are float (c_float) arrays.
     integer(c_int) function partile_mass_apply_matfree_f32(ctx, params, n, pos, cell_offsets, q, &
          omega, x, y, bad) bind(C, name="partile_mass_apply_matfree_f32")
       import :: c_int, c_ptr, c_size_t, partile_mass_params_t, partile_vectors_t
       type(c_ptr), value :: ctx
       type(partile_mass_params_t), intent(in) :: params
       integer(c_size_t), value :: n
       type(partile_vectors_t), intent(in) :: pos
       type(c_ptr), value :: cell_offsets, q, omega, x, y, bad
     end function partile_mass_apply_matfree_f32

     integer(c_int) function partile_mass_apply_assembled(ctx, params, storage, x, y) &
          bind(C, name="partile_mass_apply_assembled")
       import :: c_int, c_ptr, partile_mass_params_t
       type(c_ptr), value :: ctx
       type(partile_mass_params_t), intent(in) :: params
       type(c_ptr), value :: storage, x, y
     end function partile_mass_apply_assembled

     integer(c_int) function partile_pairs(ctx, grid, params, n, pos, cell_offsets, force, scalar, &
          total, bad) bind(C, name="partile_pairs")
       import :: c_int, c_ptr, c_size_t, partile_grid_t, partile_pair_params_t, partile_vectors_t
       type(c_ptr), value :: ctx
       type(partile_grid_t), intent(in) :: grid
       type(partile_pair_params_t), intent(in) :: params
       integer(c_size_t), value :: n
       type(partile_vectors_t), intent(in) :: pos
       type(c_ptr), value :: cell_offsets, force, scalar, total, bad
     end function partile_pairs

     !> times: c_null_ptr or a real(c_double) array of PARTILE_PAIRS_STRATEGIES.
     integer(c_int) function partile_pairs_select(ctx, grid, params, n, pos, cell_offsets, force, &
          scalar, strategy, times) bind(C, name="partile_pairs_select")
       import :: c_int, c_ptr, c_size_t, partile_grid_t, partile_pair_params_t, partile_vectors_t
       type(c_ptr), value :: ctx
       type(partile_grid_t), intent(in) :: grid
       type(partile_pair_params_t), intent(in) :: params
       integer(c_size_t), value :: n
       type(partile_vectors_t), intent(in) :: pos
       type(c_ptr), value :: cell_offsets, force, scalar
       integer(c_int), intent(out) :: strategy
       type(c_ptr), value :: times
     end function partile_pairs_select

     !> Steps between re-sorts from the velocities (include/partile/sort.h): n_sort =
     !> floor(alpha * min over axes of spacing / (95th percentile of |v|) / dt), alpha in [0.25, 0.5].
     integer(c_int) function partile_sort_interval(ctx, grid, n, velocities, alpha, dt, advice) &
          bind(C, name="partile_sort_interval")
       import :: c_int, c_ptr, c_size_t, c_double, partile_grid_t, partile_vectors_t, &
            partile_sort_advice_t
       type(c_ptr), value :: ctx
       type(partile_grid_t), intent(in) :: grid
       integer(c_size_t), value :: n
       type(partile_vectors_t), intent(in) :: velocities
       real(c_double), value :: alpha, dt
       type(partile_sort_advice_t), intent(out) :: advice
     end function partile_sort_interval

     !> Bytes of one element of a PARTILE_DTYPE_* (8, 4, 4, 8), or 0 for an unknown type.
     integer(c_size_t) function partile_dtype_size(type) bind(C, name="partile_dtype_size")
       import :: c_int, c_size_t
       integer(c_int), value :: type
     end function partile_dtype_size

     type(c_ptr) function c_version() bind(C, name="partile_version")
       import :: c_ptr
     end function c_version

     !> Number of backends partile knows, compiled or not (query them 0 .. count - 1).
     integer(c_int) function partile_backend_count() bind(C, name="partile_backend_count")
       import :: c_int
     end function partile_backend_count

     integer(c_int) function c_backend_query(index, info) bind(C, name="partile_backend_query")
       import :: c_int, c_backend_info_t
       integer(c_int), value :: index
       type(c_backend_info_t), intent(out) :: info
     end function c_backend_query

     type(c_ptr) function c_context_backend(ctx) bind(C, name="partile_context_backend")
       import :: c_ptr
       type(c_ptr), value :: ctx
     end function c_context_backend

     type(c_ptr) function c_context_device(ctx) bind(C, name="partile_context_device")
       import :: c_ptr
       type(c_ptr), value :: ctx
     end function c_context_device

     type(c_ptr) function c_pairs_strategy_name(strategy) bind(C, name="partile_pairs_strategy_name")
       import :: c_int, c_ptr
       integer(c_int), value :: strategy
     end function c_pairs_strategy_name

     integer(c_int) function c_pairs_strategy_from_name(name, strategy) &
          bind(C, name="partile_pairs_strategy_from_name")
       import :: c_int, c_char
       character(kind=c_char), intent(in) :: name(*)
       integer(c_int), intent(out) :: strategy
     end function c_pairs_strategy_from_name

     type(c_ptr) function c_status_string(status) bind(C, name="partile_status_string")
       import :: c_int, c_ptr
       integer(c_int), value :: status
     end function c_status_string

     type(c_ptr) function c_last_error_detail() bind(C, name="partile_last_error_detail")
       import :: c_ptr
     end function c_last_error_detail

     integer(c_size_t) function c_strlen(s) bind(C, name="strlen")
       import :: c_size_t, c_ptr
       type(c_ptr), value :: s
     end function c_strlen
  end interface

contains

  !> Create a context for backend ("reference", "cuda", "hip", "auto").
  integer(c_int) function partile_context_create(backend, device, ctx)
    character(len=*), intent(in) :: backend
    integer, intent(in) :: device
    type(c_ptr), intent(out) :: ctx
    partile_context_create = c_context_create(trim(backend) // c_null_char, int(device, c_int), ctx)
  end function partile_context_create

  !> Backend index (0-based, below partile_backend_count()) into info, strings copied.
  integer(c_int) function partile_backend_query(index, info)
    integer, intent(in) :: index
    type(partile_backend_t), intent(out) :: info
    type(c_backend_info_t) :: c_info
    partile_backend_query = c_backend_query(int(index, c_int), c_info)
    info%name = from_c(c_info%name)
    info%compiled = c_info%compiled
    info%device_count = c_info%device_count
    info%targets = from_c(c_info%targets)
    info%note = from_c(c_info%note)
  end function partile_backend_query

  !> The library's version, e.g. "0.1.0".
  function partile_version() result(version)
    character(len=:), allocatable :: version
    version = from_c(c_version())
  end function partile_version

  !> The context's backend ("reference", "cuda", "hip"); "(null)" for a null context.
  function partile_context_backend(ctx) result(name)
    type(c_ptr), intent(in) :: ctx
    character(len=:), allocatable :: name
    name = from_c(c_context_backend(ctx))
  end function partile_context_backend

  !> A description of the context's device, e.g. "NVIDIA H200 (sm_90, 132 SMs)".
  function partile_context_device(ctx) result(name)
    type(c_ptr), intent(in) :: ctx
    character(len=:), allocatable :: name
    name = from_c(c_context_device(ctx))
  end function partile_context_device

  !> The name of a pair strategy (0 auto .. 4 x-pencil-reg); "" if there is none.
  function partile_pairs_strategy_name(strategy) result(name)
    integer, intent(in) :: strategy
    character(len=:), allocatable :: name
    name = from_c(c_pairs_strategy_name(int(strategy, c_int)))
  end function partile_pairs_strategy_name

  !> The strategy of that name (trailing blanks ignored), or PARTILE_ERROR_INVALID_ARGUMENT.
  integer(c_int) function partile_pairs_strategy_from_name(name, strategy)
    character(len=*), intent(in) :: name
    integer(c_int), intent(out) :: strategy
    partile_pairs_strategy_from_name = c_pairs_strategy_from_name(trim(name) // c_null_char, strategy)
  end function partile_pairs_strategy_from_name

  !> The status's fixed message, e.g. "invalid argument".
  function partile_status_string(status) result(msg)
    integer(c_int), intent(in) :: status
    character(len=:), allocatable :: msg
    msg = from_c(c_status_string(status))
  end function partile_status_string

  !> This thread's detail of the last failed call ("" if none): what was wrong and where.
  function partile_last_error_detail() result(detail)
    character(len=:), allocatable :: detail
    detail = from_c(c_last_error_detail())
  end function partile_last_error_detail

  !> "message: detail" for a status, as a Fortran string.
  function partile_message(status) result(msg)
    integer(c_int), intent(in) :: status
    character(len=:), allocatable :: msg
    msg = from_c(c_status_string(status))
    if (len(from_c(c_last_error_detail())) > 0) msg = msg // ": " // from_c(c_last_error_detail())
  end function partile_message

  !> A C string as a Fortran string; "" for a null pointer.
  function from_c(p) result(s)
    type(c_ptr), intent(in) :: p
    character(len=:), allocatable :: s
    character(kind=c_char), pointer :: chars(:)
    integer :: i, n
    if (.not. c_associated(p)) then
       s = ""
       return
    end if
    n = int(c_strlen(p))
    call c_f_pointer(p, chars, [n])
    allocate (character(len=n) :: s)
    do i = 1, n
       s(i:i) = chars(i)
    end do
  end function from_c
end module partile
