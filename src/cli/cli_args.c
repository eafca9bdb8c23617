/* Argument errors of the tensorgl commands (cli_args.h). */
#include "cli_args.h"

#include <stdio.h>
#include <string.h>

#define NAME_MAX_LEN 63 /* longer names are never suggested by edits */

/* Levenshtein distance between a (la bytes) and b; (size_t)-1 past NAME_MAX_LEN. */
static size_t edits(const char *a, size_t la, const char *b)
{
    size_t lb = strlen(b), row[NAME_MAX_LEN + 1];
    if (la > NAME_MAX_LEN || lb > NAME_MAX_LEN)
        return (size_t)-1;
    for (size_t j = 0; j <= lb; j++)
        row[j] = j;
    for (size_t i = 1; i <= la; i++) {
        size_t diag = row[0];
        row[0] = i;
        for (size_t j = 1; j <= lb; j++) {
            size_t up = row[j], best = diag + (a[i - 1] != b[j - 1]);
            if (up + 1 < best)
                best = up + 1;
            if (row[j - 1] + 1 < best)
                best = row[j - 1] + 1;
            diag = up;
            row[j] = best;
        }
    }
    return row[lb];
}

/* Whether the hay_len bytes at hay hold the needle_len bytes at needle (a non-empty needle). */
static int holds(const char *hay, size_t hay_len, const char *needle, size_t needle_len)
{
    for (size_t k = 0; needle_len && k + needle_len <= hay_len; k++)
        if (!memcmp(hay + k, needle, needle_len))
            return 1;
    return 0;
}

const char *tgl_cli_suggest(const char *value, size_t len, const char *const *valid, size_t n)
{
    if (len < 2)
        return NULL; /* one letter is near everything */
    for (size_t i = 0; i < n; i++) {
        size_t lv = strlen(valid[i]);
        if (holds(valid[i], lv, value, len) || (lv >= 2 && holds(value, len, valid[i], lv)))
            return valid[i];
    }
    const char *best = NULL;
    size_t best_d = len / 3 + 1; /* more edits than a third of the name: not a near miss */
    for (size_t i = 0; i < n; i++) {
        size_t d = edits(value, len, valid[i]);
        if (d < best_d) {
            best_d = d;
            best = valid[i];
        }
    }
    return best;
}

int tgl_cli_bad_choice(const char *cmd, const char *what, const char *value, size_t len, const char *const *valid,
                       size_t n)
{
    const char *near = tgl_cli_suggest(value, len, valid, n);
    fprintf(stderr, "tensorgl %s: unknown %s '%.*s'", cmd, what, (int)len, value);
    if (near)
        fprintf(stderr, " (did you mean %s?)", near);
    fprintf(stderr, "; valid: ");
    for (size_t i = 0; i < n; i++)
        fprintf(stderr, "%s%s", valid[i], i + 1 < n ? ", " : "\n");
    return 2;
}

int tgl_cli_bad_option(const char *cmd, const char *option, const char *usage)
{
    fprintf(stderr, "tensorgl %s: unknown option '%s'; usage: %s\n", cmd, option, usage);
    return 2;
}

int tgl_cli_missing_value(const char *cmd, const char *option)
{
    fprintf(stderr, "tensorgl %s: %s needs a value\n", cmd, option);
    return 2;
}

int tgl_cli_bad_value(const char *cmd, const char *option, const char *value, const char *expect)
{
    fprintf(stderr, "tensorgl %s: %s '%s': %s\n", cmd, option, value, expect);
    return 2;
}
