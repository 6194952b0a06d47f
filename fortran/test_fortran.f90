! A Fortran caller: sorts particles by cell, reorders them, deposits a
! charge with CIC and gathers it back, on the reference backend; checks the
! results (stable sort; conservation; a constant field gathered exactly).
program test_fortran
  use, intrinsic :: iso_c_binding
  use partile
  implicit none
  integer, parameter :: n = 1000
  type(c_ptr) :: ctx
  type(partile_grid_t), target :: grid
  type(partile_vectors_t) :: pos
  type(partile_transfer_t) :: t
  type(partile_array_t) :: arrays(3)
  real(c_double), target :: x(n), y(n), q(n), field(10 * 10), back(n), by_cell(64)
  integer(c_int64_t), target :: offsets(65), perm(n), cell(n), bad
  integer(c_int64_t) :: ncells, points(3), total
  integer(c_int) :: st
  integer :: i, c
  real(c_double) :: r

  st = partile_context_create("reference", 0, ctx)
  call check(st, "context")
  grid%dim = 2
  grid%cells(1:2) = [8_c_int64_t, 8_c_int64_t]
  grid%lower(1:2) = [0d0, 0d0]
  grid%spacing(1:2) = [0.125d0, 0.125d0]
  grid%periodic(1:2) = [1, 1]
  call check(partile_grid_cell_count(grid, ncells), "cells")
  if (ncells /= 64) error stop "wrong cell count"
  do i = 1, n
     call random_number(r); x(i) = r
     call random_number(r); y(i) = r
     q(i) = 1d0
  end do
  pos%type = PARTILE_DTYPE_FLOAT64
  pos%axis(1) = c_loc(x)
  pos%axis(2) = c_loc(y)
  bad = -1
  st = partile_sort(ctx, grid, int(n, c_size_t), pos, c_loc(offsets), c_loc(perm), c_loc(cell), &
       c_loc(bad))
  call check(st, "sort")
  if (offsets(1) /= 0 .or. offsets(65) /= n) error stop "offsets"
  do c = 1, 64
     do i = int(offsets(c)) + 2, int(offsets(c + 1))
        if (perm(i) <= perm(i - 1)) error stop "not stable"
        if (cell(i) /= c - 1) error stop "sorted cell"
     end do
  end do
  arrays(1) = partile_array_t(c_loc(x), PARTILE_DTYPE_FLOAT64)
  arrays(2) = partile_array_t(c_loc(y), PARTILE_DTYPE_FLOAT64)
  arrays(3) = partile_array_t(c_loc(q), PARTILE_DTYPE_FLOAT64)
  call check(partile_permute(ctx, int(n, c_size_t), c_loc(perm), 3_c_int, arrays, c_null_ptr, &
       0_c_size_t), "permute")
  call check(partile_field_shape(grid, PARTILE_CENTERING_NODE, points, total), "field shape")
  if (total /= 64) error stop "points"
  field = 0
  t = partile_transfer_t(c_loc(grid), PARTILE_SHAPE_CIC, PARTILE_CENTERING_NODE, 1_c_int, c_null_ptr, &
       PARTILE_ORDER_BY_POINT)
  call check(partile_deposit(ctx, t, int(n, c_size_t), pos, c_loc(q), c_loc(offsets), &
       c_loc(field), c_null_ptr), "deposit")
  if (abs(sum(field(1:64)) - n) > 1d-9) error stop "charge not conserved"
  by_cell = 0
  t%order = PARTILE_ORDER_BY_CELL
  call check(partile_deposit(ctx, t, int(n, c_size_t), pos, c_loc(q), c_loc(offsets), &
       c_loc(by_cell), c_null_ptr), "deposit by cell")
  if (maxval(abs(by_cell - field(1:64))) > 1d-12) error stop "by-cell deposit differs"
  t%order = PARTILE_ORDER_BY_POINT
  field(1:64) = 2.5d0
  call check(partile_gather(ctx, t, int(n, c_size_t), pos, c_loc(field), c_loc(back), c_null_ptr), &
       "gather")
  if (maxval(abs(back - 2.5d0)) > 1d-14) error stop "constant field not gathered"
  ! the scalar mass matrix: y = M·1 equals the deposit of σq (partition of unity),
  ! both from the assembled storage and matrix-free; CSR export well formed
  block
    type(partile_mass_params_t) :: mp
    type(partile_mass_layout_t) :: layout
    real(c_double), allocatable, target :: storage(:), ones(:), y1(:), y2(:), dat(:)
    integer(c_int64_t), allocatable, target :: indptr(:), indices(:)
    integer(c_int64_t) :: nnz
    mp = partile_mass_params_t(c_loc(grid), PARTILE_SHAPE_CIC, PARTILE_MASS_SCALAR, 2d0, 0, &
         c_null_ptr, 0d0)
    call check(partile_mass_layout(grid, PARTILE_SHAPE_CIC, PARTILE_MASS_SCALAR, layout), "layout")
    if (layout%offsets /= 5 .or. layout%points /= 64) error stop "mass layout"
    allocate (storage(layout%entries), ones(64), y1(64), y2(64))
    ones = 1
    call check(partile_mass_assemble(ctx, mp, int(n, c_size_t), pos, c_loc(offsets), c_loc(q), &
         c_null_ptr, c_loc(storage), c_null_ptr), "assemble")
    call check(partile_mass_apply_assembled(ctx, mp, c_loc(storage), c_loc(ones), c_loc(y1)), "apply")
    call check(partile_mass_apply_matfree(ctx, mp, int(n, c_size_t), pos, c_loc(offsets), c_loc(q), &
         c_null_ptr, c_loc(ones), c_loc(y2), c_null_ptr), "matrix-free apply")
    field = 0
    call check(partile_deposit(ctx, t, int(n, c_size_t), pos, c_loc(q), c_loc(offsets), &
         c_loc(field), c_null_ptr), "deposit q")
    if (maxval(abs(y1 - 2d0 * field(1:64))) > 1d-12) error stop "partition of unity (assembled)"
    if (maxval(abs(y2 - y1)) > 1d-12) error stop "matrix-free differs"
    ! the deposit half by cell (apply.h): the same y to rounding
    block
      real(c_double), target :: y3(64)
      mp%order = PARTILE_ORDER_BY_CELL
      call check(partile_mass_apply_matfree(ctx, mp, int(n, c_size_t), pos, c_loc(offsets), &
           c_loc(q), c_null_ptr, c_loc(ones), c_loc(y3), c_null_ptr), "matrix-free apply by cell")
      if (maxval(abs(y3 - y2)) > 1d-12) error stop "matrix-free by cell differs"
      mp%order = 2 ! reaches the C field: refused
      if (partile_mass_apply_matfree(ctx, mp, int(n, c_size_t), pos, c_loc(offsets), c_loc(q), &
           c_null_ptr, c_loc(ones), c_loc(y3), c_null_ptr) /= PARTILE_ERROR_INVALID_ARGUMENT) &
           error stop "matrix-free order 2"
      mp%order = PARTILE_ORDER_BY_POINT
    end block
    call check(partile_mass_export_count(grid, PARTILE_SHAPE_CIC, nnz), "nnz")
    if (nnz /= 64 * 9) error stop "nnz"
    allocate (indptr(65), indices(nnz), dat(nnz))
    call check(partile_mass_export(grid, PARTILE_SHAPE_CIC, PARTILE_MASS_SCALAR, c_loc(storage), &
         c_loc(indptr), c_loc(indices), c_loc(dat)), "export")
    if (indptr(65) /= nnz .or. abs(sum(dat) - 2d0 * sum(q)) > 1d-9) error stop "export"
    ! the options of the GPU kernels: the reference answers relaxed mode with its bitwise result
    block
      real(c_double), allocatable, target :: relaxed(:)
      allocate (relaxed(layout%entries))
      mp%mode = PARTILE_MASS_RELAXED
      mp%algorithm = PARTILE_MASS_FMA_PER_CELL
      call check(partile_mass_assemble(ctx, mp, int(n, c_size_t), pos, c_loc(offsets), c_loc(q), &
           c_null_ptr, c_loc(relaxed), c_null_ptr), "assemble (relaxed)")
      if (any(transfer(relaxed, 1_c_int64_t, size(relaxed)) /= &
           transfer(storage, 1_c_int64_t, size(storage)))) error stop "relaxed mode on the reference"
      mp%mode = 7
      if (partile_mass_assemble(ctx, mp, int(n, c_size_t), pos, c_loc(offsets), c_loc(q), &
           c_null_ptr, c_loc(relaxed), c_null_ptr) /= PARTILE_ERROR_INVALID_ARGUMENT) error stop "mode 7"
    end block
    ! FP32 matrix-free: y = M·1 within FP32 rounding of the FP64 result
    block
      real(c_float), target :: qf(n), onesf(64), yf(64)
      qf = real(q, c_float)
      onesf = 1
      mp%mode = PARTILE_MASS_BITWISE
      call check(partile_mass_apply_matfree_f32(ctx, mp, int(n, c_size_t), pos, c_loc(offsets), &
           c_loc(qf), c_null_ptr, c_loc(onesf), c_loc(yf), c_null_ptr), "matrix-free apply (fp32)")
      if (maxval(abs(yf - y2)) > 1d-5 * maxval(abs(y2))) error stop "fp32 apply"
    end block
  end block
  ! binning agrees with the sort's cells; memset and synchronize
  block
    integer(c_int64_t), target :: bins(n)
    call check(partile_bin(ctx, grid, int(n, c_size_t), pos, c_loc(bins), c_null_ptr), "bin")
    do c = 1, 64
       do i = int(offsets(c)) + 1, int(offsets(c + 1))
          if (bins(i) /= c - 1) error stop "bin"
       end do
    end do
    call check(partile_memset(ctx, c_loc(bins), 0_c_int, int(8 * n, c_size_t)), "memset")
    if (any(bins /= 0)) error stop "memset"
    call check(partile_context_synchronize(ctx), "synchronize")
  end block
  ! SPH density of the sorted particles: every particle has at least its own m W(0)
  block
    type(partile_pair_params_t) :: pp
    real(c_double), target :: rho(n), tot
    pp = partile_pair_params_t(PARTILE_PAIRS_SPH_DENSITY, 0.1d0, 0d0, 0d0, 0, 0.05d0, 1d0)
    call check(partile_pairs(ctx, grid, pp, int(n, c_size_t), pos, c_loc(offsets), c_null_ptr, &
         c_loc(rho), c_loc(tot), c_null_ptr), "pairs")
    if (minval(rho) < 10d0 / (7d0 * 3.14159265358979d0 * 0.05d0**2) - 1d-9) error stop "self density"
    if (abs(tot - sum(rho)) > 1d-9 * tot) error stop "total"
    ! the strategy selector answers with a strategy and the same densities
    block
      real(c_double), target :: rho2(n), times(PARTILE_PAIRS_STRATEGIES)
      integer(c_int) :: strategy
      call check(partile_pairs_select(ctx, grid, pp, int(n, c_size_t), pos, c_loc(offsets), &
           c_null_ptr, c_loc(rho2), strategy, c_loc(times)), "pairs select")
      if (strategy < 1 .or. strategy >= PARTILE_PAIRS_STRATEGIES) error stop "strategy"
      if (any(transfer(rho2, 1_c_int64_t, n) /= transfer(rho, 1_c_int64_t, n))) error stop "select results"
    end block
  end block
  ! the sort-interval advisor: |vx| = i / 100 (95th percentile 0.95), vy = 0.5 for all;
  ! n_sort = floor(0.5 * min(0.125 / 0.95, 0.125 / 0.5) / 0.01) = floor(6.578...) = 6
  block
    real(c_double), target :: vx(100), vy(100)
    type(partile_vectors_t) :: vel
    type(partile_sort_advice_t) :: advice
    do i = 1, 100
       vx(i) = merge(-1d0, 1d0, mod(i, 2) == 0) * i / 100d0
    end do
    vy = 0.5d0
    vel%type = PARTILE_DTYPE_FLOAT64
    vel%axis(1) = c_loc(vx)
    vel%axis(2) = c_loc(vy)
    call check(partile_sort_interval(ctx, grid, 100_c_size_t, vel, 0.5d0, 0.01d0, advice), &
         "sort interval")
    if (advice%n_sort /= 6) error stop "sort interval: n_sort"
    if (any(transfer(advice%u_char, 1_c_int64_t, 3) /= transfer([0.95d0, 0.5d0, 0d0], 1_c_int64_t, 3))) &
         error stop "sort interval: percentiles"
    if (partile_sort_interval(ctx, grid, 100_c_size_t, vel, 0.6d0, 0.01d0, advice) /= &
         PARTILE_ERROR_INVALID_ARGUMENT) error stop "sort interval: alpha 0.6"
  end block
  ! what the library knows of its backends, the context's own, and the strategies' names
  block
    type(partile_backend_t) :: info
    character(len=:), allocatable :: version
    integer :: b, found
    integer(c_int) :: strategy
    found = 0
    do b = 0, partile_backend_count() - 1
       call check(partile_backend_query(b, info), "backend query")
       if (info%name == "reference") then
          found = found + 1
          if (info%compiled /= 1 .or. info%device_count /= 1) error stop "reference backend info"
       end if
       if (len(info%name) == 0 .or. (info%compiled /= 0 .and. info%compiled /= 1)) error stop "backend info"
    end do
    if (found /= 1) error stop "reference backend not listed"
    if (partile_backend_query(partile_backend_count(), info) >= 0) error stop "backend index past the end"
    if (partile_context_backend(ctx) /= "reference") error stop "context backend"
    ! the reference backend has no stream: NULL is its only one
    block
      type(c_ptr) :: stream
      call check(partile_context_get_stream(ctx, stream), "get stream")
      if (c_associated(stream)) error stop "a stream on the reference"
      call check(partile_context_set_stream(ctx, c_null_ptr), "set stream")
      st = partile_context_set_stream(ctx, c_loc(x))
      if (st /= PARTILE_ERROR_UNSUPPORTED) error stop "set a stream on the reference"
    end block
    ! each call on its own line: gfortran may skip an impure call inside .or.
    version = partile_version()
    if (len(version) < 5 .or. index(version, ".") == 0) error stop "version"
    if (partile_dtype_size(PARTILE_DTYPE_FLOAT32) /= 4) error stop "dtype size (float32)"
    if (partile_dtype_size(PARTILE_DTYPE_INT64) /= 8) error stop "dtype size (int64)"
    if (partile_dtype_size(9_c_int) /= 0) error stop "dtype size (unknown)"
    if (len(partile_context_device(ctx)) == 0) error stop "context device"
    do b = 0, PARTILE_PAIRS_STRATEGIES - 1
       call check(partile_pairs_strategy_from_name(partile_pairs_strategy_name(b), strategy), &
            "strategy name")
       if (strategy /= b) error stop "strategy names do not round-trip"
    end do
    if (partile_pairs_strategy_name(2) /= "all-in-sm") error stop "strategy 2's name"
    if (partile_pairs_strategy_name(PARTILE_PAIRS_STRATEGIES) /= "") error stop "strategy past the end"
    if (partile_pairs_strategy_from_name("x-pencil  ", strategy) /= PARTILE_SUCCESS .or. strategy /= 3) &
         error stop "trailing blanks"
    if (partile_pairs_strategy_from_name("fastest", strategy) /= PARTILE_ERROR_INVALID_ARGUMENT) &
         error stop "unknown strategy name"
  end block
  ! an error comes back as a status and a message, nothing written
  x(7) = transfer(int(z'7FF8000000000000', c_int64_t), 1d0)
  st = partile_sort(ctx, grid, int(n, c_size_t), pos, c_loc(offsets), c_loc(perm), c_null_ptr, c_loc(bad))
  if (st /= PARTILE_ERROR_NOT_FINITE .or. bad /= 6) error stop "NaN not reported"
  if (index(partile_message(st), "particle 6") == 0) error stop "message"
  if (index(partile_last_error_detail(), "particle 6") == 0) error stop "detail"
  if (partile_status_string(st) == "" .or. index(partile_message(st), partile_status_string(st)) /= 1) &
       error stop "status string"
  ! a later success forgets the detail (every call that returns a status)
  block
    integer(c_int64_t) :: cells
    if (partile_grid_cell_count(grid, cells) /= PARTILE_SUCCESS) error stop "cell count"
  end block
  if (partile_last_error_detail() /= "") error stop "stale detail"
  call check(partile_context_destroy(ctx), "destroy")
  print '(a)', "fortran: ok"
contains
  subroutine check(status, what)
    integer(c_int), intent(in) :: status
    character(len=*), intent(in) :: what
    if (status /= PARTILE_SUCCESS) then
       print '(a)', what // ": " // partile_message(status)
       error stop 1
    end if
  end subroutine check
end program test_fortran
