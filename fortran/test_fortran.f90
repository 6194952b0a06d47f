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
  real(c_double), target :: x(n), y(n), q(n), field(10 * 10), back(n)
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
  if (ncells /= 64) stop "wrong cell count"
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
  if (offsets(1) /= 0 .or. offsets(65) /= n) stop "offsets"
  do c = 1, 64
     do i = int(offsets(c)) + 2, int(offsets(c + 1))
        if (perm(i) <= perm(i - 1)) stop "not stable"
        if (cell(i) /= c - 1) stop "sorted cell"
     end do
  end do
  arrays(1) = partile_array_t(c_loc(x), PARTILE_DTYPE_FLOAT64)
  arrays(2) = partile_array_t(c_loc(y), PARTILE_DTYPE_FLOAT64)
  arrays(3) = partile_array_t(c_loc(q), PARTILE_DTYPE_FLOAT64)
  call check(partile_permute(ctx, int(n, c_size_t), c_loc(perm), 3_c_int, arrays, c_null_ptr, &
       0_c_size_t), "permute")
  call check(partile_field_shape(grid, PARTILE_CENTERING_NODE, points, total), "field shape")
  if (total /= 64) stop "points"
  field = 0
  t = partile_transfer_t(c_loc(grid), PARTILE_SHAPE_CIC, PARTILE_CENTERING_NODE, 1_c_int, c_null_ptr)
  call check(partile_deposit(ctx, t, int(n, c_size_t), pos, c_loc(q), c_loc(offsets), &
       c_loc(field), c_null_ptr), "deposit")
  if (abs(sum(field(1:64)) - n) > 1d-9) stop "charge not conserved"
  field(1:64) = 2.5d0
  call check(partile_gather(ctx, t, int(n, c_size_t), pos, c_loc(field), c_loc(back), c_null_ptr), &
       "gather")
  if (maxval(abs(back - 2.5d0)) > 1d-14) stop "constant field not gathered"
  ! an error comes back as a status and a message, nothing written
  x(7) = transfer(int(z'7FF8000000000000', c_int64_t), 1d0)
  st = partile_sort(ctx, grid, int(n, c_size_t), pos, c_loc(offsets), c_loc(perm), c_null_ptr, c_loc(bad))
  if (st /= PARTILE_ERROR_NOT_FINITE .or. bad /= 6) stop "NaN not reported"
  if (index(partile_message(st), "particle 6") == 0) stop "message"
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
