/* Argument errors of the tensorgl commands: every message names the command, the bad value and
 * what is valid, with the closest valid name where one is near. Each returns 2, the usage exit
 * code, so a parser can `return tgl_cli_...(...)`. */
#ifndef TGL_CLI_ARGS_H
#define TGL_CLI_ARGS_H

#include <stddef.h>

/* `value` (len bytes: an item of a comma-separated list) is none of the n `valid` names:
 * "tensorgl CMD: unknown WHAT 'value' (did you mean NAME?); valid: a, b, ..." on stderr. */
int tgl_cli_bad_choice(const char *cmd, const char *what, const char *value, size_t len, const char *const *valid,
                       size_t n);

/* An option the command does not take: "tensorgl CMD: unknown option 'opt'; usage: USAGE". */
int tgl_cli_bad_option(const char *cmd, const char *option, const char *usage);

/* An option given without its value, or with one it does not take ("EXPECT" says what it takes). */
int tgl_cli_missing_value(const char *cmd, const char *option);
int tgl_cli_bad_value(const char *cmd, const char *option, const char *value, const char *expect);

/* The valid name closest to value (len bytes), or NULL when none is near: one that contains it
 * or is contained in it, else one within a third of its length in edits. */
const char *tgl_cli_suggest(const char *value, size_t len, const char *const *valid, size_t n);

#endif
