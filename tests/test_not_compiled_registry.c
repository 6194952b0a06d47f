/* Nothing: the reference-only library defines no GPU backend (registry.c
 * supplies the "not compiled" placeholders). */
typedef int partile_reference_only_unit;
